"""``contextual-mt align``: a document-level output re-aligned to its source lines (``docalign``)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from commandkit.options import from_namespace, group, option
from contextual_mt.cli.common import command
from docalign.align import AlignArgs

HELP = "re-align a document-level output (whole documents) to the source lines, for line-level evaluation"


@dataclass
class AlignCommandArgs:
    hyp_documents: str = option(
        required=True,
        metavar="OUTPUT",
        help='the system\'s output: JSONL records {"doc", "text"} (as `translate --unit document` writes) '
        "or one document per line, in the docids file's order",
    )
    docids: str = option(required=True, help="document id of each source line")
    output: str = option(required=True, help="the aligned hypothesis, one line per source line")
    alignment: str = option(
        required=True, help="the alignment: JSONL, one record per source line (its segments, link type, score)"
    )
    align: AlignArgs = group(AlignArgs)


def align(args: argparse.Namespace) -> int:
    from commandkit.documents import check_line_count, read_docids
    from commandkit.errors import InputError
    from commandkit.outputs import atomic_write_lines, outputs
    from commandkit.text import read_lines
    from docalign.align import align_system_output
    from docalign.formats import write_alignment
    from docalign.links import summary

    given = from_namespace(AlignArgs, args)
    options = given.options()  # checked before anything is read
    if given.pivot is None:
        raise InputError(
            "--pivot: give a sentence-level translation of each source line (e.g. `contextual-mt translate` "
            "of a sentence-level model, or the references when evaluating)"
        )
    ids = read_docids(args.docids)
    pivots = read_lines(given.pivot)
    check_line_count(ids, args.docids, len(pivots), given.pivot)
    with outputs(args.output, args.alignment):
        result = align_system_output(args.hyp_documents, pivots, ids, args.docids, options)
        if result is None:
            raise InputError(
                f"{args.hyp_documents}: has one line per source line: it is line-aligned already, nothing to align"
            )
        atomic_write_lines(args.output, result.hypotheses)
        write_alignment(args.alignment, result.records())
    print(f"{summary(result.statistics)}; wrote {args.output} and {args.alignment}", file=sys.stderr)
    return 0


def add(sub) -> None:
    command(sub, "align", AlignCommandArgs, align, HELP, output_args=("output", "alignment"))
