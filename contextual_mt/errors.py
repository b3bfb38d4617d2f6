"""User-facing errors: one clear line, no traceback, non-zero exit."""
from __future__ import annotations

import sys


class ContextualMTError(ValueError):
    """Bad input or set-up. Its message names the file (and line) at fault."""


def _excepthook(exc_type, exc, tb, _previous=sys.excepthook):
    if issubclass(exc_type, ContextualMTError):
        print(f"error: {exc}", file=sys.stderr)
        return
    _previous(exc_type, exc, tb)


def install_excepthook() -> None:
    """Make an uncaught ContextualMTError print one line (exit status stays 1)."""
    if getattr(sys.excepthook, "__name__", "") != "_excepthook":
        sys.excepthook = _excepthook
