"""``contextual-mt align``: a document-level output re-aligned to its source lines (``docalign``)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from typing import List, Optional, Tuple

from commandkit.options import from_namespace, group, option
from contextual_mt.cli.common import ModelArgs, command, max_tokens_option, model_options, quiet_option
from docalign.align import AlignArgs, AlignOptions
from docalign.formats import NO_PIVOT

HELP = "re-align a document-level output (whole documents) to the source lines, for line-level evaluation"
LINK_MODEL = "the model's link score (optional: --path or --hf-model, below)"
NO_REFERENCE = "without a reference (--pivot none): the output aligned to the source lines"


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
    source: Optional[str] = option(
        group=LINK_MODEL,
        help="the source lines: with a model, its probability of the output sentences given the source "
        f"line(s) scores the links near the chrF path too (averaged with chrF); with --pivot {NO_PIVOT}, the "
        "lines the output is aligned to",
    )
    batch_size: int = option(default=64, group=LINK_MODEL, help="links scored together by the model")
    lexical_train: Optional[List[str]] = option(
        nargs=2,
        metavar=("TRAIN.SRC", "TRAIN.TGT"),
        group=NO_REFERENCE,
        help="--pivot none: the pair's training data (line-aligned source and target files), from which a "
        "lexical translation table (IBM Model 1) is learned, cached beside them (`make data` leaves the "
        "study's), to gloss each --source line word by word: the pivot chrF compares with the output",
    )
    max_tokens: Optional[int] = max_tokens_option()
    quiet: bool = quiet_option("no progress bar")
    model: ModelArgs = group(ModelArgs)


def align(args: argparse.Namespace) -> int:
    from commandkit.documents import check_line_count, read_docids
    from commandkit.errors import InputError
    from commandkit.outputs import atomic_write_lines, outputs
    from commandkit.text import read_lines
    from docalign.align import align_documents, check_guess, nonempty_documents
    from docalign.formats import LINES, read_pivots, read_system_output, write_alignment
    from docalign.links import summary

    given = from_namespace(AlignCommandArgs, args)
    options = given.align.options()  # checked before anything is read
    spec = model_options(args) if args.path or args.hf_model else None
    if given.align.pivot is None:
        raise InputError(
            "--pivot: give a sentence-level translation of each source line (e.g. `contextual-mt translate` "
            f"of a sentence-level model, or the references when evaluating), or `--pivot {NO_PIVOT}` with --source"
        )
    no_pivot = given.align.pivot == NO_PIVOT
    if no_pivot and (given.source is None or given.lexical_train is None):
        raise InputError(
            f"--pivot {NO_PIVOT} aligns to the source lines: give --source and --lexical-train TRAIN.SRC TRAIN.TGT "
            "(the pair's training data; a model, --path or --hf-model, may score the links too)"
        )
    if given.lexical_train is not None and not no_pivot:
        raise InputError(f"--lexical-train glosses the source lines for --pivot {NO_PIVOT} only")
    if not no_pivot and (spec is None) != (given.source is None):
        raise InputError(
            "--source goes with a model (--path or --hf-model) that scores the links, and a model needs --source"
        )
    if given.batch_size < 1:
        raise InputError(f"--batch-size must be at least 1 (got {given.batch_size})")
    ids = read_docids(given.docids)
    sources = None
    if given.source is not None:
        sources = read_lines(given.source)
        check_line_count(ids, given.docids, len(sources), given.source)
    if no_pivot:
        assert sources is not None and given.lexical_train is not None
        pivots, options = _source_pivots(sources, given.lexical_train, options)
    else:
        pivots = read_pivots(given.align.pivot, len(ids), given.docids)
    with outputs(given.output, given.alignment):
        read = read_system_output(
            given.hyp_documents, ids, given.docids, nonempty_documents(pivots, ids), options.hyp_format
        )
        if read.format == LINES:
            raise InputError(
                f"{given.hyp_documents}: has one line per source line: it is line-aligned already, nothing to align"
            )
        assert read.documents is not None
        link_model = None
        if spec is not None:
            from contextual_mt.contrastive.link_model import link_model as open_link_model

            link_model = open_link_model(spec, given.batch_size, given.max_tokens, progress=not given.quiet)
        result = align_documents(read.documents, pivots, ids, options, sources=sources, link_model=link_model)
        check_guess(read, result, pivots)
        atomic_write_lines(given.output, result.hypotheses)
        write_alignment(given.alignment, result.records())
    print(f"{summary(result.statistics)}; wrote {given.output} and {given.alignment}", file=sys.stderr)
    return 0


def _source_pivots(
    sources: List[str], lexical_train: List[str], options: AlignOptions
) -> Tuple[List[str], AlignOptions]:
    """``--pivot none``: the pivots in the output's language made from the source lines (their
    gloss by the lexical table learned from ``lexical_train``) and the weights for them. The table
    is needed even with a model: the model scores the links near a first path, which without a
    pivot in the output's language strays (on the demo, the source lines themselves as the pivot
    and the model's score alone linked 0.73 of the lines, the gloss 0.99; bench/RESULTS.md)."""
    from docalign.lexical.gloss import WEIGHTS, gloss_lines
    from docalign.lexical.model1 import lexical_table

    table = lexical_table(*lexical_train)
    return gloss_lines(sources, table), replace(options, weights=replace(options.weights, **WEIGHTS))


def add(sub) -> None:
    command(sub, "align", AlignCommandArgs, align, HELP, output_args=("output", "alignment"))
