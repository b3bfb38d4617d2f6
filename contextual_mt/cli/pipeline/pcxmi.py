"""``contextual-mt pipeline pcxmi`` and ``report`` (pipeline/pcxmi.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Optional

from commandkit.options import from_namespace, group, option
from contextual_mt.cli.common import PARTIAL_HELP, command, overwrite_option, quiet_option
from contextual_mt.cli.pipeline.options import PairArgs, dtype_option, ensure_demo_inputs
from contextual_mt.pipeline.layout import eval_paths
from contextual_mt.pipeline.pcxmi import PcxmiStageOptions, ReportInputs, report_stage, run_pcxmi_stage

REPORT_INPUTS = (
    'what the report joins P-CXMI with (make: REPORT_ARGS="..."); by default data/xx/test.xx.conllu, '
    "the MuDA tags of the reference and the attribution of 'make attribute' when they are there"
)
SHARDS = "shards"  # --shard and --merge-shards: one or the other


@dataclass
class ReportInputArgs:
    """``pipeline.pcxmi.ReportInputs`` (the same fields)."""

    conllu: Optional[str] = option(group=REPORT_INPUTS, help="CoNLL-U of the test references: P-CXMI per POS class")
    stanza: bool = option(
        action="store_true",
        default=False,
        group=REPORT_INPUTS,
        help="annotate the test references with stanza (the target language's model; cached in the "
        "report folder as annotations.conllu)",
    )
    stanza_dir: Optional[str] = option(group=REPORT_INPUTS, help="stanza's model folder (with --stanza)")
    tags: Optional[str] = option(
        group=REPORT_INPUTS, help="MuDA tags of the test references (muda tag's JSON): P-CXMI per phenomenon"
    )
    attribution: Optional[str] = option(
        group=REPORT_INPUTS,
        help="`contextual-mt attribute --reference` records of the same sentences: cues in the viewer and "
        "(target word, cue word) pairs (default: results/xx/attribution.jsonl of 'make attribute' when it is "
        "of the same context model)",
    )


@dataclass
class PcxmiArgs:
    pair: PairArgs = group(PairArgs)
    shard: Optional[str] = option(
        metavar="I/N", exclusive=SHARDS, help="only shard I of N (1-based; no report): the Slurm array's task"
    )
    merge_shards: Optional[str] = option(metavar="N", exclusive=SHARDS, help="join the N shards, then the report")
    overwrite: bool = overwrite_option(PARTIAL_HELP)
    dtype: str = dtype_option()
    quiet: bool = quiet_option()
    report: ReportInputArgs = group(ReportInputArgs)


def pcxmi(args: argparse.Namespace) -> int:
    options = from_namespace(
        PcxmiStageOptions, args, progress=not args.quiet, report=from_namespace(ReportInputs, args)
    )
    ensure_demo_inputs(args.lang, args.root, lambda paths: paths.checkpoint)
    run_pcxmi_stage(options)
    return 0


@dataclass
class ReportArgs:
    pair: PairArgs = group(PairArgs)
    report: ReportInputArgs = group(ReportInputArgs)


def report(args: argparse.Namespace) -> int:
    report_stage(eval_paths(args.lang, args.root), from_namespace(ReportInputs, args))
    return 0


def add(sub) -> None:
    command(
        sub,
        "pcxmi",
        PcxmiArgs,
        pcxmi,
        "P-CXMI of the test references with the context model, and its report",
        transaction=False,
    )  # each output is its own transaction
    command(
        sub,
        "report",
        ReportArgs,
        report,
        "the P-CXMI report (tables, plot, viewer) of results/xx/pcxmi.jsonl",
        transaction=False,
    )
