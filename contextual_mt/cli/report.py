"""``contextual-mt report``: its options are ``ReportOptions`` (``analysis.report``), its run
``contextual_mt.api.report``."""

from __future__ import annotations

import os

from contextual_mt.analysis.report import ReportOptions
from contextual_mt.cli.common import typed_command


def report(options: ReportOptions) -> int:
    from contextual_mt import api
    from contextual_mt.analysis.report import report_lines

    print("\n".join(report_lines(api.report(options), options.output_dir)))
    return 0


def report_side_outputs(options: ReportOptions):
    from contextual_mt.analysis.report import ATTRIBUTION_OUTPUTS, OUTPUTS

    return [
        (f"the report's {name}", os.path.join(options.output_dir, name))
        for name in (*OUTPUTS, *ATTRIBUTION_OUTPUTS, "annotations.conllu")
    ]


def add(sub) -> None:
    typed_command(
        sub,
        "report",
        ReportOptions,
        report,
        "tables, a plot and an HTML viewer of P-CXMI per POS class, tag, vocabulary item and token",
        output_dir_args=("output_dir",),
        side_outputs=report_side_outputs,
    )
