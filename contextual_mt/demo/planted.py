"""Accuracy on the demo corpus's planted context-dependent target tokens."""

from __future__ import annotations

import json
from typing import Dict, List, Sequence

from commandkit.errors import json_reason
from commandkit.text import read_lines
from contextual_mt.errors import Code, InputError


def read_planted(path: str) -> List[Dict]:
    records = []
    for lineno, line in enumerate(read_lines(path), start=1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{lineno}: not JSON ({json_reason(e, line=False)})", code=Code.FORMAT) from None
    return records


def planted_accuracy(hyps: Sequence[str], planted: Sequence[Dict]) -> Dict[str, Dict[str, float]]:
    """Per phenomenon: a planted token counts as right when the hypothesis sentence contains the
    gold word and not its context-dependent alternative (case-insensitive, whitespace words)."""
    totals: Dict[str, List[int]] = {}
    for rec in planted:
        if rec["line"] > len(hyps):
            raise InputError(
                f"planted token on line {rec['line']} but only {len(hyps)} hypotheses", code=Code.LINE_COUNT
            )
        words = {w.lower() for w in hyps[rec["line"] - 1].split()}
        right = rec["gold"].lower() in words and rec["alternative"].lower() not in words
        counts = totals.setdefault(rec["phenomenon"], [0, 0])
        counts[0] += int(right)
        counts[1] += 1
    return {p: {"accuracy": 100.0 * r / n, "correct": r, "total": n} for p, (r, n) in sorted(totals.items())}
