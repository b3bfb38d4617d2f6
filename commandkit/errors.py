"""User-facing errors, for the commands of both packages: one clear line naming the file (and
line) at fault, no traceback, exit 1; and the check of an option's number.

Kept free of heavy imports (torch, fairseq), so that the commands start fast.
"""

from __future__ import annotations

import errno
import math
from typing import Any, Optional


class InputError(ValueError):
    """Bad input or set-up. Its message names the file (and line) at fault."""


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


class WriteError(OSError, InputError):
    """An output that cannot be written (a full disk above all): one line naming it, like any
    InputError, and still an OSError for callers that handle failed writes (caches)."""

    def __str__(self) -> str:
        return str(self.strerror)


def first_line(e: BaseException) -> str:
    """An exception as one line: its type and the first line of its text (a library's message,
    torch's above all, may run over many lines)."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0].strip()}" if text else type(e).__name__


def json_reason(e: Any, line: bool = True) -> str:
    """What a ``json.JSONDecodeError`` says, with where: "Expecting value at line 15, column 3".
    Its ``msg`` alone may end in a dangling "at" ("Unterminated string starting at"), whose
    position the exception carries apart. ``line=False``: the column only (the message names the
    line already)."""
    where = f"line {e.lineno}, column {e.colno}" if line else f"column {e.colno}"
    return f"{e.msg} {where}" if e.msg.endswith(" at") else f"{e.msg} at {where}"


def write_error(path: str, e: OSError) -> WriteError:
    """One line for an OSError while writing ``path``, keeping its errno."""
    hint = "; free some space and run again" if e.errno in DISK_FULL else ""
    return WriteError(e.errno, f"{path}: cannot write ({e.strerror or e}){hint}")


def check_number(
    flag: str,
    value: Any,
    minimum: Optional[float] = None,
    maximum: Optional[float] = None,
    integer: bool = False,
    optional: bool = False,
) -> None:
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
