"""User-facing errors, for muda and the packages built on it: one clear line, no traceback, exit 1.

Kept free of heavy imports (torch, fairseq), so that muda starts fast.
"""
from __future__ import annotations

import math
import sys
from contextlib import nullcontext
from typing import Any, Callable, ContextManager, Optional


class InputError(ValueError):
    """Bad input or set-up. Its message names the file (and line) at fault."""


INTERRUPTED = 130  # the shell's status for a command stopped by Ctrl-C (128 + SIGINT)


def _excepthook(exc_type, exc, tb, _previous=sys.excepthook):
    if issubclass(exc_type, InputError):
        print(f"error: {exc}", file=sys.stderr)
        return
    if issubclass(exc_type, KeyboardInterrupt):
        print("error: interrupted", file=sys.stderr)
        sys.exit(INTERRUPTED)
    _previous(exc_type, exc, tb)


def install_excepthook() -> None:
    """Make an uncaught InputError print one line (exit status stays 1)."""
    if getattr(sys.excepthook, "__name__", "") != "_excepthook":
        sys.excepthook = _excepthook


def run_command(func: Callable[[Any], int], args: Any,
                guard: Optional[ContextManager] = None) -> int:
    """Run a CLI subcommand inside ``guard`` (its outputs, see ``muda.io.outputs``): an InputError
    becomes one 'error:' line and exit status 1; Ctrl-C one line and status 130."""
    try:
        with guard or nullcontext():
            return func(args)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return INTERRUPTED


def check_number(flag: str, value: Any, minimum: Optional[float] = None, maximum: Optional[float] = None,
                 integer: bool = False, optional: bool = False) -> None:
    """An option's value: a finite number (an integer if ``integer``) within the bounds, or one
    clear error naming the option. Option dataclasses call this when they are built, so a bad
    value fails before any file is read or model loaded."""
    if value is None and optional:
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if integer:
        ok = ok and float(value).is_integer()
    what = "an integer" if integer else "a finite number"
    if not ok:
        raise InputError(f"{flag} must be {what} (got {value!r})")
    if minimum is not None and value < minimum:
        raise InputError(f"{flag} must be >= {minimum:g} (got {value!r})")
    if maximum is not None and value > maximum:
        raise InputError(f"{flag} must be <= {maximum:g} (got {value!r})")
