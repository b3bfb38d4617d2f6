"""User-facing errors: one clear line, no traceback, non-zero exit (see muda.errors)."""
from __future__ import annotations

from muda.errors import InputError, install_excepthook


class ContextualMTError(InputError):
    """Bad input or set-up in contextual_mt. Its message names the file (and line) at fault."""


__all__ = ["ContextualMTError", "InputError", "install_excepthook"]
