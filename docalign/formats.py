"""System outputs as files: one line per source line (what every evaluation reads), JSONL
records of whole documents, or one document per line; and the alignment file.

Document-level outputs, as ``contextual-mt translate --unit document`` writes them or any other
system (an API, a pipeline one does not control) can:

* JSONL: one object per document with ``"doc"`` (its id in the docids file) and ``"text"`` (the
  whole translated document); other keys are ignored, the order is free. A docids file that has
  the same id for two documents (two runs of lines) matches the id's records to them in order.
* one document per line, in the order of the documents of the docids file (a document's line
  breaks written as spaces).

The format (``--hyp-format``, default ``auto``) is read from the file: a file with a line that is a
JSON object (or opens as one: ``{"``) is JSONL, and every other non-empty line must then be a
record too (a record cut off is an error naming its line, never a line of text); a plain-text file
of as many lines as the source is line-aligned; one of as many lines as its documents is read as
one document per line, a guess (``SystemOutput.guessed``): a truncated line-aligned file can have
that many lines, so the guess stands only when its alignment fills most lines
(``docalign.align.check_guess``). ``--hyp-format lines``, ``documents`` or ``jsonl`` says which
(no guess). A file that is none of these, a document id that is not in the docids file, a document
missing and a record's text holding a control character (a JSON escape such as ``\u0000``) are
each one line naming the file (and line). An empty document whose source is not empty is a system
that wrote nothing for it: its lines are aligned as omissions, with one warning for the file."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from commandkit.documents import document_spans
from commandkit.errors import Code, InputError, json_reason
from commandkit.outputs import atomic_write_lines
from commandkit.text import read_lines

logger = logging.getLogger(__name__)

AUTO, LINES, JSONL, DOCUMENTS = "auto", "lines", "jsonl", "documents"
HYP_FORMATS = (AUTO, LINES, DOCUMENTS, JSONL)  # --hyp-format


def check_hyp_format(value: object) -> None:
    if value not in HYP_FORMATS:
        raise InputError(f"--hyp-format {value}: expected one of {', '.join(HYP_FORMATS)}", code=Code.OPTION_VALUE)


NO_PIVOT = "none"  # --pivot none: align to the source lines (contextual-mt align only)


@dataclass(frozen=True)
class SystemOutput:
    """A system output: ``lines`` (line-aligned) or ``documents`` (one text per document of the
    docids file, in order), and the file line each document came from. ``guessed``: read as one
    document per line from its line count alone; ``as_lines`` then says what the line-aligned
    reading makes of it (``check_guess``)."""

    format: str
    lines: Optional[List[str]] = None
    documents: Optional[List[str]] = None
    document_lines: Optional[List[int]] = None
    path: str = ""
    guessed: bool = False
    as_lines: str = ""


def _is_record(line: str) -> bool:
    """A JSON object, or a line that opens as one (``{"``, a record cut off): the file is JSONL
    (whose records then need "doc" and "text"), never a line of translated text."""
    text = line.strip()
    if not text.startswith("{"):
        return False
    if text.startswith('{"'):
        return True
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict)


def first_record(lines: Sequence[str]) -> Optional[int]:
    """The 1-based line of the file's first JSON record (see ``_is_record``); None when none is."""
    return next((n for n, line in enumerate(lines, start=1) if _is_record(line)), None)


def is_jsonl(lines: Sequence[str]) -> bool:
    """Whether the file looks like JSONL document records: any of its lines is one (the others
    must then be records too: a record cut off or without "doc" is a bad record, never text)."""
    return first_record(lines) is not None


# C0 controls but tab, line feed and carriage return (a document's own line breaks), DEL, C1: no
# translation holds them, and a later reader would refuse them (NUL) or break lines at them (FF, VT)
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def read_system_output(
    path: str, ids: Sequence[str], docids_path: str, nonempty: Sequence[bool], hyp_format: str = AUTO
) -> SystemOutput:
    """``path`` read in its format (see the module; ``hyp_format``: --hyp-format). ``nonempty[d]``:
    document d's source (or pivot) has text, so an empty translation of it is warned about (its
    lines become omissions)."""
    check_hyp_format(hyp_format)
    lines = read_lines(path)
    spans = document_spans(ids)
    record = first_record(lines)
    if hyp_format in (LINES, DOCUMENTS) and record is not None:
        raise InputError(
            f"{path}:{record}: a JSON record, not text (--hyp-format {hyp_format}); JSONL records are "
            "read with --hyp-format jsonl (or auto)",
            code=Code.FORMAT,
        )
    as_lines = f"has {len(lines)} lines but {docids_path} has {len(ids)} (one per source line)"
    kind, guessed = DOCUMENTS, False
    if hyp_format == JSONL or (hyp_format == AUTO and record is not None):
        kind = JSONL
        texts, where = _read_jsonl(path, lines, ids, spans, docids_path)
    elif hyp_format == LINES or (hyp_format == AUTO and len(lines) == len(ids)):
        if len(lines) != len(ids):
            raise InputError(f"{path}: {as_lines}", code=Code.FORMAT)
        return SystemOutput(LINES, lines=lines, path=path)
    elif len(lines) == len(spans):
        texts, where = lines, list(range(1, len(lines) + 1))
        guessed = hyp_format == AUTO
    elif hyp_format == DOCUMENTS:
        raise InputError(
            f"{path}: has {len(lines)} lines but {docids_path} has {len(spans)} documents "
            "(--hyp-format documents: one per line, in its order)",
            code=Code.LINE_COUNT,
        )
    else:
        raise InputError(
            f"{path}: has {len(lines)} lines: not one per source line ({len(ids)}), nor one per document "
            f'({len(spans)} in {docids_path}), nor JSONL records with "doc" and "text" (unknown format)',
            code=Code.LINE_COUNT,
        )
    _warn_empty(path, texts, where, ids, spans, nonempty)
    return SystemOutput(kind, documents=texts, document_lines=where, path=path, guessed=guessed, as_lines=as_lines)


def _warn_empty(
    path: str,
    texts: Sequence[str],
    where: Sequence[int],
    ids: Sequence[str],
    spans: Sequence[Tuple[int, int]],
    nonempty: Sequence[bool],
) -> None:
    """One warning for the documents that are empty where their source is not: a system that wrote
    nothing for a document is a real output (its lines are then omissions), not a bad file."""
    empty = [d for d, text in enumerate(texts) if nonempty[d] and not text.strip()]
    if not empty:
        return
    first = empty[0]
    lines = sum(spans[d][1] - spans[d][0] for d in empty)
    more = f" and {len(empty) - 1} more" if len(empty) > 1 else ""
    logger.warning(
        "%s:%d: document %r%s empty but the source is not (%d of %d documents): their %d lines are omissions",
        path,
        where[first],
        ids[spans[first][0]],
        more + (" are" if len(empty) > 1 else " is"),
        len(empty),
        len(texts),
        lines,
    )


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
            raise InputError(
                f"{path}:{lineno}: not a JSON record ({json_reason(e, line=False)})", code=Code.FORMAT
            ) from None
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("doc"), str)
            or not isinstance(value.get("text"), str)
        ):
            raise InputError(
                f'{path}:{lineno}: a record needs "doc" (a string) and "text" (a string)', code=Code.FORMAT
            )
        for key in ("doc", "text"):
            bad = CONTROL.search(value[key])
            if bad:
                raise InputError(
                    f'{path}:{lineno}: the record\'s "{key}" holds a control character '
                    f"(U+{ord(bad.group()):04X}), which no translation holds",
                    code=Code.FORMAT,
                )
        doc = value["doc"]
        if doc not in where_of:
            raise InputError(f"{path}:{lineno}: document {doc!r} is not in {docids_path}", code=Code.MISMATCH)
        k = seen.get(doc, 0)
        if k >= len(where_of[doc]):
            raise InputError(
                f"{path}:{lineno}: document {doc!r} again: {docids_path} has "
                f"{len(where_of[doc])} document(s) of that id (one record per document, its whole text)",
                code=Code.FORMAT,
            )
        seen[doc] = k + 1
        d = where_of[doc][k]
        texts[d], found[d] = value["text"], lineno
    missing = [ids[spans[d][0]] for d, t in enumerate(texts) if t is None]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise InputError(f"{path}: no record for document {missing[0]!r}{more} of {docids_path}", code=Code.MISMATCH)
    return [t or "" for t in texts], found


def read_pivots(path: str, count: int, what: str) -> List[str]:
    """``--pivot``: a sentence-level translation of each source line, ``count`` lines as ``what``
    has; a document-level output (JSONL records) given as the pivot is one line, not its JSON text."""
    if path == NO_PIVOT:
        raise InputError(
            f"--pivot {NO_PIVOT}: aligning to the source lines is `contextual-mt align`'s (it writes an aligned "
            "output that this command then reads as line-aligned)",
            code=Code.OPTIONS_CONFLICT,
        )
    pivots = read_lines(path)
    if is_jsonl(pivots):
        raise InputError(
            f"{path}: JSONL records, not a sentence-level translation (--pivot: one line per source line)",
            code=Code.FORMAT,
        )
    if len(pivots) != count:
        raise InputError(
            f"{path}: has {len(pivots)} lines but {what} has {count} (--pivot: a sentence-level "
            "translation of each source line)",
            code=Code.LINE_COUNT,
        )
    return pivots


def write_alignment(path: str, records: Iterable[Dict]) -> None:
    """The alignment file: JSONL, one record per source line (and one per added segment)."""
    atomic_write_lines(path, (json.dumps(r, ensure_ascii=False) for r in records))
