"""The document-level output of ``contextual-mt translate --unit document``: JSONL, one record per
document, in the order of the documents in the source (a document is a run of equal consecutive
ids, ``commandkit.documents.document_spans``)::

    {"doc": "talk-12",
     "text": "the whole translated document",
     "chunks": [{"lines": [1, 14], "source": "...", "text": "..."}, ...]}

``doc``: the document id; ``text``: the translation of the whole document (its chunks' texts
joined with a space; "" for a document whose source lines are all empty); ``chunks``: the units
translated in one generation each, in order: ``lines``, the 1-based first and last line of the
source file that the chunk holds (inclusive; empty source lines inside the range are skipped),
``source``, its non-empty source lines joined with a space (what the model read), and ``text``,
the translation generated for it. A reader that needs the translation only reads ``doc`` and
``text`` (``docalign`` does); those two key names are the format's contract.

Writers: ``record_line`` / ``write_records``; reader: ``read_document_records`` (one-line errors
naming the file and line)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

from commandkit.outputs import atomic_write_lines
from commandkit.text import read_lines
from contextual_mt.errors import Code, InputError


@dataclass(frozen=True)
class Chunk:
    """What one generation translated: source lines ``lines`` (1-based, inclusive)."""

    lines: Tuple[int, int]
    source: str
    text: str


@dataclass(frozen=True)
class DocumentRecord:
    doc: str
    text: str
    chunks: Tuple[Chunk, ...] = field(default_factory=tuple)

    def to_json(self) -> Dict:
        return {
            "doc": self.doc,
            "text": self.text,
            "chunks": [{"lines": list(c.lines), "source": c.source, "text": c.text} for c in self.chunks],
        }

    @classmethod
    def from_json(cls, value: object) -> DocumentRecord:
        """A record read back; ValueError saying what is wrong."""
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("doc"), str)
            or not isinstance(value.get("text"), str)
        ):
            raise ValueError('not a document record (an object with string "doc" and "text")')
        chunks = []
        for c in value.get("chunks", []):
            lines = c.get("lines") if isinstance(c, dict) else None
            if not (
                isinstance(lines, list)
                and len(lines) == 2
                and all(isinstance(n, int) for n in lines)
                and isinstance(c.get("source"), str)
                and isinstance(c.get("text"), str)
            ):
                raise ValueError('a chunk is {"lines": [FIRST, LAST], "source": ..., "text": ...}')
            chunks.append(Chunk((lines[0], lines[1]), c["source"], c["text"]))
        return cls(value["doc"], value["text"], tuple(chunks))


def record_line(record: DocumentRecord) -> str:
    """One record as one JSONL line (without the newline)."""
    return json.dumps(record.to_json(), ensure_ascii=False)


def write_records(path: str, records: Sequence[DocumentRecord]) -> None:
    """The whole file, atomically (inside the running output transaction)."""
    atomic_write_lines(path, [record_line(r) for r in records])


def read_document_records(path: str) -> List[DocumentRecord]:
    """The records of a document-level output, in order; a line that is not one is an error naming it."""
    out = []
    for n, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            out.append(DocumentRecord.from_json(json.loads(line)))
        except (json.JSONDecodeError, ValueError) as e:
            raise InputError(f"{path}:{n}: {e}", code=Code.FORMAT) from None
    return out
