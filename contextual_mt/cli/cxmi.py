"""``contextual-mt cxmi`` (its options are ``CxmiOptions``, its run ``contextual_mt.api.cxmi``) and
``cxmi-merge``."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import List

from commandkit.options import option
from contextual_mt.analysis.cxmi import CxmiOptions
from contextual_mt.cli.common import command, cxmi_side_outputs, typed_command


def cxmi(options: CxmiOptions) -> int:
    from contextual_mt import api
    from contextual_mt.analysis.cxmi_summary import summary_line

    print(summary_line(api.cxmi(options).summary, options.output))
    return 0


@dataclass
class CxmiMergeArgs:
    shards: List[str] = option(positional=True, nargs="+", default=[], help="JSONL outputs of the shards")
    output: str = option(required=True)


def cxmi_merge(args: argparse.Namespace) -> int:
    from contextual_mt.analysis.cxmi_shards import merge_shards
    from contextual_mt.analysis.cxmi_summary import summary_line

    print(summary_line(merge_shards(args.shards, args.output), args.output))
    return 0


def add(sub) -> None:
    typed_command(
        sub,
        "cxmi",
        CxmiOptions,
        cxmi,
        "corpus CXMI and token-level P-CXMI of references, with one model trained with dynamic context size",
        output_args=("output",),
        side_outputs=cxmi_side_outputs,
    )


def add_merge(sub) -> None:
    command(
        sub,
        "cxmi-merge",
        CxmiMergeArgs,
        cxmi_merge,
        "merge the outputs of `cxmi --shard i/n` runs",
        output_args=("output",),
        side_outputs=cxmi_side_outputs,
    )
