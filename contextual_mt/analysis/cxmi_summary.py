"""A P-CXMI run's outputs: the JSONL records and the summary beside them (corpus CXMI and what
made it), written together; reading a summary back."""

from __future__ import annotations

import json
from typing import Dict, Optional, Sequence

import numpy as np

from commandkit.errors import json_reason
from commandkit.text import check_input_file, read_lines
from contextual_mt.errors import Code, InputError
from contextual_mt.scored_corpus import UNITS
from contextual_mt.scored_corpus import summary_path as summary_path  # re-exported: pipeline stages import it here


def summarize(records: Sequence[Dict], log_base: str, extra: Optional[Dict] = None) -> Dict:
    """Corpus CXMI is the mean over sentences of the sentence's P-CXMI (the sum over its subword
    tokens); the mean over subword tokens (EOS included) is another number, named apart. The
    report's mean is per word (contextual_mt.analysis.report)."""
    sentence = [r["sentence_pcxmi"] for r in records]
    tokens = [v for r in records for v in r["token_pcxmi"]]
    return {
        "cxmi": float(np.mean(sentence)) if sentence else 0.0,
        "mean_subword_pcxmi": float(np.mean(tokens)) if tokens else 0.0,
        "unit": UNITS[log_base],
        "log_base": log_base,
        "sentences": len(sentence),
        "subword_tokens": len(tokens),
        **(extra or {}),
    }


def summary_line(summary: Dict, output: str) -> str:
    """What ``cxmi`` (and the pipeline's pcxmi stage) prints: each number with its unit."""
    unit = summary["unit"]
    # a summary written before the keys were renamed (same numbers) is still read
    mean = summary.get("mean_subword_pcxmi", summary.get("mean_token_pcxmi"))
    count = summary.get("subword_tokens", summary.get("tokens"))
    dtype = summary.get("dtype", (summary.get("hf_settings") or {}).get("dtype"))
    return (
        f"CXMI {summary['cxmi']:.4f} {unit} per sentence over {summary['sentences']} sentences "
        f"(mean P-CXMI per subword token {mean:.4f} {unit} over {count} tokens, EOS included); "
        + (f"model in {dtype}; " if dtype else "")
        + f"records: {output}"
    )


def read_summary(path: str) -> Dict:
    """A ``.summary.json``: one line naming the file (and line) if it is not JSON."""
    check_input_file(path, "summary")
    text = "\n".join(read_lines(path))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: not JSON ({json_reason(e, line=False)})", code=Code.FORMAT) from None
    if not isinstance(value, dict):
        raise InputError(f"{path}: not a CXMI summary (expected a JSON object)", code=Code.FORMAT)
    return value
