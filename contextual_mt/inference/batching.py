"""Batches of similar length: what every batched scorer and translator here cuts its work into."""
from __future__ import annotations

from typing import Callable, Hashable, List, Optional, Sequence


def length_batches(todo: Sequence[int], length: Callable[[int], int], batch_size: int,
                   max_tokens: Optional[int] = None, key: Optional[Callable[[int], Hashable]] = None) -> List[List[int]]:
    """``todo`` sorted by length (then ``key``, then index), cut into batches of at most
    ``batch_size`` items and ``max_tokens`` padded tokens (a longer item is a batch alone)."""
    order = sorted(todo, key=lambda i: (length(i), key(i), i) if key else (length(i), i))
    out: List[List[int]] = []
    current: List[int] = []
    longest = 0
    for i in order:
        n = length(i)
        if current and (len(current) >= batch_size or (max_tokens and max(longest, n) * (len(current) + 1) > max_tokens)):
            out.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, n)
    if current:
        out.append(current)
    return out
