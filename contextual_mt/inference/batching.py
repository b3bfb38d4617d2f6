"""The one batching rule of every batched scorer and translator (cxmi, contrastive, translate;
fairseq and Hugging Face): items of similar length together, at most ``--batch-size`` items
and at most ``--max-tokens`` padded tokens per batch. Padded tokens are the batch's rows times
its longest row, a row's length being what the model reads for it: the sentence with its
context (the longer of the encoder and decoder sides, where the backend measures both).
An item longer than ``--max-tokens`` is a batch alone; without ``--max-tokens`` only
``--batch-size`` bounds a batch."""
from __future__ import annotations

from typing import Callable, Hashable, List, Optional, Sequence

MAX_TOKENS_HELP = ("padded tokens per batch: rows times the longest row, a row being a sentence with its context "
                   "(default: no limit beyond --batch-size; --hf-model scoring: 1024 on CPU, 8192 on GPU)")


def length_batches(todo: Sequence[int], length: Callable[[int], int], batch_size: int,
                   max_tokens: Optional[int] = None, key: Optional[Callable[[int], Hashable]] = None,
                   order: Optional[Callable[[int], Hashable]] = None) -> List[List[int]]:
    """``todo`` sorted by length (then ``key``, then index; or by ``order``), cut into batches
    of at most ``batch_size`` items and ``max_tokens`` padded tokens (a longer item is a batch
    alone)."""
    if order is None:
        order = (lambda i: (length(i), key(i), i)) if key else (lambda i: (length(i), i))
    out: List[List[int]] = []
    current: List[int] = []
    longest = 0
    for i in sorted(todo, key=order):
        n = length(i)
        if current and (len(current) >= batch_size or (max_tokens and max(longest, n) * (len(current) + 1) > max_tokens)):
            out.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, n)
    if current:
        out.append(current)
    return out
