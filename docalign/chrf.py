"""chrF between two texts, fast when the same texts are compared many times.

The aligner compares every candidate group of output segments with the sentence-level
translation of every nearby source line: each text's character n-gram counts (``Profile``) are
made once and reused. The score is sacreBLEU's sentence chrF (character orders 1-6, whitespace
removed, precision and recall averaged over the orders both texts have, no smoothing) with
beta = 1: a link is symmetric, so recall (beta = 2, sacreBLEU's default) must not outweigh
precision, or a merged segment would look like a good match for either of its sentences.
"""

from __future__ import annotations

import operator
from collections import Counter
from typing import Hashable, List, Set, Tuple

ORDER = 6


class Profile:
    """The character n-grams of a text (whitespace removed), per order 1..ORDER that the text is
    long enough to have: (their number, a set in which an n-gram seen k times is k members: the
    n-gram, then (n-gram, 2) .. (n-gram, k)). The clipped matches of two texts, the sum over
    n-grams of the smaller count, are then the size of their sets' intersection, which Python
    computes in C (the aligner compares tens of thousands of pairs per thousand lines)."""

    __slots__ = ("orders",)

    def __init__(self, text: str) -> None:
        chars = "".join(text.split())
        self.orders: List[Tuple[int, Set[Hashable]]] = []
        grams: List[str] = []
        for n in range(1, min(ORDER, len(chars)) + 1):
            # the n-grams: each (n-1)-gram with the character after it (concatenated in C)
            grams = list(chars) if n == 1 else list(map(operator.add, grams, chars[n - 1 :]))
            members: Set[Hashable] = set(grams)
            if len(members) < len(grams):  # repeated n-grams: one member per occurrence
                members.update([(g, k) for g, c in Counter(grams).items() if c > 1 for k in range(2, c + 1)])
            self.orders.append((len(grams), members))


def chrf(hyp: Profile, ref: Profile, beta: float = 1.0) -> float:
    """chrF in [0, 1] (sacreBLEU's ``CHRF(beta=beta).sentence_score(...).score / 100``): precision
    and recall averaged over the orders both texts have (the shorter text's: ``zip`` stops there)."""
    precision = recall = 0.0
    for (h, hyp_grams), (r, ref_grams) in zip(hyp.orders, ref.orders, strict=False):
        m = len(hyp_grams & ref_grams)
        precision += m / h
        recall += m / r
    orders = min(len(hyp.orders), len(ref.orders))
    if not orders:
        return 0.0
    precision, recall = precision / orders, recall / orders
    if not precision + recall:
        return 0.0
    factor = beta * beta
    return (1 + factor) * precision * recall / (factor * precision + recall)
