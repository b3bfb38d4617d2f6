"""``contextual-mt add-symbols``: its options are ``AddSymbolsOptions`` (``contextual_mt.symbols``)."""

from __future__ import annotations

from contextual_mt.cli.common import typed_command
from contextual_mt.symbols import AddSymbolsOptions


def add_symbols(options: AddSymbolsOptions) -> int:
    from contextual_mt.symbols import add_context_symbols

    # written together when every dictionary has been checked (the command's outputs): said after
    added = [(path, add_context_symbols(path)) for path in options.dicts]
    for path, symbols in added:
        print(f"{path}: " + (f"added {' '.join(symbols)}" if symbols else "already has the context symbols"))
    return 0


def add(sub) -> None:
    typed_command(
        sub,
        "add-symbols",
        AddSymbolsOptions,
        add_symbols,
        "append <brk> and <mask> to fairseq dictionaries (indices of existing symbols unchanged)",
        output_args=("dicts",),
    )
