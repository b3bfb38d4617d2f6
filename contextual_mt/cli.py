"""``contextual-mt`` command line: a thin layer over the library functions."""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from contextual_mt.errors import ContextualMTError


def _add_symbols(args: argparse.Namespace) -> int:
    from contextual_mt.symbols import add_context_symbols

    for path in args.dicts:
        added = add_context_symbols(path)
        print(f"{path}: " + (f"added {' '.join(added)}" if added else "already has the context symbols"))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="contextual-mt", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "add-symbols",
        help="append <brk> and <mask> to fairseq dictionaries (indices of existing symbols unchanged)",
    )
    p.add_argument("dicts", nargs="+", help="dict.*.txt files written by fairseq-preprocess")
    p.set_defaults(func=_add_symbols)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ContextualMTError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
