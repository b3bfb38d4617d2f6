"""``contextual-mt score``."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Optional

from commandkit.options import from_namespace, group, option
from contextual_mt.cli.common import command, keyword_default
from contextual_mt.metrics import score_files
from docalign.align import AlignArgs


@dataclass
class ScoreArgs:
    hyp: str = option(
        required=True,
        help="system output, one line per reference line; or a document-level output (JSONL records "
        '{"doc", "text"}, or one document per line, with --docids), scored through its alignment to the '
        "reference lines",
    )
    ref: str = option(required=True, help="references")
    docids: Optional[str] = option(help="document ids: adds d-BLEU, and Doc-COMET with --comet-model")
    source: Optional[str] = option(help="source sentences (needed by COMET)")
    comet_model: Optional[str] = option(help="COMET model name or checkpoint path (unbabel-comet)")
    comet_batch_size: int = option(default=keyword_default(score_files, "comet_batch_size"))
    doc_comet_context: int = option(
        default=keyword_default(score_files, "doc_comet_context"),
        help="Doc-COMET: preceding sentences of the same document encoded as context "
        "(default: %(default)s, as in Vernikos et al. 2022)",
    )
    output: Optional[str] = option(help="write the full result as JSON here")
    alignment_output: Optional[str] = option(
        help="a document-level --hyp: write its alignment to the reference lines here (JSONL, one record per line)"
    )
    align: AlignArgs = group(AlignArgs)


def score(args: argparse.Namespace) -> int:
    from contextual_mt.metrics import summary_line

    result = score_files(
        args.hyp,
        args.ref,
        docids=args.docids,
        source=args.source,
        comet_model=args.comet_model,
        comet_batch_size=args.comet_batch_size,
        output=args.output,
        doc_comet_context=args.doc_comet_context,
        align=from_namespace(AlignArgs, args),
        alignment_output=args.alignment_output,
    )
    print(summary_line(result))
    if args.output is None:
        import json

        print(json.dumps({k: v for k, v in result.items() if k != "files"}, indent=2))
    return 0


def add(sub) -> None:
    command(
        sub,
        "score",
        ScoreArgs,
        score,
        "sacreBLEU BLEU and chrF, document-level BLEU, COMET and Doc-COMET",
        output_args=("output", "alignment_output"),
    )
