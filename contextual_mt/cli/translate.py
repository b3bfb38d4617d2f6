"""``contextual-mt translate``."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Optional

from commandkit.options import from_namespace, group, option
from contextual_mt.cli.common import ModelArgs, command, max_tokens_option, model_options, quiet_option
from contextual_mt.inference.decoding import DecodingOptions

HELP = "translate documents, with the model's own previous translations as target context"
DECODING_HELP = (
    "with predicted target context: 'sequential' (waves: the t-th sentence of every document at once), "
    "'parallel' (rounds of up to --parallel-window sentences per document, re-translating those whose "
    "context changed; the same output), 'auto' (parallel on a GPU, sequential on CPU)"
)


@dataclass
class TranslateArgs:
    source: str = option(required=True, help="source text, one sentence per line")
    docids: str = option(required=True, help="document id of each line")
    output: str = option(required=True, help="translations, one line per source line")
    gold_target_context: Optional[str] = option(
        metavar="REF", help="use these references as target context instead of the model's translations"
    )
    beam: int = option(type=int, default=DecodingOptions.beam)
    lenpen: float = option(type=float, default=DecodingOptions.lenpen)
    max_len_a: float = option(type=float, default=DecodingOptions.max_len_a)
    max_len_b: int = option(type=int, default=DecodingOptions.max_len_b)
    batch_size: int = option(
        type=int,
        default=DecodingOptions.batch_size,
        help="sentences decoded together (with predicted context: one per document in a wave)",
    )
    max_tokens: Optional[int] = max_tokens_option()
    decoding: str = option(default=DecodingOptions.decoding, help=DECODING_HELP)
    parallel_window: int = option(
        type=int, default=DecodingOptions.window, help="sentences per document a parallel round may translate"
    )
    quiet: bool = quiet_option("no progress bar")
    model: ModelArgs = group(ModelArgs)


def translate(args: argparse.Namespace) -> int:
    from contextual_mt.inference.registry import model_dtype
    from contextual_mt.inference.translate import TranslateOptions, translate_files

    decoding = from_namespace(DecodingOptions, args, window=args.parallel_window)
    model = model_options(args)
    hyps = translate_files(
        from_namespace(TranslateOptions, args, model=model, decoding=decoding, progress=not args.quiet)
    )
    print(f"wrote {len(hyps)} lines to {args.output} (the model in {model_dtype(model)})", file=sys.stderr)
    return 0


def add(sub) -> None:
    command(sub, "translate", TranslateArgs, translate, HELP, output_args=("output",))
