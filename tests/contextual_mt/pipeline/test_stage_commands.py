"""The ``contextual-mt pipeline`` subcommands come from the stage table (issue 52, point 3): each
stage's ``Command`` names its options class, whose option fields are the subcommand's options,
and its run in ``cli/pipeline/run.py`` receives the typed object; no module per stage."""

import argparse
import ast
import inspect
from pathlib import Path

from commandkit.options import option_fields
from contextual_mt.cli.pipeline import add_stage_parsers, options_class, run
from contextual_mt.pipeline.stages import EVERY

ROOT = Path(__file__).resolve().parents[3]


def _subcommands():
    parser = argparse.ArgumentParser(prog="contextual-mt pipeline")
    sub = parser.add_subparsers(dest="stage", required=True)
    add_stage_parsers(sub)
    return sub.choices


def test_each_subcommand_is_a_command_of_the_table_with_its_options_class():
    commands = [s.command for s in EVERY if s.command is not None]
    choices = _subcommands()
    assert list(choices) == [*(c.name for c in sorted(commands, key=lambda c: c.listed)), "plan", "migrate"]
    for c in commands:
        parsed = {a.dest for a in choices[c.name]._actions if a.dest != "help"}
        assert parsed == set(option_fields(options_class(c))), c.name
        # its run: a function of the typed object
        params = list(inspect.signature(getattr(run, c.name.replace("-", "_"))).parameters.values())
        assert len(params) == 1 and params[0].annotation == options_class(c).__name__, c.name


def test_the_command_line_of_the_stages_is_two_modules():
    names = sorted(p.name for p in (ROOT / "contextual_mt" / "cli" / "pipeline").glob("*.py"))
    assert names == ["__init__.py", "run.py"]


def test_the_pipelines_errors_name_their_kind_and_options_are_not_called_o():
    """Every error raised in pipeline/ and cli/pipeline/ gives its ``Code`` (E000 means no kind
    was given); no options parameter is called ``o``."""
    untyped, named_o = [], []
    for folder in ("contextual_mt/pipeline", "contextual_mt/cli/pipeline"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Raise)
                    and isinstance(node.exc, ast.Call)
                    and getattr(node.exc.func, "id", "") in ("InputError", "InputError")
                    and not any(k.arg == "code" for k in node.exc.keywords)
                ):
                    untyped.append(f"{path.relative_to(ROOT)}:{node.lineno}")
                if isinstance(node, ast.FunctionDef) and any(a.arg == "o" for a in node.args.args):
                    named_o.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert untyped == [] and named_o == []
