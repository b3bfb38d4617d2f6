"""``contextual-mt pipeline muda-eval`` (pipeline/muda_eval.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import List, Optional

from commandkit.options import from_namespace, group, option
from contextual_mt.cli.common import command
from contextual_mt.cli.pipeline.options import PairArgs, ensure_demo_inputs
from contextual_mt.cli.pipeline.testset import MUDA_TAG_ARGS_HELP


@dataclass
class MudaEvalArgs:
    pair: PairArgs = group(PairArgs)
    hyps: Optional[List[str]] = option(
        nargs="+", help="systems to compare, the first the baseline (default: the study's translations)"
    )
    muda_args: Optional[str] = option(
        help="more `muda eval` options, as one string (default: the demo's lexicon, or --comet-model)"
    )
    muda_tag_args: Optional[str] = option(help=MUDA_TAG_ARGS_HELP)
    comet_model: Optional[str] = option(help="also COMET in `muda eval` (when --muda-args is not given)")


def muda_eval(args: argparse.Namespace) -> int:
    from contextual_mt.pipeline.muda_eval import MudaEvalOptions, run_muda_eval

    # the demo's context model's translation
    ensure_demo_inputs(args.lang, args.root, lambda paths: paths.translations[-1])
    run_muda_eval(from_namespace(MudaEvalOptions, args, hyps=args.hyps or (), muda_tag_args=args.muda_tag_args or ""))
    return 0


def add(sub) -> None:
    command(
        sub,
        "muda-eval",
        MudaEvalArgs,
        muda_eval,
        "MuDA evaluation of the translations (the reference tagged once)",
        transaction=False,
    )  # muda's commands run their own transactions
