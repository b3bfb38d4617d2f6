"""Document ids: one id per line; a document is a maximal run of equal consecutive ids."""
from __future__ import annotations

import os
from typing import List

import numpy as np

from contextual_mt.errors import ContextualMTError


def read_docids(path: str) -> List[str]:
    """Read a docids file. Ids may be any non-empty string; blank lines are errors."""
    if not os.path.exists(path):
        raise ContextualMTError(f"{path}: docids file not found")
    with open(path, encoding="utf-8") as f:
        ids = [line.rstrip("\r\n") for line in f]
    if not ids:
        raise ContextualMTError(f"{path}: docids file is empty")
    for lineno, doc_id in enumerate(ids, start=1):
        if not doc_id.strip():
            raise ContextualMTError(f"{path}:{lineno}: empty document id")
    return ids


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
