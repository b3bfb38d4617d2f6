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


def test_argparse_type_comes_from_the_annotation():
    @dataclass
    class Numbers:
        beam: int = option(default=5)
        lenpen: Optional[float] = option()
        sizes: List[int] = option(nargs="+", default=[])
        name: Optional[str] = option()
        flag: bool = option(action="store_true", default=False)
        parsed: int = option(type=lambda text: int(text) * 2, default=0)  # an explicit type wins

    parser = add_options(argparse.ArgumentParser(prog="x"), Numbers)
    types = {a.dest: a.type for a in parser._actions}
    assert types == {"help": None, "beam": int, "lenpen": float, "sizes": int, "name": None, "flag": None} | {
        "parsed": types["parsed"]
    }
    got = from_namespace(Numbers, parser.parse_args(["--beam", "3", "--lenpen", "0.5", "--sizes", "1", "2"]))
    assert (got.beam, got.lenpen, got.sizes, got.name, got.parsed) == (3, 0.5, [1, 2], None, 0)
    assert from_namespace(Numbers, parser.parse_args(["--parsed", "4"])).parsed == 8


def test_an_inverse_option_and_a_group_the_caller_makes_its_value_from():
    @dataclass
    class Model:
        path: Optional[str] = option(group="model")

    @dataclass
    class Run:
        model: object = group(Model, last=True, given=True)  # e.g. a model specification made from Model
        source: str = option(required=True)
        resume: bool = option("--overwrite", "--no-resume", inverse=True, help="discard OUTPUT.partial")

    parser = add_options(argparse.ArgumentParser(prog="x"), Run)
    assert [a.dest for a in parser._actions] == ["help", "source", "overwrite", "path"]  # the group last
    overwrite = next(a for a in parser._actions if a.dest == "overwrite")
    assert (overwrite.default, overwrite.option_strings) == (False, ["--overwrite", "--no-resume"])
    args = parser.parse_args(["--source", "s", "--no-resume", "--path", "m"])
    assert from_namespace(Run, args, model=("spec", args.path)) == Run(model=("spec", "m"), source="s", resume=False)
    assert from_namespace(Run, parser.parse_args(["--source", "s"]), model=None).resume is True
    assert Run(model=None, source="s").resume is True  # the library's default: resume
    assert flat(Run(model=None, source="s", resume=False)) == {"source": "s", "overwrite": True}
    assert defaults(Run) == {"source": None, "overwrite": False, "path": None}
    with pytest.raises(TypeError, match="model is made by the caller"):
        from_namespace(Run, args)


def test_a_group_made_into_the_fields_value_and_an_option_listed_after_another():
    @dataclass
    class Rule:
        std: Optional[float] = option()
        top_k: Optional[int] = option()

        def made(self):
            return ("top", self.top_k) if self.top_k is not None else ("std", 1.0 if self.std is None else self.std)

    @dataclass
    class Command:
        source: str = option(required=True)
        output: str = option(required=True)
        reference: Optional[str] = option(after="source")  # listed after --source, the 3rd argument
        rule: tuple = group(Rule, make=Rule.made)

    parser = add_options(argparse.ArgumentParser(prog="x"), Command)
    assert [a.dest for a in parser._actions] == ["help", "source", "reference", "output", "std", "top_k"]
    got = from_namespace(Command, parser.parse_args(["--source", "s", "--output", "o", "--top-k", "2"]))
    assert got == Command("s", "o", None, ("top", 2))
    assert Command("s", "o").rule == ("std", 1.0)  # the default: made of the group's defaults
    assert flat(got) == {"source": "s", "output": "o", "reference": None}
