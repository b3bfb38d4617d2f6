"""``contextual-mt pipeline STAGE``: the study's stages, their subcommands generated from the stage
table (``pipeline/stages.py``): each stage's ``Command`` names its options class (declared once,
with ``commandkit``'s ``option``), whose fields the parser is made from, and its run is the function
of the same name in ``run.py``, which receives the typed options object. The stages
themselves (pipeline/) know nothing of argparse; ``make`` and submit.sh call these commands."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any, Callable

from contextual_mt.cli.common import typed_command
from contextual_mt.pipeline.make_names import make_usage_error, named_as_typed, under_make
from contextual_mt.pipeline.stages import EVERY, Command


class StageParser(argparse.ArgumentParser):
    """A stage's parser: run by make, a bad option value is one line naming the Make variable
    (``error: SPM_VOCAB: invalid int value: 'x'``, exit 1) instead of a usage dump naming an
    option the user never typed."""

    def parse_known_args(self, args=None, namespace=None):
        if not under_make():
            return super().parse_known_args(args, namespace)
        self.exit_on_error = False  # argparse's error about one option: named by its variable, below
        try:
            return super().parse_known_args(args, namespace)
        except argparse.ArgumentError as e:
            self.error(make_usage_error((e.argument_name or "").split("/")[0], e.message))

    def error(self, message: str):
        if under_make():
            print(f"error: {message}", file=sys.stderr)
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
    """Every stage's subcommand, from the stage table (in the order its ``listed`` says), then the
    commands about the study as a whole (plan, migrate)."""
    from contextual_mt.cli.pipeline import run

    for c in sorted((s.command for s in EVERY if s.command is not None), key=lambda c: c.listed):
        cls = options_class(c)
        p = typed_command(
            commands,
            c.name,
            cls,
            _stage_run(c, getattr(run, c.name.replace("-", "_"))),
            c.help,
            parser_settings=_parser_settings(cls),
            **dict(c.defaults),
        )
        p.set_defaults(func=_named_as_typed(p.get_default("func")))
    run.add_study_commands(commands)


def _named_as_typed(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """The stage's options built and run while messages name each option as the user gave it
    (under make: its Make variable, as the stage table declares)."""

    def named(args: argparse.Namespace) -> int:
        with named_as_typed():
            return func(args)

    return named


def options_class(c: Command) -> Any:
    """The options class a command declares (``module:Class``)."""
    module, _, name = c.options.partition(":")
    return getattr(importlib.import_module(module), name)


def _parser_settings(cls: Any) -> dict:
    description = getattr(cls, "DESCRIPTION", None)
    if description is None:
        return {}
    return {"description": description, "formatter_class": argparse.RawDescriptionHelpFormatter}


def _stage_run(c: Command, func: Callable[[Any], int]) -> Callable[[Any], int]:
    """The stage's run, after the demo when the stage reads what the demo makes (``demo_first``)."""
    if not c.demo_first:
        return func

    def run(options: Any) -> int:
        from contextual_mt.demo.pipeline import run_demo_first
        from contextual_mt.pipeline.layout import DEMO, eval_paths

        paths = eval_paths(options.lang, options.root)
        if paths.pair == DEMO:
            run_demo_first(paths.translations[-1] if c.demo_first == "translation" else paths.checkpoint)
        return func(options)

    return run
