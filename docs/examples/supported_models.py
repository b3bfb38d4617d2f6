"""The "Supported models" page (docs/reference/supported-models.md), made from runs of the model zoo.

Runs the zoo's tests (tests/contextual_mt/hf/test_zoo.py, ``-m zoo``) under each Python given (one
environment per transformers major: ``.venv``, transformers 4.57; ``.venv-tf5``, built by ``make
test-compat``), each passing test recording its cell (family, check, tolerance asserted) through
CONTEXTUAL_MT_ZOO_REPORT; writes the committed record docs/examples/supported_models.json, then
rewrites the pages (docs/examples/refresh.py renders the table from the record).

    python docs/examples/supported_models.py --python .venv/bin/python --python .venv-tf5/bin/python
    python docs/examples/supported_models.py --report 4.jsonl --report 5.jsonl   # runs made already
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RECORD = os.path.join(HERE, "supported_models.json")
TESTS = "tests/contextual_mt/hf/test_zoo.py"

# the columns, in order: the check a test records -> its heading
CHECKS = {
    "cxmi": "cxmi = per example",
    "batch invariance": "cxmi batch 1 = 8 = split",
    "eager = SDPA": "eager = SDPA",
    "template ids": "prompt ids = template",
    "end tokens": "stops at every end token",
    "answer cut": "answer cut whole",
    "translate (batch, padding)": "translate (batch 1 = 8 = split, padding sides)",
    "translate --unit document": "translate --unit document",
    "contrastive": "contrastive = per example",
    "attribute (saliency)": "attribute saliency",
    "attribute (attention)": "attribute attention",
    "attention: eager path": "attention: eager path, refusal in one line",
    "attribute checkpointed": "attribute checkpointed = whole graph",
    "align": "align --hf-model",
    "bfloat16": "bfloat16 P-CXMI ≈ float32 (nats/token)",
}
# the checks of the runs recorded before the bfloat16, checkpointing, eager-path and outside-the-zoo
# tests existed (a run without a "checks" list): their cells for the later checks were never run
FIRST_CHECKS = [c for c in CHECKS if c not in ("attention: eager path", "attribute checkpointed", "bfloat16")]

# families outside the zoo (tests/hf_models.py, OUTSIDE): the backend knows nothing of them
OUTSIDE = {
    "opt": "OPT",
    "bloom": "BLOOM",
    "gpt_neox": "GPT-NeoX (Pythia)",
    "falcon": "Falcon",
    "stablelm": "StableLM",
    "phi": "Phi-1/Phi-2",
    "cohere": "Cohere (Command-R)",
    "granite": "Granite",
    "starcoder2": "StarCoder2",
    "gptj": "GPT-J",
    "bart": "BART",
    "mt5": "mT5",
    "pegasus": "Pegasus",
    "fsmt": "FSMT (fairseq WMT19)",
    "prophetnet": "ProphetNet",
}
# why an outside family is refused (the refusal's own words, asserted by the test)
REFUSALS = {
    "fsmt": "every command: its tokenizer has separate source and target vocabularies and encodes target text "
    "with the source one",
    "prophetnet": "scoring commands (cxmi, contrastive, attribute, align): its scores change when its rows are "
    "padded (its n-gram decoder's target positions see the padding after them); translate works",
}
# family -> (the name on the page, what the zoo's model is)
FAMILIES = {
    "marian": ("Marian (opus-mt)", "seq2seq"),
    "mbart50": ("mBART-50", "seq2seq, language codes"),
    "m2m100": ("M2M100", "seq2seq, language codes"),
    "nllb": ("NLLB-200", "seq2seq (M2M100), language codes"),
    "madlad": ("MADLAD-400 (T5)", "seq2seq, <2xx> target token"),
    "gpt2": ("GPT-2", "decoder-only, plain prompt"),
    "llama": ("Llama-3 (Tower)", "decoder-only, 3 end tokens"),
    "mistral": ("Mistral", "decoder-only, sliding window"),
    "qwen2": ("Qwen2 / Qwen2.5", "decoder-only"),
    "qwen3": ("Qwen3", "decoder-only"),
    "gemma2": ("Gemma-2", "decoder-only, soft-capping, no system role"),
    "gemma3": ("Gemma-3 (text)", "decoder-only, sliding/global layers"),
    "phi3": ("Phi-3", "decoder-only"),
    "olmo2": ("OLMo-2", "decoder-only"),
}
NOT_APPLICABLE = {
    ("template ids", "seq2seq"),
    ("end tokens", "seq2seq"),
    ("template ids", "gpt2"),
    ("end tokens", "gpt2"),
}


def run_zoo(python: str, workers: str) -> Dict:
    """One run of the zoo's tests under ``python``: the cells that passed, the tests that failed."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "cells.jsonl")
        env = {**os.environ, "CONTEXTUAL_MT_ZOO_REPORT": report, "PYTHONPATH": ROOT}
        start = time.time()
        proc = subprocess.run(
            [python, "-m", "pytest", "-q", "-m", "zoo", "-n", workers, "-rf", "-p", "no:cacheprovider", TESTS],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = round(time.time() - start)
        cells = []
        if os.path.exists(report):
            with open(report, encoding="utf-8") as f:
                cells = [json.loads(line) for line in f]
    failed = sorted(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("FAILED "))
    version = subprocess.run(
        [python, "-c", "import transformers; print(transformers.__version__)"], capture_output=True, text=True
    ).stdout.strip()
    return {
        "transformers": version,
        "seconds": seconds,
        "exit": proc.returncode,
        "failed": failed,
        "cells": {f"{c['family']}|{c['check']}": c["tolerance"] for c in cells},
        "checks": [*CHECKS, "outside the zoo"],
    }


def from_report(path: str) -> Dict:
    """A run recorded by ``CONTEXTUAL_MT_ZOO_REPORT=path pytest -m zoo tests/contextual_mt/hf/test_zoo.py``
    made elsewhere (its failures are the cells it lacks)."""
    with open(path, encoding="utf-8") as f:
        cells = [json.loads(line) for line in f if line.strip()]
    versions = sorted({c["transformers"] for c in cells})
    if len(versions) != 1:
        raise SystemExit(f"error: {path}: one run under one transformers version expected, got {versions}")
    return {
        "transformers": versions[0],
        "seconds": None,
        "exit": None,
        "failed": [],
        "cells": {f"{c['family']}|{c['check']}": c["tolerance"] for c in cells},
        "checks": [*CHECKS, "outside the zoo"],
    }


def cell(run: Dict, family: str, check: str) -> str:
    kind = "seq2seq" if FAMILIES[family][1].startswith("seq2seq") else "causal"
    if (check, kind) in NOT_APPLICABLE or (check, family) in NOT_APPLICABLE:
        return "n/a"
    key = f"{family}|{check}"
    if check not in run.get("checks", FIRST_CHECKS):
        return "not run"
    if key not in run["cells"]:
        return "**failed**"
    tolerance = run["cells"][key]
    if check == "attention: eager path":  # a path taken, no number compared
        return "✓"
    if tolerance is None:
        return "✓ (eager only)"
    return "✓ exact" if tolerance == 0 else f"✓ ≤ {tolerance:g}"


def render(record: Dict) -> str:
    """The page's table: one row per family and transformers version, one column per check."""
    lines = [
        "| family | transformers | " + " | ".join(CHECKS.values()) + " |",
        "|---|---|" + "---|" * len(CHECKS),
    ]
    for family, (name, _) in FAMILIES.items():
        for run in record["runs"]:
            cells = [cell(run, family, check) for check in CHECKS]
            lines.append(f"| {name} | {run['transformers']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Families outside the zoo, built from their transformers config classes the same way (base "
        "decoder-only models read with the plain prompt), through `cxmi` (P-CXMI equal to the per-example "
        "computation), `translate` and attribution's checkpointed path (equal to the whole graph):",
        "",
        "| family | " + " | ".join(f"transformers {r['transformers']}" for r in record["runs"]) + " |",
        "|---|" + "---|" * len(record["runs"]),
    ]
    for family, name in OUTSIDE.items():
        cells = []
        for run in record["runs"]:
            if "outside the zoo" not in run.get("checks", FIRST_CHECKS):
                cells.append("not run")
            elif f"{family}|outside the zoo" in run["cells"]:
                cells.append(f"✓ ≤ {run['cells'][f'{family}|outside the zoo']:g}")
            elif f"{family}|refused" in run["cells"]:
                cells.append(f"refused in one line ({REFUSALS[family]})")
            else:
                cells.append("**failed**")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "Runs: "
        + "; ".join(
            f"transformers {r['transformers']}: {len(r['cells'])} cells passed"
            + (f", {len(r['failed'])} tests failed, {r['seconds']} s" if r["seconds"] is not None else "")
            for r in record["runs"]
        )
        + f" ({record['machine']})."
    )
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", action="append", default=[], help="a Python of an environment to run the zoo in")
    ap.add_argument(
        "--report", action="append", default=[], help="the CONTEXTUAL_MT_ZOO_REPORT file of a run made already"
    )
    ap.add_argument("--workers", default="2", help="pytest-xdist processes per run (default 2)")
    args = ap.parse_args(argv)
    if not args.python and not args.report:
        ap.error("give --python (run the zoo) or --report (a run made already)")
    runs = [run_zoo(p, args.workers) for p in args.python] + [from_report(r) for r in args.report]
    runs.sort(key=lambda r: [int(x) for x in r["transformers"].split(".")[:2]])
    record = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "runs": runs,
    }
    with open(RECORD + ".tmp", "w", encoding="utf-8") as f:
        f.write(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    os.replace(RECORD + ".tmp", RECORD)
    for r in runs:
        print(f"transformers {r['transformers']}: {len(r['cells'])} cells, failed: {', '.join(r['failed']) or 'none'}")
    sys.path.insert(0, HERE)
    import refresh

    return refresh.main([])


if __name__ == "__main__":
    sys.exit(main())
