"""``contextual-mt pipeline translate`` and ``score`` (pipeline/translate_stage.py, pipeline/score_stage.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import List, Optional

from commandkit.options import from_namespace, option
from contextual_mt.cli.common import command, max_tokens_option, quiet_option
from contextual_mt.cli.pipeline.options import ROOT_HELP, dtype_option
from contextual_mt.cli.translate import DECODING_HELP
from contextual_mt.inference.decoding import DecodingOptions
from contextual_mt.pipeline.layout import SYSTEMS
from contextual_mt.pipeline.score_stage import ScoreStageOptions, format_scores, score_systems
from contextual_mt.pipeline.translate_stage import STUDY_BATCH_SIZE, TranslateStageOptions, translate_systems


@dataclass
class TranslateStageArgs:
    lang: str = option(required=True)
    root: str = option(default=TranslateStageOptions.root, help=ROOT_HELP)
    systems: List[str] = option(nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    beam: int = option(type=int, default=DecodingOptions.beam)
    lenpen: float = option(type=float, default=DecodingOptions.lenpen)
    batch_size: int = option(type=int, default=STUDY_BATCH_SIZE)
    max_tokens: Optional[int] = max_tokens_option()
    decoding: Optional[str] = option(help=DECODING_HELP + " (make: DECODING)")
    cpu: bool = option(action="store_true", default=False)
    dtype: str = dtype_option()
    quiet: bool = quiet_option()


def stage_options(args: argparse.Namespace) -> TranslateStageOptions:
    """The flags of the decoding group become the stage's DecodingOptions (``--decoding``: its mode)."""
    how = {} if args.decoding is None else {"decoding": args.decoding}
    decoding = DecodingOptions(
        beam=args.beam, lenpen=args.lenpen, batch_size=args.batch_size, max_tokens=args.max_tokens, **how
    )
    return from_namespace(TranslateStageOptions, args, decoding=decoding, progress=not args.quiet)


def translate(args: argparse.Namespace) -> int:
    out = translate_systems(stage_options(args))
    for system, path in out.items():
        print(f"{system}: {path}")
    return 0


@dataclass
class ScoreStageArgs:
    lang: str = option(required=True)
    root: str = option(default=ScoreStageOptions.root)
    systems: List[str] = option(nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    comet_model: Optional[str] = option(help="COMET model name or checkpoint path (unbabel-comet)")
    comet_batch_size: int = option(type=int, default=ScoreStageOptions.comet_batch_size)
    hyps: Optional[List[str]] = option(
        nargs="+",
        help="score these system outputs instead of --systems' translations (another system's too, named by "
        "its file name without .test.xx, as muda eval names it); a document-level output (JSONL or one "
        "document per line) is aligned to the references, its alignment statistics beside its scores",
    )


def score(args: argparse.Namespace) -> int:
    result = score_systems(from_namespace(ScoreStageOptions, args, hyps=args.hyps or ()))
    print(format_scores(result))
    return 0


def add(sub) -> None:
    command(
        sub,
        "translate",
        TranslateStageArgs,
        translate,
        "translate the test set with the sentence, context and context-gold systems",
        transaction=False,
    )  # its own transaction, after the up-to-date check
    command(
        sub,
        "score",
        ScoreStageArgs,
        score,
        "BLEU, chrF, d-BLEU (and COMET) of every system into results/xx/scores.json",
        transaction=False,
    )
