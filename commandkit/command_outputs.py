"""``command_outputs``: the ``outputs(...)`` of an argparse subcommand, read from its parsed
arguments (``output_args``, ``output_dir_args``); every other argument naming an existing file is
an input, which no output may replace.
"""

from __future__ import annotations

import argparse
import os
from contextlib import contextmanager, nullcontext
from typing import Any, ContextManager, Dict, Iterable, Iterator, List, Optional, Tuple

from commandkit.errors import Code, InputError
from commandkit.outputs import OutputTransaction, check_distinct, check_not_inputs, outputs

_NOT_FILES = ("command", "stage", "func", "output_args", "output_dir_args", "transaction")  # set by the parsers


def command_outputs(args: Any, parser: Optional[argparse.ArgumentParser] = None) -> ContextManager:
    """The ``outputs(...)`` of a CLI subcommand: the arguments its parser names in
    ``output_args`` (files, or lists of files) and ``output_dir_args`` (directories). Every other
    argument that names an existing file is an input, which no output may replace: one rule for
    every command, checked before any work (``parser``, when given, names the options in the
    error). A command that resumes step by step (``transaction=False``) only gets its atomic
    writes."""
    if not getattr(args, "transaction", True):
        return nullcontext()
    names = _option_names(parser, args) if parser is not None else {}

    def given(dests: Iterable[str]) -> List[Tuple[str, str]]:
        found: List[Tuple[str, str]] = []
        for dest in dests:
            value = getattr(args, dest, None)
            flag = names.get(dest, "--" + dest.replace("_", "-"))
            found += [
                (flag, v) for v in (value if isinstance(value, (list, tuple)) else [value]) if isinstance(v, str) and v
            ]
        return found

    written = (*getattr(args, "output_args", ()), *getattr(args, "output_dir_args", ()))
    for dest in written:  # '' would be read as "no output" and the results silently dropped
        if getattr(args, dest, None) == "":
            return _refuse(f"{names.get(dest, '--' + dest.replace('_', '-'))}: an empty path was given")
    empty = _empty_text(parser, args) if isinstance(parser, argparse.ArgumentParser) else None
    if empty:  # an input file '' was refused naming no option ("an empty path was given for the file")
        return _refuse(f"{empty}: an empty value was given (a file path or a value is needed; or leave the option out)")
    inputs = [
        (flag, path)
        for flag, path in given(d for d in vars(args) if d not in written + _NOT_FILES)
        if os.path.isfile(path)
    ]
    # the files a command writes or removes beside its outputs (OUTPUT.partial, a summary, a
    # report folder's files), as (what, path): no input may be one of them either
    side = getattr(args, "side_outputs", None)
    return _command_transaction(
        given(getattr(args, "output_args", ())),
        [path for _, path in given(getattr(args, "output_dir_args", ()))],
        inputs,
        list(side(args)) if side else [],
    )


def run_subcommand(args: Any, parser: argparse.ArgumentParser) -> int:
    """Run the subcommand a parsed command line chose (the ``func`` its parser set) inside its
    outputs (``command_outputs``): the one dispatch of every program built on subparsers."""
    with command_outputs(args, parser):
        return args.func(args)


@contextmanager
def _refuse(message: str) -> Iterator[None]:
    """An error raised inside the command's guard (one 'error:' line, exit 1): an empty value."""
    raise InputError(message, code=Code.OPTION_MISSING)
    yield  # pragma: no cover (a generator, for contextmanager)


@contextmanager
def _command_transaction(
    files: List[Tuple[str, str]], directories: List[str], inputs: List[Tuple[str, str]], side: List[Tuple[str, str]]
) -> Iterator[OutputTransaction]:
    check_distinct(files)  # two outputs at one path: only the last written would be kept
    check_not_inputs(files + side, inputs)  # here, inside the command's guard: one 'error:' line
    with outputs(*(path for _, path in files), directories=directories) as tx:
        yield tx


def _chosen_subparser(action: argparse.Action, args: Any) -> Optional[argparse.ArgumentParser]:
    """The parser of the subcommand chosen in ``args`` (``action`` is the subcommands' action)."""
    assert isinstance(action.choices, dict)  # argparse's subparsers action maps names to parsers
    return action.choices.get(getattr(args, action.dest, None))


def _empty_text(parser: Optional[argparse.ArgumentParser], args: Any) -> Optional[str]:
    """The first text option (a path, a language, a name: no type, no choices, no default) given an
    empty value, as the user wrote it; options declared ``empty_ok`` read it themselves."""
    while parser is not None:
        chosen = None
        for action in parser._actions:
            if action.nargs == argparse.PARSER:
                chosen = _chosen_subparser(action, args)
                continue
            if (
                not isinstance(action, argparse._StoreAction)
                or action.type is not None
                or action.choices is not None
                or action.default is not None
                or getattr(action, "empty_ok", True)
            ):
                continue
            value = getattr(args, action.dest, None)
            if value == "" or (isinstance(value, list) and "" in value):
                return next((o for o in action.option_strings if o.startswith("--")), None) or (
                    action.metavar if isinstance(action.metavar, str) else action.dest.upper()
                )
        parser = chosen
    return None


def _option_names(parser: Optional[argparse.ArgumentParser], args: Any) -> Dict[str, str]:
    """dest -> how the user wrote it (``--dump-tags``, ``SHARDS``), along the chosen subcommands."""
    names: Dict[str, str] = {}
    while parser is not None:
        chosen = None
        for action in parser._actions:
            if action.nargs == argparse.PARSER:  # the subcommands: follow the chosen one
                chosen = _chosen_subparser(action, args)
            elif action.option_strings:
                names.setdefault(
                    action.dest,
                    next((o for o in action.option_strings if o.startswith("--")), action.option_strings[0]),
                )
            else:
                names.setdefault(
                    action.dest, action.metavar if isinstance(action.metavar, str) else action.dest.upper()
                )
        parser = chosen
    return names
