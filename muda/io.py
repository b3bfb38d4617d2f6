"""The base I/O layer, for muda and the packages built on it: text files read with clear errors,
outputs written atomically (temp file, rename), and document ids.

A document is a maximal run of equal consecutive ids (``document_spans``); a repeated id after
another document starts a new document. Every grouping by document goes through this module.
"""
from __future__ import annotations

import os
import tempfile
from typing import TYPE_CHECKING, Iterable, List, Sequence, Tuple, TypeVar

from muda.errors import InputError

if TYPE_CHECKING:
    import numpy as np

T = TypeVar("T")


def read_lines(path: str) -> List[str]:
    """Lines of a UTF-8 text file, without line breaks."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: file not found")
    try:
        with open(path, encoding="utf-8") as f:
            return [line.rstrip("\r\n") for line in f]
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path``; readers never see a partial file."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; give the usual mode
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def atomic_write_lines(path: str, lines: Iterable[str]) -> None:
    """One line per item, written atomically."""
    lines = list(lines)
    if any("\n" in line for line in lines):
        raise ValueError(f"{path}: an output line contains a newline")
    atomic_write_text(path, "".join(line + "\n" for line in lines))


def read_docids(path: str) -> List[str]:
    """A docids file: one non-empty document id per line (blank ids and empty files are errors)."""
    if not os.path.exists(path):
        raise InputError(f"{path}: docids file not found")
    ids = read_lines(path)
    if not ids:
        raise InputError(f"{path}: docids file is empty")
    for lineno, doc_id in enumerate(ids, start=1):
        if not doc_id.strip():
            raise InputError(f"{path}:{lineno}: empty document id")
    return ids


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
    import numpy as np  # here, not on top: `muda --help` and argument errors need no numpy

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
        raise InputError(f"{docids_path}: has {len(ids)} lines but {what} has {count}; "
                    "every sentence needs exactly one document id")


def atomic_save_figure(fig, path: str, dpi: int = 110) -> None:
    """Save a matplotlib figure atomically (temp file, rename)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=os.path.splitext(path)[1] or ".png", dir=directory)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=dpi)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
