"""The sample ids in the order fairseq-generate produced hypotheses.

fairseq hands a scorer strings only (``add_string(ref, hyp)``), one per sample in batch order.
While the MuDA scorer is active (``start``), the ``document_translation`` task records each
batch's ids here, so that the scorer can put hypotheses back in corpus order."""

from __future__ import annotations

from typing import Iterable, List

_IDS: List[int] = []
_ACTIVE = [False]


def start() -> None:
    _IDS.clear()
    _ACTIVE[0] = True


def record(ids: Iterable[int]) -> None:
    if _ACTIVE[0]:  # nothing accumulates during training or other generation
        _IDS.extend(int(i) for i in ids)


def recorded() -> List[int]:
    return list(_IDS)
