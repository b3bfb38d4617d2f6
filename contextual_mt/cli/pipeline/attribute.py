"""``contextual-mt pipeline attribute`` (pipeline/attribute_stage.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Optional

from commandkit.options import group, option
from contextual_mt.cli.common import PARTIAL_HELP, command, overwrite_option, quiet_option
from contextual_mt.cli.pipeline.options import PairArgs, ensure_demo_inputs
from contextual_mt.pipeline.make_names import parse_words, split_words


@dataclass
class AttributeStageArgs:
    pair: PairArgs = group(PairArgs)
    attribute_args: Optional[str] = option(
        help="`contextual-mt attribute` method options, as one string (e.g. "
        '"--method input_x_gradient --cti-top-k 2"; make: ATTRIBUTE_ARGS)'
    )
    overwrite: bool = overwrite_option(PARTIAL_HELP)
    dtype: Optional[str] = option(
        help="float32 (and auto, which is float32 here): the gradients of fairseq "
        "checkpoints are computed in float32; half precision is refused (make: DTYPE)"
    )
    quiet: bool = quiet_option()


def attribute(args: argparse.Namespace) -> int:
    from contextual_mt.cli.attribute import AttributionMethodArgs
    from contextual_mt.pipeline.attribute_stage import AttributeStageOptions, attribute_options, run_attribute_stage

    words = split_words(args.attribute_args, "--attribute-args")
    method = parse_words(AttributionMethodArgs, words, "--attribute-args", "attribute")
    options = AttributeStageOptions(
        args.lang,
        args.root,
        method.options(),
        overwrite=args.overwrite,
        progress=not args.quiet,
        dtype="auto" if args.dtype is None else args.dtype,
    )
    attribute_options(options)  # checked before the demo runs
    ensure_demo_inputs(args.lang, args.root, lambda paths: paths.checkpoint)
    run_attribute_stage(options)
    return 0


def add(sub) -> None:
    command(
        sub,
        "attribute",
        AttributeStageArgs,
        attribute,
        "context attribution (CTI + CCI) of the test references with the context model: results/xx/attribution.jsonl",
        transaction=False,
    )  # attribute writes its own outputs atomically
