"""``contextual-mt pipeline testset`` (pipeline/testset_stage.py) and ``cues`` (pipeline/cues_stage.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Optional

from commandkit.options import group, option
from contextual_mt.cli.common import command, quiet_option
from contextual_mt.cli.pipeline.options import PairArgs, demo_first, dtype_option

MUDA_TAG_ARGS_HELP = "more `muda tag` options for tagging the reference, as one string"


@dataclass
class TestsetStageArgs:
    pair: PairArgs = group(PairArgs)
    muda_tag_args: Optional[str] = option(help=MUDA_TAG_ARGS_HELP)


def testset(args: argparse.Namespace) -> int:
    from contextual_mt.pipeline.testset_stage import run_testset_stage

    run_testset_stage(args.lang, args.root, muda_tag_args=args.muda_tag_args or "")
    return 0


@dataclass
class CuesStageArgs:
    pair: PairArgs = group(PairArgs)
    muda_tag_args: Optional[str] = option(help=MUDA_TAG_ARGS_HELP)
    dtype: str = dtype_option()
    quiet: bool = quiet_option()


def cues(args: argparse.Namespace) -> int:
    from contextual_mt.pipeline.cues_stage import CuesStageOptions, run_cues_stage

    options = CuesStageOptions(
        args.lang, args.root, muda_tag_args=args.muda_tag_args or "", dtype=args.dtype, progress=not args.quiet
    )
    demo_first(args.lang, args.root, lambda paths: paths.checkpoint)
    run_cues_stage(options)
    return 0


def add(sub) -> None:
    command(
        sub,
        "cues",
        CuesStageArgs,
        cues,
        "does the model follow the cue? the counterfactual suite of the test split, scored by the sentence "
        "and context models, and its measures (results/xx/cues/)",
        transaction=False,
    )  # each step writes its own outputs together
    command(
        sub,
        "testset",
        TestsetStageArgs,
        testset,
        "contrastive test suites of the test split from the reference's MuDA tags (results/xx/testset/)",
        transaction=False,
    )  # testset build writes its own outputs together
