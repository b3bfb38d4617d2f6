"""The sample ids in the order fairseq-generate produced hypotheses.

fairseq hands a scorer strings only (``add_string(ref, hyp)``), one per sample in batch order.
The ``document_translation`` task records each batch's ids here, so that the MuDA scorer can
put hypotheses back in corpus order."""
from __future__ import annotations

from typing import Iterable, List

_IDS: List[int] = []


def record(ids: Iterable[int]) -> None:
    _IDS.extend(int(i) for i in ids)


def reset() -> None:
    _IDS.clear()


def recorded() -> List[int]:
    return list(_IDS)
