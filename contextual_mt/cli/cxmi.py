"""``contextual-mt cxmi`` (its options are ``CxmiOptions``, its run ``contextual_mt.api.cxmi``) and
``cxmi-merge`` (``CxmiMergeOptions``, ``contextual_mt.api.cxmi_merge``)."""

from __future__ import annotations

from contextual_mt.analysis.cxmi import CxmiOptions
from contextual_mt.analysis.cxmi_shards import CxmiMergeOptions
from contextual_mt.cli.common import cxmi_side_outputs, typed_command


def cxmi(options: CxmiOptions) -> int:
    from contextual_mt import api
    from contextual_mt.analysis.cxmi_summary import summary_line

    print(summary_line(api.cxmi(options).summary, options.output))
    return 0


def cxmi_merge(options: CxmiMergeOptions) -> int:
    from contextual_mt import api
    from contextual_mt.analysis.cxmi_summary import summary_line

    print(summary_line(api.cxmi_merge(options).summary, options.output))
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
    typed_command(
        sub,
        "cxmi-merge",
        CxmiMergeOptions,
        cxmi_merge,
        "merge the outputs of `cxmi --shard i/n` runs",
        output_args=("output",),
        side_outputs=cxmi_side_outputs,
    )
