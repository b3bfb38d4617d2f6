"""Reading a fairseq checkpoint file with one-line errors: the one reader behind the document
model loader (inference/checkpoint.py) and CADec's base model (models/cadec.py)."""
from __future__ import annotations

import os
from typing import Dict

from contextual_mt.errors import ContextualMTError


def read_checkpoint(path: str, label: str = "checkpoint") -> Dict:
    """The checkpoint's state on the CPU; a missing or unreadable file is an error naming it
    (``label``: what the file is to the user, e.g. "--base-model checkpoint")."""
    from fairseq import checkpoint_utils

    if not os.path.isfile(path):
        raise ContextualMTError(f"{path}: {label} not found")
    try:
        return checkpoint_utils.load_checkpoint_to_cpu(path)
    except Exception as e:  # noqa: BLE001 (torch and pickle raise many types for a damaged file)
        raise ContextualMTError(f"{path}: cannot read {label} ({type(e).__name__}: {e})") from None
