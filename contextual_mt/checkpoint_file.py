"""Reading a fairseq checkpoint file with one-line errors: the one reader behind the document
model loader (backends/fairseq/model.py) and CADec's base model (models/cadec.py); and what the
file records of its training (validation loss, label smoothing)."""
from __future__ import annotations

import math
import os
from typing import Dict, Optional

from contextual_mt.errors import ContextualMTError


def read_checkpoint(path: str, label: str = "checkpoint") -> Dict:
    """The checkpoint's state on the CPU; a missing or unreadable file is an error naming it
    (``label``: what the file is to the user, e.g. "--base-model checkpoint")."""
    from fairseq import checkpoint_utils

    if not os.path.isfile(path):
        raise ContextualMTError(f"{path}: {label} not found")
    try:
        return checkpoint_utils.load_checkpoint_to_cpu(path)
    except OSError as e:  # the file itself (permissions, a disk error)
        raise ContextualMTError(f"{path}: cannot read {label} ({e.strerror or e})") from None
    except Exception as e:  # noqa: BLE001 (torch and pickle raise many types for a damaged file)
        # their words ("invalid literal for int()", "Memo value not found") are about the
        # unpickler's bytes, not the user's file: say what the file is not
        what = "an empty file" if os.path.getsize(path) == 0 else "damaged, cut off or another kind of file"
        raise ContextualMTError(f"{path}: not a {label} torch can load ({what}; {type(e).__name__})") from None


def validation_loss(state: Dict) -> Optional[float]:
    """The validation loss of the weights in ``state`` as fairseq saved it (``extra_state``:
    ``val_loss`` of the epoch that wrote the file, else the run's ``best``); None when absent."""
    extra = state.get("extra_state") or {}
    for key in ("val_loss", "best"):
        value = extra.get(key)
        if isinstance(value, (int, float)) and math.isfinite(value):
            return float(value)
    return None


def label_smoothing(state: Dict) -> float:
    """The criterion's label smoothing (0 for plain cross entropy), from the config or the old
    argparse namespace."""
    cfg = state.get("cfg")
    criterion = getattr(cfg, "criterion", None) if cfg is not None else None
    value = getattr(criterion, "label_smoothing", None) if criterion is not None else None
    if value is None and state.get("args") is not None:
        value = getattr(state["args"], "label_smoothing", None)
    return float(value or 0.0)
