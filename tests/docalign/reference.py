"""Plain reference implementations the docalign tests hold the vectorized code against."""

from __future__ import annotations

from typing import Sequence


def levenshtein(ref: Sequence, hyp: Sequence) -> int:
    """Word edits (insertions, deletions, substitutions) turning ``ref`` into ``hyp``: the textbook
    dynamic program, one row at a time."""
    row = list(range(len(hyp) + 1))
    for r in ref:
        new = [row[0] + 1]
        for c, h in enumerate(hyp, start=1):
            new.append(min(row[c] + 1, new[c - 1] + 1, row[c - 1] + (r != h)))
        row = new
    return row[-1]
