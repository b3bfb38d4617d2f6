"""``contextual-mt translate``."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Optional

from commandkit.options import from_namespace, group, option
from contextual_mt.cli.common import (
    RESUME_HELP,
    ModelArgs,
    command,
    max_tokens_option,
    model_options,
    overwrite_option,
    quiet_option,
)
from contextual_mt.errors import ContextualMTError
from contextual_mt.inference.decoding import UNITS, DecodingOptions
from contextual_mt.stage_record import partial_path

HELP = "translate documents, with the model's own previous translations as target context"
DECODING_HELP = (
    "with predicted target context: 'sequential' (waves: the t-th sentence of every document at once), "
    "'parallel' (rounds of up to --parallel-window sentences per document, re-translating those whose "
    "context changed; the same output), 'auto' (parallel on a GPU, sequential on CPU)"
)

UNIT_HELP = (
    "sentence: one generation per source line, output line-aligned (default); document: each "
    "document, or chunk of whole sentences within --max-source-tokens, in one generation, the "
    "previous chunk as context (--hf-model only); output JSONL, resumable"
)


@dataclass
class TranslateArgs:
    source: str = option(required=True, help="source text, one sentence per line")
    docids: str = option(required=True, help="document id of each line")
    output: str = option(
        required=True,
        help="translations, one line per source line (--unit document: JSONL, one record per document)",
    )
    gold_target_context: Optional[str] = option(
        metavar="REF", help="use these references as target context instead of the model's translations"
    )
    beam: int = option(default=DecodingOptions.beam)
    lenpen: float = option(default=DecodingOptions.lenpen)
    max_len_a: float = option(default=DecodingOptions.max_len_a)
    max_len_b: int = option(default=DecodingOptions.max_len_b)
    batch_size: Optional[int] = option(
        help="sentences decoded together (default: 32; a fairseq checkpoint on a GPU: 512, at most "
        "16,384 tokens with context, unless --max-tokens is given)",
    )
    max_tokens: Optional[int] = max_tokens_option()
    decoding: str = option(default=DecodingOptions.decoding, help=DECODING_HELP)
    parallel_window: int = option(
        default=DecodingOptions.window, help="sentences per document a parallel round may translate"
    )
    unit: str = option(default=UNITS[0], metavar="{" + ",".join(UNITS) + "}", help=UNIT_HELP)
    max_source_tokens: Optional[int] = option(
        help="--unit document: source tokens (the model tokenizer's) per chunk of whole sentences "
        "(default: what fits the model's positions with room for the translation, per --max-len-a/b)",
    )
    overwrite: bool = overwrite_option("--unit document: " + RESUME_HELP)
    quiet: bool = quiet_option("no progress bar")
    model: ModelArgs = group(ModelArgs)


def translate(args: argparse.Namespace) -> int:
    from contextual_mt.inference.document_unit import NEEDS_HF
    from contextual_mt.inference.registry import model_dtype
    from contextual_mt.inference.translate import TranslateOptions, translate_document_files, translate_files

    if args.unit == "document" and args.path:  # before the checkpoint is looked at
        raise ContextualMTError(NEEDS_HF)
    decoding = from_namespace(DecodingOptions, args, window=args.parallel_window)
    model = model_options(args)
    options = from_namespace(
        TranslateOptions, args, model=model, decoding=decoding, progress=not args.quiet, resume=not args.overwrite
    )
    if options.unit == "document":
        n, what = translate_document_files(options), "documents"
    else:
        n, what = len(translate_files(options)), "lines"
    print(f"wrote {n} {what} to {args.output} (the model in {model_dtype(model)})", file=sys.stderr)
    return 0


def add(sub) -> None:
    command(
        sub,
        "translate",
        TranslateArgs,
        translate,
        HELP,
        output_args=("output",),
        side_outputs=lambda a: [("--output's .partial", partial_path(a.output))] if a.output else [],
    )
