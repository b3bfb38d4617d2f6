"""The one waves loop of document translation (fairseq, CADec and Hugging Face): wave t
translates the t-th sentence of every document that has one, batched across documents, so each
sentence's target context (its document's previous translations) is ready when it is decoded.
When no sentence waits for another's translation (references as target context, or no target
context), the translator may ask for one wave of all sentences, batched freely by length."""
from __future__ import annotations

from typing import Callable, Iterable, List, Optional, Sequence, Tuple, TypeVar

from tqdm import tqdm

T = TypeVar("T")

# (sentence index, indices of the previous sentences of its document, oldest first)
Item = Tuple[int, Sequence[int]]


def waves(docs: Sequence[Sequence[int]], sequential: bool = True) -> List[List[Item]]:
    """The waves of ``docs`` (lists of sentence indices), documents in the order given."""
    if not sequential:
        return [[(d[t], d[:t]) for d in docs for t in range(len(d))]]
    return [[(d[t], d[:t]) for d in docs if len(d) > t] for t in range(max((len(d) for d in docs), default=0))]


def translate_in_waves(docs: Sequence[Sequence[int]], total: int,
                       decode_wave: Callable[[List[Item], List[Optional[T]]], Iterable[Sequence[Tuple[int, T]]]],
                       sequential: bool = True, desc: str = "translate", progress: bool = True) -> List[Optional[T]]:
    """Run ``decode_wave(wave, predicted)`` on every wave; it reads the translations so far in
    ``predicted`` (by sentence index) and yields (index, translation) lists as batches finish."""
    predicted: List[Optional[T]] = [None] * total
    bar = tqdm(total=total, unit="sent", desc=desc, disable=not progress)
    for wave in waves(docs, sequential):
        for done in decode_wave(wave, predicted):
            for i, output in done:
                predicted[i] = output
            bar.update(len(done))
    bar.close()
    return predicted
