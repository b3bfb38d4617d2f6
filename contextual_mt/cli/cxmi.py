"""``contextual-mt cxmi`` and ``cxmi-merge``."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import List, Optional

from commandkit.options import from_namespace, group, option
from contextual_mt.analysis.cxmi import CxmiOptions
from contextual_mt.cli.common import (
    RESUME_HELP,
    ModelArgs,
    command,
    cxmi_side_outputs,
    max_tokens_option,
    model_options,
    overwrite_option,
    quiet_option,
)


@dataclass
class CxmiArgs:
    """``contextual-mt cxmi``: the references scored with and without context (``CxmiOptions``, the
    model and the run options given as options)."""

    source: str = option(required=True, help="source text, one sentence per line")
    reference: str = option(required=True, help="the reference translation, line by line: what is scored")
    docids: str = option(required=True, help="document id of each line (a document: equal consecutive ids)")
    output: str = option(required=True, help="JSONL, one record per sentence (a .summary.json is written beside it)")
    log_base: str = option(choices=["e", "2"], default=CxmiOptions.log_base, help="e: nats (default); 2: bits")
    random_context: bool = option(
        action="store_true", default=False, help="control: take the context from random other documents"
    )
    seed: int = option(default=CxmiOptions.seed)
    shard: Optional[str] = option(empty_ok=True, help="i/n: score the i-th of n parts of the documents")
    batch_size: int = option(default=CxmiOptions.batch_size, help="sentences per batch")
    max_tokens: Optional[int] = max_tokens_option()
    overwrite: bool = overwrite_option(RESUME_HELP, "--no-resume")
    skip_up_to_date: bool = option(
        action="store_true",
        default=False,
        help="do nothing when OUTPUT and its summary were made from these inputs and "
        "options (same content hashes); what `make pcxmi` uses",
    )
    quiet: bool = quiet_option()
    model: ModelArgs = group(ModelArgs)


def cxmi(args: argparse.Namespace) -> int:
    from contextual_mt.analysis.cxmi import run_cxmi
    from contextual_mt.analysis.cxmi_summary import summary_line

    summary = run_cxmi(
        from_namespace(CxmiOptions, args, model=model_options(args), resume=not args.overwrite, progress=not args.quiet)
    )
    print(summary_line(summary, args.output))
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
    command(
        sub,
        "cxmi",
        CxmiArgs,
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
