"""``contextual-mt report``."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Optional

from commandkit.options import from_namespace, option
from contextual_mt.analysis.report import ReportOptions
from contextual_mt.cli.common import command


@dataclass
class ReportArgs:
    pcxmi: str = option(positional=True, default="", help="JSONL written by `contextual-mt cxmi`")
    output_dir: str = option(required=True)
    conllu: Optional[str] = option(help="CoNLL-U of the references (UPOS and FEATS), one sentence per line")
    stanza_lang: Optional[str] = option(help="annotate the references with this stanza pipeline instead")
    stanza_dir: Optional[str] = option(
        help="stanza resources directory (default: $STANZA_RESOURCES_DIR or ~/stanza_resources)"
    )
    tags: Optional[str] = option(help="MuDA tags JSON of the references (`muda tag --dump-tags`)")
    lang: Optional[str] = option(
        help="the references' language: without --conllu/--stanza-lang/--tags, words are "
        "split off their punctuation by its Moses rules (default: --stanza-lang, else "
        "generic rules)"
    )
    min_count: int = option(default=ReportOptions.min_count, help="vocabulary items seen fewer times are left out")
    top: int = option(default=ReportOptions.top, help="how many top tokens to list")
    attribution: Optional[str] = option(
        help="JSONL of `contextual-mt attribute --reference` on the same sentences: "
        "the viewer marks context-sensitive words and shows their cues; cue_pairs.csv "
        "and report.md list the most frequent (target word, cue word) pairs per tag"
    )
    top_pairs: int = option(
        default=ReportOptions.top_pairs,
        help="(target word, cue word) pairs listed per tag in report.md (cue_pairs.csv has all)",
    )


def report(args: argparse.Namespace) -> int:
    from contextual_mt.analysis.report import report_lines, run_report

    summary = run_report(from_namespace(ReportOptions, args))
    print("\n".join(report_lines(summary, args.output_dir)))
    return 0


def report_side_outputs(args: argparse.Namespace):
    from contextual_mt.analysis.report import ATTRIBUTION_OUTPUTS, OUTPUTS

    return [
        (f"the report's {name}", os.path.join(args.output_dir, name))
        for name in (*OUTPUTS, *ATTRIBUTION_OUTPUTS, "annotations.conllu")
    ]


def add(sub) -> None:
    command(
        sub,
        "report",
        ReportArgs,
        report,
        "tables, a plot and an HTML viewer of P-CXMI per POS class, tag, vocabulary item and token",
        output_dir_args=("output_dir",),
        side_outputs=report_side_outputs,
    )
