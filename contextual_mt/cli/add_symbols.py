"""``contextual-mt add-symbols``."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import List

from commandkit.options import option
from contextual_mt.cli.common import command


@dataclass
class AddSymbolsArgs:
    dicts: List[str] = option(
        positional=True, nargs="+", default=[], help="dict.*.txt files written by fairseq-preprocess"
    )


def add_symbols(args: argparse.Namespace) -> int:
    from contextual_mt.symbols import add_context_symbols

    # written together when every dictionary has been checked (the command's outputs): said after
    added = [(path, add_context_symbols(path)) for path in args.dicts]
    for path, symbols in added:
        print(f"{path}: " + (f"added {' '.join(symbols)}" if symbols else "already has the context symbols"))
    return 0


def add(sub) -> None:
    command(
        sub,
        "add-symbols",
        AddSymbolsArgs,
        add_symbols,
        "append <brk> and <mask> to fairseq dictionaries (indices of existing symbols unchanged)",
        output_args=("dicts",),
    )
