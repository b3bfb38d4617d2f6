"""Document ids: a docids file holds one id per sentence, and a document is a maximal run of equal
consecutive ids (``document_spans``); a repeated id after another document starts a new document
(with a warning). Every grouping by document goes through this module.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Dict, List, Sequence, Tuple, TypeVar

from commandkit.errors import Code, InputError
from commandkit.text import check_input_file, read_lines

if TYPE_CHECKING:
    import numpy as np


T = TypeVar("T")
logger = logging.getLogger(__name__)


def read_docids(path: str) -> List[str]:
    """A docids file: one non-empty document id per line (blank ids and empty files are errors)."""
    check_input_file(path, "docids file")
    ids = read_lines(path)
    if not ids:
        raise InputError(f"{path}: docids file is empty", code=Code.EMPTY)
    for lineno, doc_id in enumerate(ids, start=1):
        if not doc_id.strip():
            raise InputError(f"{path}:{lineno}: empty document id", code=Code.EMPTY)
    _warn_interleaved(path, ids)
    return ids


def _warn_interleaved(path: str, ids: Sequence[str]) -> None:
    """A document id that comes back after another document starts a second document under the
    same id: almost always shuffled lines. Say so, naming the line."""
    first: Dict[str, int] = {}
    for n, doc_id in enumerate(ids):
        if n and doc_id != ids[n - 1] and doc_id in first:
            logger.warning(
                "%s:%d: document id %r appears again after other documents (first at line %d); "
                "it starts a new document (a document is a run of equal consecutive ids)",
                path,
                n + 1,
                doc_id,
                first[doc_id] + 1,
            )
            return
        first.setdefault(doc_id, n)


def document_spans(ids: Sequence[str]) -> List[Tuple[int, int]]:
    """``(start, end)`` of each document, in order: maximal runs of equal consecutive ids."""
    spans: List[Tuple[int, int]] = []
    for i in range(len(ids)):
        if i == 0 or ids[i] != ids[i - 1]:
            spans.append((i, i + 1))
        else:
            spans[-1] = (spans[-1][0], i + 1)
    return spans


def document_starts(ids: Sequence[str]) -> np.ndarray:
    """For each sentence, the index of the first sentence of its document."""
    import numpy as np  # here, not on top: a command's `--help` and argument errors need no numpy

    starts = np.zeros(len(ids), dtype=np.int64)
    for start, end in document_spans(ids):
        starts[start:end] = start
    return starts


def group_by_document(items: Sequence[T], ids: Sequence[str]) -> List[List[T]]:
    """``items`` (one per line) split into documents."""
    return [list(items[a:b]) for a, b in document_spans(ids)]


def check_line_count(ids: Sequence[str], docids_path: str, count: int, what: str) -> None:
    """Every sentence needs exactly one document id."""
    if len(ids) != count:
        raise InputError(
            f"{docids_path}: has {len(ids)} lines but {what} has {count}; every sentence needs exactly one document id",
            code=Code.LINE_COUNT,
        )
