"""Which sentences are a sentence's context, one rule each, for training, scoring, translation
and attribution, every backend alike:

* ``last_sentences``: the context of a sentence is the nearest k of the sentences before it in
  its document, all of them when there are fewer (training and scoring data apply the same rule
  over arrays: ``ContextDataset``, k = min(size, position in the document));
* context that does not fit the model's positions: keep the nearest sentences, dropping the
  furthest first (of the side with more, when both sides have context), so that a long context
  never removes the sentence itself. Used by training and scoring data (``ContextDataset``, over
  every example at once), fairseq scoring of free-standing pairs and translation
  (``nearest_context``) and the Hugging Face inputs (``nearest_fitting``)."""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple, TypeVar

import numpy as np

T = TypeVar("T")


def last_sentences(previous: Sequence[T], k: int) -> List[T]:
    """The nearest ``k`` of ``previous`` (the sentences before a sentence, oldest first), all of
    them when there are fewer: its context sentences."""
    return list(previous[max(0, len(previous) - k) :]) if k > 0 else []


def nearest_fitting(
    n_src: int,
    n_tgt: int,
    attempt: Callable[[int, int], Tuple[bool, T]],
    error: Optional[Callable[[T], Exception]] = None,
) -> T:
    """``attempt(n_src, n_tgt)`` -> (fits, value) with fewer and fewer context sentences, the
    furthest of the longer side dropped first, until it fits; ``error(value)`` if even no
    context does not fit (without ``error``, the value without context is taken as it is)."""
    while True:
        fits, value = attempt(n_src, n_tgt)
        if fits:
            return value
        if n_src == 0 and n_tgt == 0:
            if error is None:
                return value
            raise error(value)
        if n_src >= n_tgt:
            n_src -= 1
        else:
            n_tgt -= 1


def nearest_context(previous: Sequence[Sequence[int]], size: int, brk: int, room: int) -> List[int]:
    """``x[-k] <brk> ... x[-1] <brk>`` for the nearest k <= ``size`` of the ``previous`` sentences
    (token ids, oldest first) that fit in ``room`` positions."""
    chosen = last_sentences(previous, size)

    def attempt(k: int, _: int) -> Tuple[bool, List[int]]:
        ids = [t for s in last_sentences(chosen, k) for t in (*s, brk)]
        return len(ids) <= room, ids

    return nearest_fitting(len(chosen), 0, attempt)


def nearest_fitting_sizes(k: np.ndarray, size: Callable[[np.ndarray], np.ndarray], limit: int) -> np.ndarray:
    """The same rule for many examples at once (one side): each example's context size ``k``
    lowered until ``size(k)`` (its tokens with that context) is at most ``limit``, or 0."""
    k = k.copy()
    while True:
        over = (size(k) > limit) & (k > 0)
        if not over.any():
            return k
        k[over] -= 1
