"""The command-line surface of ``contextual-mt`` and ``muda``: every (sub)command's options (flags,
dest, default, type, choices, nargs, required, action kind, help, metavar, group), its ``--help``
text and its usage error for an empty command line, as one JSON-able dict.

``tests/fixtures/cli_surface.json`` holds the surface of the code before the option dataclasses
became the one source of the parsers (issue 37, point 2); ``tests/test_cli_surface.py`` checks that
the parsers still produce exactly that. Regenerate (only for a deliberate change, e.g. an added
alias, in its own commit): ``python -m tests.cli_surface > tests/fixtures/cli_surface.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
from typing import Any, Dict, List


def _name(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_name(v) for v in value]
    return getattr(value, "__name__", None) or type(value).__name__


def _group_of(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    for group in parser._action_groups:
        if action in group._group_actions:
            return group.title or ""
    return ""


def _exclusive(parser: argparse.ArgumentParser, action: argparse.Action) -> List[Any]:
    for group in parser._mutually_exclusive_groups:
        if action in group._group_actions:
            return [[a.dest for a in group._group_actions], group.required]
    return []


def _usage_error(parser: argparse.ArgumentParser, path: List[str], main) -> Dict[str, Any]:
    """What ``COMMAND PATH`` (no more arguments) prints and returns."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            parser.parse_args(path)
            code = None
        except SystemExit as e:
            code = e.code
    return {"exit": code, "stderr": err.getvalue()}


def surface(parser: argparse.ArgumentParser, path: List[str] = ()) -> Dict[str, Any]:
    """``{"PROG SUB ...": {...}}`` for ``parser`` and every subparser below it."""
    path = list(path)
    options, subcommands = [], {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                subcommands[name] = sub
            options.append(
                {
                    "subcommands": list(action.choices),
                    "dest": action.dest,
                    "required": action.required,
                    "parser_class": action._parser_class.__name__,
                    "help": {c.dest: c.help for c in action._choices_actions},
                }
            )
            continue
        options.append(
            {
                "flags": list(action.option_strings),
                "dest": action.dest,
                "default": _name(action.default),
                "type": _name(action.type),
                "choices": _name(list(action.choices)) if action.choices is not None else None,
                "nargs": _name(action.nargs),
                "const": _name(action.const),
                "required": action.required,
                "action": type(action).__name__,
                "help": action.help,
                "metavar": _name(action.metavar),
                "group": _group_of(parser, action),
                "exclusive": _exclusive(parser, action),
            }
        )
    defaults = {k: "callable" if callable(v) else _name(v) for k, v in sorted(parser._defaults.items()) if k != "func"}
    out = {
        parser.prog: {
            "prog": parser.prog,
            "class": type(parser).__name__,
            "description": parser.description,
            "options": options,
            "set_defaults": defaults,
            "help_text": parser.format_help(),
            "empty_command_line": _usage_error(parser, [], None),
        }
    }
    for name, sub in subcommands.items():
        out.update(surface(sub, [*path, name]))
    return out


def current_surface() -> Dict[str, Any]:
    os.environ["COLUMNS"] = "120"  # help texts wrap at a fixed width
    os.environ.pop("CONTEXTUAL_MT_MAKE", None)
    from unittest import mock

    from contextual_mt.cli import build_parser as contextual_mt_parser
    from muda.cli import build_parser as muda_parser

    with mock.patch("os.cpu_count", return_value=2):  # `pipeline data --workers`: "default: 2" on every machine
        return {**surface(contextual_mt_parser()), **surface(muda_parser())}


if __name__ == "__main__":
    print(json.dumps(current_surface(), indent=1, sort_keys=True))
