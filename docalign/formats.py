"""System outputs as files: one line per source line (what every evaluation reads), JSONL
records of whole documents, or one document per line; and the alignment file.

Document-level outputs, as ``contextual-mt translate --unit document`` writes them or any other
system (an API, a pipeline one does not control) can:

* JSONL: one object per document with ``"doc"`` (its id in the docids file) and ``"text"`` (the
  whole translated document); other keys are ignored, the order is free. A docids file that has
  the same id for two documents (two runs of lines) matches the id's records to them in order.
* one document per line, in the order of the documents of the docids file (a document's line
  breaks written as spaces).

The format is read from the file: JSON objects are JSONL (each needs "doc" and "text"), never
text; otherwise as many lines as the source are a line-aligned output, as many as its documents
are documents. A file that is none of these, a document id that is not in the docids file, a
document missing, and an empty document (whose source is not empty) are each one line naming the
file (and line)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from commandkit.documents import document_spans
from commandkit.errors import InputError
from commandkit.outputs import atomic_write_lines
from commandkit.text import read_lines

LINES, JSONL, DOCUMENTS = "lines", "jsonl", "documents"
NO_PIVOT = "none"  # --pivot none: align to the source lines (contextual-mt align only)


@dataclass(frozen=True)
class SystemOutput:
    """A system output: ``lines`` (line-aligned) or ``documents`` (one text per document of the
    docids file, in order), and the file line each document came from."""

    format: str
    lines: Optional[List[str]] = None
    documents: Optional[List[str]] = None
    document_lines: Optional[List[int]] = None


def _is_record(line: str) -> bool:
    """A JSON object: the file is JSONL (whose records then need "doc" and "text"), never a
    line of translated text."""
    if not line.lstrip().startswith("{"):
        return False
    try:
        value = json.loads(line)
    except ValueError:
        return False
    return isinstance(value, dict)


def is_jsonl(lines: Sequence[str]) -> bool:
    """Whether the file's lines are JSONL document records (its first non-empty line is a JSON
    object: one without "doc" is a bad record, never a line of text)."""
    return _is_record(next((line for line in lines if line.strip()), ""))


def read_system_output(path: str, ids: Sequence[str], docids_path: str, nonempty: Sequence[bool]) -> SystemOutput:
    """``path`` read in its format (see the module). ``nonempty[d]``: document d's source (or
    pivot) has text, so its translation may not be empty."""
    lines = read_lines(path)
    spans = document_spans(ids)
    jsonl = is_jsonl(lines)
    if jsonl:
        texts, where = _read_jsonl(path, lines, ids, spans, docids_path)
    elif len(lines) == len(ids):
        return SystemOutput(LINES, lines=lines)
    elif len(lines) == len(spans):
        texts, where = lines, list(range(1, len(lines) + 1))
    else:
        raise InputError(
            f"{path}: has {len(lines)} lines: not one per source line ({len(ids)}), nor one per document "
            f'({len(spans)} in {docids_path}), nor JSONL records with "doc" and "text" (unknown format)'
        )
    for d, (text, lineno) in enumerate(zip(texts, where, strict=True)):
        if nonempty[d] and not text.strip():
            raise InputError(f"{path}:{lineno}: document {ids[spans[d][0]]!r} is empty but its source is not")
    kind = JSONL if jsonl else DOCUMENTS
    return SystemOutput(kind, documents=texts, document_lines=where)


def _read_jsonl(
    path: str, lines: Sequence[str], ids: Sequence[str], spans: Sequence[Tuple[int, int]], docids_path: str
) -> Tuple[List[str], List[int]]:
    where_of: Dict[str, List[int]] = {}  # id -> its documents, in order
    for d, (start, _) in enumerate(spans):
        where_of.setdefault(ids[start], []).append(d)
    texts: List[Optional[str]] = [None] * len(spans)
    found: List[int] = [0] * len(spans)
    seen: Dict[str, int] = {}
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{lineno}: not a JSON record ({e.msg})") from None
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("doc"), str)
            or not isinstance(value.get("text"), str)
        ):
            raise InputError(f'{path}:{lineno}: a record needs "doc" (a string) and "text" (a string)')
        doc = value["doc"]
        if doc not in where_of:
            raise InputError(f"{path}:{lineno}: document {doc!r} is not in {docids_path}")
        k = seen.get(doc, 0)
        if k >= len(where_of[doc]):
            raise InputError(
                f"{path}:{lineno}: document {doc!r} again: {docids_path} has "
                f"{len(where_of[doc])} document(s) of that id (one record per document, its whole text)"
            )
        seen[doc] = k + 1
        d = where_of[doc][k]
        texts[d], found[d] = value["text"], lineno
    missing = [ids[spans[d][0]] for d, t in enumerate(texts) if t is None]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise InputError(f"{path}: no record for document {missing[0]!r}{more} of {docids_path}")
    return [t or "" for t in texts], found


def read_pivots(path: str, count: int, what: str) -> List[str]:
    """``--pivot``: a sentence-level translation of each source line, ``count`` lines as ``what``
    has; a document-level output (JSONL records) given as the pivot is one line, not its JSON text."""
    if path == NO_PIVOT:
        raise InputError(
            f"--pivot {NO_PIVOT}: aligning to the source lines is `contextual-mt align`'s (it writes an aligned "
            "output that this command then reads as line-aligned)"
        )
    pivots = read_lines(path)
    if is_jsonl(pivots):
        raise InputError(f"{path}: JSONL records, not a sentence-level translation (--pivot: one line per source line)")
    if len(pivots) != count:
        raise InputError(
            f"{path}: has {len(pivots)} lines but {what} has {count} (--pivot: a sentence-level "
            "translation of each source line)"
        )
    return pivots


def write_alignment(path: str, records: Iterable[Dict]) -> None:
    """The alignment file: JSONL, one record per source line (and one per added segment)."""
    atomic_write_lines(path, (json.dumps(r, ensure_ascii=False) for r in records))
