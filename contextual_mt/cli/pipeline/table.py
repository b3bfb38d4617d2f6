"""``contextual-mt pipeline table`` (pipeline/study_table.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import List, Optional

from commandkit.options import from_namespace, option
from contextual_mt.cli.common import command
from contextual_mt.pipeline.study_table import TableOptions, build_table, format_markdown


@dataclass
class TableArgs:
    langs: List[str] = option(nargs="+", required=True, help="target languages, e.g. --langs de fr ja")
    results_dir: str = option(
        default=TableOptions.results_dir,
        help="where RESULTS/xx/muda/eval.json and RESULTS/xx/scores.json are (default: results)",
    )
    output_dir: Optional[str] = option(
        default=TableOptions.output_dir,
        help="where table.md, table.csv, table.json and table.png go (default: RESULTS_DIR/table, i.e. results/table)",
    )
    alpha: float = option(type=float, default=TableOptions.alpha, help="significance level (default: 0.05)")


def table(args: argparse.Namespace) -> int:
    result = build_table(from_namespace(TableOptions, args))
    print(format_markdown(result))
    print("wrote " + ", ".join(result["files"].values()))
    return 0


def add(subparsers) -> argparse.ArgumentParser:
    """The ``table`` subcommand (``contextual-mt pipeline table``)."""
    return command(
        subparsers,
        "table",
        TableArgs,
        table,
        "the cross-language results table (BLEU, COMET, word "
        "f-measure per MuDA tag; significance against the sentence-level system)",
        output_dir_args=("output_dir",),
    )
