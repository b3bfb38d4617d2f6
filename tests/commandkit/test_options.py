"""commandkit.options: a parser generated from option dataclasses (nested groups, argument groups,
mutually exclusive options, positionals) and the options objects built back from it."""

import argparse
from dataclasses import dataclass
from typing import List, Optional

import pytest

from commandkit.options import add_options, defaults, flat, from_namespace, group, option, parse_options


@dataclass
class Run:
    overwrite: bool = option("--overwrite", "--no-resume", action="store_true", default=False, help="redo")
    quiet: bool = option(action="store_true", default=False)


def test_a_parser_generated_from_a_dataclass():
    @dataclass
    class Top:
        files: List[str] = option(positional=True, nargs="+", default=[], help="inputs")
        beam: int = option(type=int, default=5, help="beam size")
        window: int = option("--parallel-window", type=int, default=8, metavar="N")
        reference: Optional[str] = option(exclusive="target", exclusive_required=True)
        translate: bool = option(action="store_true", default=False, exclusive="target")
        lang: Optional[str] = option(group="model", help="language")
        run: Run = group(Run)

    parser = add_options(argparse.ArgumentParser(prog="x"), Top)
    args = parser.parse_args(["a", "b", "--beam", "3", "--parallel-window", "2", "--translate", "--no-resume"])
    top = from_namespace(Top, args)
    assert top == Top(files=["a", "b"], beam=3, window=2, translate=True, run=Run(overwrite=True))
    assert flat(top)["overwrite"] is True and defaults(Top)["beam"] == 5
    text = parser.format_help()
    assert "model:\n  --lang LANG" in text and "--parallel-window N" in text
    with pytest.raises(SystemExit):
        parser.parse_args(["a", "--translate", "--reference", "r"])  # mutually exclusive
    with pytest.raises(SystemExit):
        parser.parse_args(["a"])  # one of them required


def test_parse_options_takes_given_values_and_reports_errors():
    @dataclass
    class Eval:
        src: str = option(required=True)
        seed: int = option(type=int, default=1)
        run: Run = group(Run, "run")

    errors = []

    def error(message):
        errors.append(message)
        raise ValueError(message)

    assert parse_options(Eval, ["--seed", "2", "--quiet"], src="S") == Eval("S", 2, Run(quiet=True))
    with pytest.raises(ValueError, match="unrecognized arguments: --x"):
        parse_options(Eval, ["--x"], error=error, src="S")
    with pytest.raises(ValueError, match="required: --src"):
        parse_options(Eval, [], error=error)
