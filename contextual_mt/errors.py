"""contextual_mt's user-facing errors: one clear line, no traceback, exit status 1.

Every package raises one error type, ``commandkit.errors.InputError``, with a code per kind
(``commandkit.errors.Code``), so that a Python caller catches one type whatever package raised
(muda, docalign, commandkit). The command line's boundary, which prints the line and sets the
status, is ``commandkit.console.report``.
"""

from __future__ import annotations

import os
import sys
from typing import Dict, Optional, TypeVar

from commandkit.console import install_excepthook
from commandkit.errors import Code, InputError, check_number

Value = TypeVar("Value")

# Deprecated: the one error type's earlier name, which the docs once told callers to catch;
# raise and catch InputError.
ContextualMTError = InputError


class OverPositionsError(InputError):
    """A sentence longer than the model's positions (it cannot be read whole): an error where the
    user gave the sentence, a pair left unscored where the program made it (``align``'s links)."""

    code = Code.TOO_LONG


def given(value: Optional[Value], flag: str) -> Value:
    """The value of option ``flag``, which the command needs here: one line when it was not given
    (most are checked, or set to their default, when the options are built)."""
    if value is None:
        raise InputError(f"{flag}: not given", code=Code.OPTION_MISSING)
    return value


def _fairseq_program() -> str:
    """The fairseq command this process runs ('fairseq-train', ...), or '' for anything else."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    name = os.path.basename(argv0)
    if name.startswith("fairseq-"):
        return name
    if "fairseq_cli" in argv0:  # python -m fairseq_cli.train
        return "fairseq-" + os.path.splitext(name)[0]
    return ""


def _argv_value(flag: str) -> Optional[str]:
    args = sys.argv[1:]
    for k, arg in enumerate(args):
        if arg == flag and k + 1 < len(args):
            return args[k + 1]
        if arg.startswith(flag + "="):
            return arg[len(flag) + 1 :]
    return None


_RUN: Dict[str, Optional[str]] = {"new_save_dir": None}


def note_fairseq_save_dir() -> None:
    """fairseq-train creates --save-dir before our task is set up; remember whether it existed
    (called while fairseq builds its argument parser, before that), so that a run stopped by a
    bad input removes the empty directory it made."""
    if _fairseq_program() != "fairseq-train":
        return
    save_dir = os.path.abspath(_argv_value("--save-dir") or "checkpoints")
    _RUN["new_save_dir"] = None if os.path.exists(save_dir) else save_dir


def _is_user_error(exc_type: type, exc: BaseException) -> bool:
    """Errors of a fairseq command that are the user's input, not a bug: a missing or unreadable
    file (fairseq's own OSError, naming it), a sample longer than the model's positions."""
    if issubclass(exc_type, (InputError, KeyboardInterrupt, OSError)):
        return True
    return exc_type is Exception and str(exc).startswith("Size of sample #")


def _kind_of_fairseq_error(exc: BaseException) -> Code:
    """The code of a fairseq command's own user error (``_is_user_error``)."""
    if isinstance(exc, FileNotFoundError):
        return Code.NOT_FOUND
    if isinstance(exc, IsADirectoryError):
        return Code.IS_DIRECTORY
    if not isinstance(exc, OSError):  # "Size of sample #...": longer than the model's positions
        return Code.TOO_LONG
    return Code.INPUT  # another OSError (a permission): fairseq's message says which


def install_excepthook_for_fairseq_cli() -> None:
    """Under fairseq's own commands (fairseq-train, fairseq-generate, ...), which run our task
    without our CLI: a bad input prints one line (exit 1; Ctrl-C: 130) and leaves no empty
    --save-dir behind. Called when the task is set up, never on import, and only when the
    running program is a fairseq command."""
    if not _fairseq_program() or getattr(sys.excepthook, "__name__", "") == "_fairseq_excepthook":
        return
    install_excepthook()
    inner = sys.excepthook

    def _fairseq_excepthook(exc_type, exc, tb):
        if _is_user_error(exc_type, exc):
            new_dir = _RUN["new_save_dir"]
            if new_dir and os.path.isdir(new_dir) and not os.listdir(new_dir):
                os.rmdir(new_dir)
            if not issubclass(exc_type, (InputError, KeyboardInterrupt)):  # fairseq's own, naming the file
                exc_type, exc = InputError, InputError(str(exc), code=_kind_of_fairseq_error(exc))
        inner(exc_type, exc, tb)

    sys.excepthook = _fairseq_excepthook


__all__ = [
    "Code",
    "ContextualMTError",
    "InputError",
    "check_number",
    "install_excepthook_for_fairseq_cli",
    "note_fairseq_save_dir",
]
