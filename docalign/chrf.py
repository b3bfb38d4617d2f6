"""chrF between two texts, fast when the same texts are compared many times.

The aligner compares every candidate group of output segments with the sentence-level
translation of every nearby source line: each text's character n-gram counts (``Profile``) are
made once and reused. The score is sacreBLEU's sentence chrF (character orders 1-6, whitespace
removed, precision and recall averaged over the orders both texts have, no smoothing) with
beta = 1: a link is symmetric, so recall (beta = 2, sacreBLEU's default) must not outweigh
precision, or a merged segment would look like a good match for either of its sentences.
"""

from __future__ import annotations

from collections import Counter
from typing import List, Tuple

ORDER = 6


class Profile:
    """The character n-gram counts of a text (whitespace removed), orders 1..ORDER."""

    __slots__ = ("counts", "totals")

    def __init__(self, text: str) -> None:
        chars = "".join(text.split())
        self.counts: List[Counter] = [
            Counter(chars[i : i + n] for i in range(len(chars) - n + 1)) for n in range(1, ORDER + 1)
        ]
        self.totals: List[int] = [max(len(chars) - n + 1, 0) for n in range(1, ORDER + 1)]


def _matches(a: Counter, b: Counter) -> int:
    if len(a) > len(b):
        a, b = b, a
    return sum(min(c, b[g]) for g, c in a.items() if g in b)


def statistics(hyp: Profile, ref: Profile) -> List[Tuple[int, int, int]]:
    """Per order: (hypothesis n-grams, reference n-grams, matches)."""
    return [
        (h, r, _matches(hc, rc) if h and r else 0)
        for h, r, hc, rc in zip(hyp.totals, ref.totals, hyp.counts, ref.counts, strict=True)
    ]


def chrf(hyp: Profile, ref: Profile, beta: float = 1.0) -> float:
    """chrF in [0, 1] (sacreBLEU's ``CHRF(beta=beta).sentence_score(...).score / 100``)."""
    precision = recall = 0.0
    orders = 0
    for h, r, m in statistics(hyp, ref):
        if h and r:
            precision += m / h
            recall += m / r
            orders += 1
    if not orders:
        return 0.0
    precision, recall = precision / orders, recall / orders
    if not precision + recall:
        return 0.0
    factor = beta * beta
    return (1 + factor) * precision * recall / (factor * precision + recall)
