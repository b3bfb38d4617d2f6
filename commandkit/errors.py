"""User-facing errors, for the commands of both packages: one clear line naming the file (and
line) at fault, no traceback, exit 1; and the check of an option's number.

Kept free of heavy imports (torch, fairseq), so that the commands start fast.
"""

from __future__ import annotations

import errno
import math
from contextlib import contextmanager
from enum import StrEnum
from typing import Any, Dict, Iterator, Mapping, Optional


class Code(StrEnum):
    """The kinds of user error, each with a stable code (spaCy's ``errors.py`` is the model): tests
    and Python callers test ``error.code``, not the wording, which may be improved. The line the
    user reads is the message alone. A code is never reused; new kinds take the next number."""

    about: str

    def __new__(cls, code: str, about: str) -> Code:
        member = str.__new__(cls, code)
        member._value_ = code
        member.about = about
        return member

    INPUT = "E000", "bad input or set-up of another kind (the message says which)"
    OPTION_VALUE = "E001", "an option's value is not allowed (a range, a number that is not finite, a choice)"
    OPTION_MISSING = "E002", "an option the command needs here was not given, or given empty"
    NOT_FOUND = "E003", "an input file or folder does not exist"
    IS_DIRECTORY = "E004", "a folder was given where a file is read"
    NOT_UTF8 = "E005", "a text input is not UTF-8, or holds a NUL byte"
    EMPTY = "E006", "an input holds nothing to work on (an empty file, no records, a blank line)"
    LINE_COUNT = "E007", "inputs that go line by line together have different line counts"
    FORMAT = "E008", "an input is not in its format (a line that does not parse, a field of the wrong type)"
    MISMATCH = "E009", "inputs that must belong together do not (another model, corpus, language or computation)"
    CANNOT_WRITE = "E010", "an output cannot be written there (a folder or file on the way, no permission, a full disk)"
    OUTPUT_IS_INPUT = "E011", "an output would replace an input, or two outputs are one file"
    TOO_LONG = "E012", "a sentence longer than the model's positions"
    OUT_OF_MEMORY = "E013", "a setting too large for the machine's memory"
    MODEL = "E014", "a model, checkpoint or tool that is missing, unusable or of another kind"
    OPTIONS_CONFLICT = "E015", "options that do not go together (one goes only with another, or excludes it)"


class InputError(ValueError):
    """Bad input or set-up: the one error type of the library code of every package. Its message
    names the file (and line) at fault; its ``code`` says which kind of error it is (``Code``)."""

    code: Code = Code.INPUT

    def __init__(self, *args: Any, code: Optional[Code] = None) -> None:
        super().__init__(*args)
        if code is not None:
            self.code = code


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


class WriteError(OSError, InputError):
    """An output that cannot be written (a full disk above all): one line naming it, like any
    InputError, and still an OSError for callers that handle failed writes (caches)."""

    code = Code.CANNOT_WRITE

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


_SHOWN: Dict[str, str] = {}  # option flag -> the name the user gave it by, while a command runs


def shown(flag: str) -> str:
    """How messages name the option ``flag``: the name the user gave it by, where the running
    command declared one (``options_named``: a study stage run by make names its Make variable,
    ``BEAM``), else the flag itself."""
    return _SHOWN.get(flag, flag)


@contextmanager
def options_named(names: Mapping[str, str]) -> Iterator[None]:
    """While the block runs, messages built with ``shown`` name each flag of ``names`` by its
    name there (what the command's declaration says the user typed)."""
    before = dict(_SHOWN)
    _SHOWN.update(names)
    try:
        yield
    finally:
        _SHOWN.clear()
        _SHOWN.update(before)


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
    name = shown(flag)
    if not ok:
        raise InputError(f"{name} must be {what} (got {value!r})", code=Code.OPTION_VALUE)
    if minimum is not None and value < minimum:
        raise InputError(f"{name} must be >= {minimum:g} (got {value!r})", code=Code.OPTION_VALUE)
    if maximum is not None and value > maximum:
        raise InputError(f"{name} must be <= {maximum:g} (got {value!r})", code=Code.OPTION_VALUE)
