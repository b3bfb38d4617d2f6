"""Document ids: one id per line; a document is a maximal run of equal consecutive ids."""
from __future__ import annotations

from typing import List

import numpy as np

from contextual_mt.errors import ContextualMTError
from muda.io import read_docids as _read_docids


def read_docids(path: str) -> List[str]:
    """Read a docids file. Ids may be any non-empty string; blank lines are errors."""
    return _read_docids(path, ContextualMTError)


def document_starts(doc_ids: List[str]) -> np.ndarray:
    """For each sentence, the index of the first sentence of its document."""
    n = len(doc_ids)
    starts = np.zeros(n, dtype=np.int64)
    for i in range(1, n):
        starts[i] = starts[i - 1] if doc_ids[i] == doc_ids[i - 1] else i
    return starts


def check_line_count(doc_ids: List[str], docids_path: str, count: int, what: str) -> None:
    if len(doc_ids) != count:
        raise ContextualMTError(
            f"{docids_path}: has {len(doc_ids)} lines but {what} has {count}; "
            "every sentence needs exactly one document id"
        )
