"""The stock baseline the speed benchmarks time against: ``fairseq-generate`` with the plugin's
``document_translation`` task (English to French, the binarized test split), and the time it
reports itself ("Translated N sentences (T tokens) in Xs": model loading excluded)."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Optional

from bench import harness

USER_DIR = str(harness.REPO / "contextual_mt")
TRANSLATED = re.compile(r"Translated ([\d,]+) sentences \(([\d,]+) tokens\) in ([\d.]+)s")


@dataclass(frozen=True)
class Generated:
    sentences: int
    tokens: int
    seconds: float  # fairseq's own figure


def generate(
    data: str,
    checkpoint: str,
    *options: str,
    target_context: int = 0,
    source_context: Optional[int] = None,
    cpu: bool = True,
) -> Generated:
    """``fairseq-generate DATA --path CHECKPOINT ... OPTIONS`` (e.g. ``--score-reference``,
    ``--beam 5``); exits with fairseq's error when it fails."""
    cmd = [sys.executable, "-m", "fairseq_cli.generate", str(data), "--user-dir", USER_DIR]
    cmd += ["--task", "document_translation", "-s", "en", "-t", "fr", "--gen-subset", "test"]
    if source_context is not None:
        cmd += ["--source-context-size", str(source_context)]
    cmd += ["--target-context-size", str(target_context), "--path", str(checkpoint), *options]
    proc = subprocess.run(cmd + (["--cpu"] if cpu else []), capture_output=True, text=True)
    m = TRANSLATED.search(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not m:
        raise SystemExit(proc.stderr[-3000:])
    number = [int(g.replace(",", "")) for g in m.groups()[:2]]
    return Generated(number[0], number[1], float(m.group(3)))
