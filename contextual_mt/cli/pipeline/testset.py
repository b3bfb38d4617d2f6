"""``contextual-mt pipeline testset`` (pipeline/testset_stage.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Optional

from commandkit.options import group, option
from contextual_mt.cli.common import command
from contextual_mt.cli.pipeline.options import PairArgs

MUDA_TAG_ARGS_HELP = "more `muda tag` options for tagging the reference, as one string"


@dataclass
class TestsetStageArgs:
    pair: PairArgs = group(PairArgs)
    muda_tag_args: Optional[str] = option(help=MUDA_TAG_ARGS_HELP)


def testset(args: argparse.Namespace) -> int:
    from contextual_mt.pipeline.testset_stage import run_testset_stage

    run_testset_stage(args.lang, args.root, muda_tag_args=args.muda_tag_args or "")
    return 0


def add(sub) -> None:
    command(
        sub,
        "testset",
        TestsetStageArgs,
        testset,
        "contrastive test suites of the test split from the reference's MuDA tags (results/xx/testset/)",
        transaction=False,
    )  # testset build writes its own outputs together
