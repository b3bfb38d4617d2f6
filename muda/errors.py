"""User-facing errors, for muda and the packages built on it: one clear line, no traceback, exit 1.

Kept free of heavy imports (torch, fairseq), so that muda starts fast.
"""
from __future__ import annotations

import sys


class InputError(ValueError):
    """Bad input or set-up. Its message names the file (and line) at fault."""


def _excepthook(exc_type, exc, tb, _previous=sys.excepthook):
    if issubclass(exc_type, InputError):
        print(f"error: {exc}", file=sys.stderr)
        return
    _previous(exc_type, exc, tb)


def install_excepthook() -> None:
    """Make an uncaught InputError print one line (exit status stays 1)."""
    if getattr(sys.excepthook, "__name__", "") != "_excepthook":
        sys.excepthook = _excepthook


def run_command(func, args) -> int:
    """Run a CLI subcommand: an InputError becomes one 'error:' line and exit status 1."""
    try:
        return func(args)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
