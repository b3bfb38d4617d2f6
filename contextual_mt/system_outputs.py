"""A system's output as the evaluations read it (``score``, ``testset evaluate``, ``make score``).

A line-aligned file (one line per source line) is read as it is: its numbers are those of
before. A document-level output (JSONL records ``{"doc", "text"}`` or one document per line; see
``docalign.formats``) is re-aligned to the source lines by ``docalign`` against a pivot (a
sentence-level translation of each source line: the references by default) and evaluated on the
aligned hypotheses; its alignment statistics go beside the scores (``docalign.links.summary``).

Every file is read and checked first; the segmenter (spaCy) is then loaded once for all the
document-level outputs of the run, before any model an evaluation loads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

from commandkit.documents import document_spans
from contextual_mt.errors import Code, InputError
from docalign.align import AlignArgs, Alignment, AlignOptions, align_outputs, nonempty_documents
from docalign.formats import AUTO, DOCUMENTS, JSONL, LINES, SystemOutput, is_jsonl, read_system_output, write_alignment
from docalign.formats import read_pivots as read_pivot_lines

DOCUMENT_LEVEL = "a document-level output (JSONL records or one document per line) is aligned to them with --docids"


@dataclass
class Hypotheses:
    """One system output read for an evaluation: ``lines`` one per source line (the aligned ones
    for a document-level output, whose ``alignment`` is then set)."""

    path: str
    lines: List[str]
    alignment: Optional[Alignment] = None


def refuse_documents(path: str, lines: Sequence[str], needs: str = "--docids", hyp_format: str = AUTO) -> None:
    """A file read line by line (no docids) that holds JSONL document records, or is said to be
    documents (``hyp_format``, --hyp-format): one line saying what a document-level output needs,
    never its JSON text scored as translations."""
    if hyp_format in (DOCUMENTS, JSONL):
        raise InputError(f"--hyp-format {hyp_format}: a document-level output needs {needs}", code=Code.OPTION_MISSING)
    if is_jsonl(lines):
        raise InputError(
            f"{path}: JSONL document records: a document-level output needs {needs}", code=Code.OPTION_MISSING
        )


def read_pivots(align: AlignArgs, count: int, source_what: str) -> Optional[List[str]]:
    """The lines of ``--pivot`` (None when not given), one per source line: ``count`` lines as
    ``source_what`` has."""
    if align.pivot is None:
        return None
    return read_pivot_lines(align.pivot, count, source_what)


def read_hypotheses(
    paths: Sequence[str],
    ids: Sequence[str],
    docids_path: str,
    pivots: Optional[Sequence[str]],
    options: AlignOptions,
    no_pivot: str = "--pivot: not given",
) -> List[Hypotheses]:
    """Each of ``paths`` (one per source line of ``ids``, or document-level) as hypotheses:
    every file read and checked first, then the document-level ones aligned to ``pivots`` with one
    segmenter. ``no_pivot``: the error when a document-level output comes without pivots."""
    # without pivots a document-level output is refused below, whatever its documents hold
    nonempty = [False] * len(document_spans(ids)) if pivots is None else nonempty_documents(pivots, ids)
    outputs: List[SystemOutput] = []
    for path in paths:
        outputs.append(read_system_output(path, ids, docids_path, nonempty, options.hyp_format))
        if outputs[-1].format != LINES and pivots is None:
            raise InputError(f"{path}: {no_pivot}", code=Code.OPTION_MISSING)
    alignments = align_outputs(outputs, pivots or [], ids, options)
    return [
        Hypotheses(path, list(o.lines or [])) if a is None else Hypotheses(path, a.hypotheses, a)
        for path, o, a in zip(paths, outputs, alignments, strict=True)
    ]


def write_alignment_file(path: str, hypotheses: Hypotheses) -> None:
    """``--alignment-output``: the alignment records of a document-level output (one line naming
    the file when it was line-aligned: there is nothing to write)."""
    if hypotheses.alignment is None:
        raise InputError(
            f"--alignment-output {path}: {hypotheses.path} is line-aligned (one line per source line): "
            "there is no alignment to write",
            code=Code.OPTIONS_CONFLICT,
        )
    write_alignment(path, hypotheses.alignment.records())


__all__ = ["DOCUMENT_LEVEL", "Hypotheses", "read_hypotheses", "read_pivots", "refuse_documents", "write_alignment_file"]
