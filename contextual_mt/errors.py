"""contextual_mt's user-facing error: one clear line, no traceback, exit status 1.

The base error type and the command runner live in ``muda.errors`` (the shared base layer).
"""
from __future__ import annotations

import os
import sys

from muda.errors import InputError, install_excepthook


class ContextualMTError(InputError):
    """Bad input or set-up in contextual_mt. Its message names the file (and line) at fault."""


def install_excepthook_for_fairseq_cli() -> None:
    """Under fairseq's own commands (fairseq-train, fairseq-generate, ...), which run our task
    without our CLI, make an uncaught InputError print one line. Called when the task is set
    up, never on import, and only when the running program is a fairseq command."""
    program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if program.startswith("fairseq-") or "fairseq_cli" in (sys.argv[0] if sys.argv else ""):
        install_excepthook()


__all__ = ["ContextualMTError", "InputError", "install_excepthook_for_fairseq_cli"]
