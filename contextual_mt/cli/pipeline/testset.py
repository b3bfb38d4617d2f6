"""``contextual-mt pipeline testset`` (pipeline/testset_stage.py; with ``--suite``,
pipeline/suite_stage.py) and ``cues`` (pipeline/cues_stage.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import Optional

from commandkit.options import group, option
from contextual_mt.cli.common import command, quiet_option
from contextual_mt.cli.pipeline.options import PairArgs, dtype_option, ensure_demo_inputs
from contextual_mt.cli.translate import DECODING_HELP

MUDA_TAG_ARGS_HELP = "more `muda tag` options for tagging the reference, as one string"


@dataclass
class TestsetStageArgs:
    pair: PairArgs = group(PairArgs)
    muda_tag_args: Optional[str] = option(help=MUDA_TAG_ARGS_HELP)
    suite: Optional[str] = option(
        metavar="DIR",
        help="instead of the suites of the test split: a suite imported by `contextual-mt testset import`, "
        "translated by the sentence and context models, scored by `testset evaluate` (and `contrastive` on "
        "its variants) into results/xx/suites/NAME/ (make: SUITE)",
    )
    beam: Optional[int] = option(type=int, help="--suite: the beam size (default: make translate's)")
    decoding: Optional[str] = option(help="--suite: " + DECODING_HELP + " (make: DECODING)")
    dtype: str = dtype_option()
    quiet: bool = quiet_option()


def testset(args: argparse.Namespace) -> int:
    if args.suite is not None:
        return suite(args)
    from contextual_mt.errors import ContextualMTError
    from contextual_mt.pipeline.testset_stage import run_testset_stage

    for flag, value in (("--beam", args.beam), ("--decoding", args.decoding)):
        if value is not None:
            raise ContextualMTError(f"{flag}: used with --suite only (the translations of an imported suite)")
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
    ensure_demo_inputs(args.lang, args.root, lambda paths: paths.checkpoint)
    run_cues_stage(options)
    return 0


def suite(args: argparse.Namespace) -> int:
    from contextual_mt.errors import ContextualMTError
    from contextual_mt.pipeline.suite_stage import SuiteStageOptions, run_suite_stage
    from contextual_mt.pipeline.translate_stage import study_decoding

    if args.muda_tag_args:
        raise ContextualMTError("--muda-tag-args: not used with --suite (an imported suite is not tagged)")
    how: dict = {"beam": args.beam} if args.beam is not None else {}
    if args.decoding is not None:
        how["decoding"] = args.decoding
    decoding = replace(study_decoding(), **how)  # checked when made: one line naming the option
    options = SuiteStageOptions(
        args.lang, args.suite, args.root, decoding=decoding, dtype=args.dtype, progress=not args.quiet
    )
    summary = run_suite_stage(options)
    print(f"{summary['suite']}: {options.folder} (summary.json, evaluation.txt)")
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
        "contrastive test suites of the test split from the reference's MuDA tags (results/xx/testset/); "
        "with --suite, an imported suite through the pair's models (results/xx/suites/NAME/)",
        transaction=False,
    )  # testset build writes its own outputs together
