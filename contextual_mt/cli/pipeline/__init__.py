"""``contextual-mt pipeline STAGE``: the study's stages, one module each, each a thin layer over its
library call (argparse -> options object -> function of pipeline/). The stages themselves
(pipeline/) know nothing of argparse; ``make`` and submit.sh call these commands."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from contextual_mt.errors import ContextualMTError
from contextual_mt.pipeline.make_names import in_make_words, make_usage_error, under_make


class StageParser(argparse.ArgumentParser):
    """A stage's parser: run by make, a bad option value is one line naming the Make variable
    (``error: SPM_VOCAB: invalid int value: 'x'``, exit 1) instead of a usage dump naming an
    option the user never typed."""

    def error(self, message: str):
        if under_make():
            print(f"error: {make_usage_error(message)}", file=sys.stderr)
            sys.exit(1)
        super().error(message)


def add(sub) -> None:
    """``contextual-mt pipeline STAGE``: the per-language-pair study behind ``make data|train|...``
    (the stages are declared in ``pipeline/stages.py``)."""
    p = sub.add_parser(
        "pipeline",
        help="the per-language-pair study, stage by stage (what `make data LANG=xx`, "
        "`make train`, `make translate`, `make score`, `make pcxmi`, `make muda-eval`, "
        "`make contrastive` and `make table` run)",
    )
    commands = p.add_subparsers(dest="stage", required=True, parser_class=StageParser)
    add_stage_parsers(commands)


def add_stage_parsers(commands: Any) -> None:
    """Every stage's subcommand, in the order of the study."""
    from contextual_mt.cli.pipeline import (
        attribute,
        contrastive,
        data,
        migrate,
        muda_eval,
        pcxmi,
        plan,
        table,
        testset,
        train,
        translate_score,
    )

    for add_stage in (
        data.add,
        train.add,
        translate_score.add,
        pcxmi.add,
        attribute.add,
        testset.add,
        muda_eval.add,
        contrastive.add,
        table.add,
        plan.add,
        migrate.add,
    ):
        add_stage(commands)
    for parser in commands.choices.values():
        parser.set_defaults(func=_in_make_words(parser.get_default("func")))


def _in_make_words(func):
    """A stage's errors, under make, name the Make variables (BEAM, EPOCHS, ...) the user typed."""

    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except ContextualMTError as e:
            words = in_make_words(str(e))
            if words == str(e):
                raise
            raise ContextualMTError(words, code=e.code) from None

    return run
