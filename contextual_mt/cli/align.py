"""``contextual-mt align``: a document-level output re-aligned to its source lines (``docalign``);
its options are ``contextual_mt.api.AlignCommandOptions``, its run ``contextual_mt.api.align``."""

from __future__ import annotations

import sys

from contextual_mt.api import ALIGN_HELP, AlignCommandOptions
from contextual_mt.cli.common import typed_command


def align(options: AlignCommandOptions) -> int:
    from contextual_mt import api
    from docalign.links import summary

    result = api.align(options)
    print(f"{summary(result.statistics)}; wrote {options.output} and {options.alignment}", file=sys.stderr)
    return 0


def add(sub) -> None:
    typed_command(sub, "align", AlignCommandOptions, align, ALIGN_HELP, output_args=("output", "alignment"))
