"""``contextual-mt translate``: its options are ``TranslateOptions`` (``inference.translate``), its
run ``contextual_mt.api.translate``."""

from __future__ import annotations

import sys

from contextual_mt.cli.common import typed_command
from contextual_mt.inference.decoding import DECODING_HELP  # noqa: F401 (the pipeline's translate options)
from contextual_mt.inference.translate import TranslateOptions
from contextual_mt.stage_record import partial_path

HELP = "translate documents, with the model's own previous translations as target context"


def translate(options: TranslateOptions) -> int:
    from contextual_mt import api

    made = api.translate(options)
    n, what = (len(made.lines), "lines") if made.lines is not None else (len(made.documents or ()), "documents")
    print(f"wrote {n} {what} to {options.output} (the model in {made.dtype})", file=sys.stderr)
    return 0


def add(sub) -> None:
    typed_command(
        sub,
        "translate",
        TranslateOptions,
        translate,
        HELP,
        output_args=("output",),
        side_outputs=lambda options: [("--output's .partial", partial_path(options.output))] if options.output else [],
    )
