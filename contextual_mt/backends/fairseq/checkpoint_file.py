"""Reading a fairseq checkpoint file with one-line errors: the one reader behind the document
model loader (backends/fairseq/model.py) and CADec's base model (models/cadec.py); and what the
file records of its training (epochs, updates, validation loss, label smoothing); the symbol counts
of the dictionary beside it (what model_health's unigram yardstick reads)."""

from __future__ import annotations

import math
import os
from typing import Any, Dict, Optional, Sequence

from contextual_mt.errors import Code, InputError


def read_checkpoint(path: str, label: str = "checkpoint") -> Dict:
    """The checkpoint's state on the CPU; a missing or unreadable file is an error naming it
    (``label``: what the file is to the user, e.g. "--base-model checkpoint")."""
    from fairseq import checkpoint_utils

    if not os.path.isfile(path):
        raise InputError(f"{path}: {label} not found", code=Code.NOT_FOUND)
    try:
        return checkpoint_utils.load_checkpoint_to_cpu(path)
    except OSError as e:  # the file itself (permissions, a disk error)
        raise InputError(f"{path}: cannot read {label} ({e.strerror or e})", code=Code.MODEL) from None
    except Exception as e:  # torch and pickle raise many types for a damaged file
        # their words ("invalid literal for int()", "Memo value not found") are about the
        # unpickler's bytes, not the user's file: say what the file is not
        what = "an empty file" if os.path.getsize(path) == 0 else "damaged, cut off or another kind of file"
        raise InputError(
            f"{path}: not a {label} torch can load ({what}; {type(e).__name__})", code=Code.MODEL
        ) from None


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
    criterion = _field(cfg, "criterion")
    value = _field(criterion, "label_smoothing")
    if value is None and state.get("args") is not None:
        value = getattr(state["args"], "label_smoothing", None)
    return float(value or 0.0)


def _field(config: Any, key: str) -> Any:
    """``config.key``: of fairseq's config as its loader gives it, or as a plain dict (torch.load)."""
    if config is None:
        return None
    return config.get(key) if isinstance(config, dict) else getattr(config, key, None)


def training_figures(state: Dict) -> Dict:
    """What a checkpoint's own state says of the training that wrote it: ``epochs`` finished
    (fairseq saves the epoch to start from next, the one after a finished epoch), ``stopped_in_epoch``
    (the epoch under way when the file was saved part-way through it, else None), ``num_updates``,
    its ``valid_loss`` (``validation_loss``) and the criterion's ``label_smoothing``; a figure the
    file lacks is None."""
    extra = state.get("extra_state") or {}
    iterator = extra.get("train_iterator") or {}
    history = state.get("optimizer_history") or [{}]
    epoch, updates = iterator.get("epoch"), history[-1].get("num_updates")
    # saved part-way through an epoch (stopped by max_update): ``epoch`` is the one under way
    within = iterator.get("iterations_in_epoch")
    return {
        "epochs": epoch - 1 if isinstance(epoch, int) else None,
        "stopped_in_epoch": epoch if isinstance(epoch, int) and isinstance(within, int) and within > 0 else None,
        "num_updates": updates if isinstance(updates, int) else None,
        "valid_loss": validation_loss(state),
        "label_smoothing": label_smoothing(state),
    }


def read_training_figures(path: str) -> Dict:
    """``training_figures`` of the checkpoint at ``path``, read without loading its tensors (a
    large checkpoint is mapped, not read); an unreadable file is an error naming it."""
    import torch

    try:
        try:
            state = torch.load(path, map_location="cpu", weights_only=False, mmap=True)
        except RuntimeError:  # a file of torch's legacy format cannot be mapped
            state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as e:  # torch and pickle raise many types for a damaged file
        raise InputError(
            f"{path}: cannot read checkpoint ({type(e).__name__}: {str(e).splitlines()[0][:120]})", code=Code.MODEL
        ) from None
    if not isinstance(state, dict):
        raise InputError(f"{path}: not a fairseq checkpoint", code=Code.MODEL)
    return training_figures(state)


def dictionary_counts(path: str) -> Sequence[int]:
    """The counts of a fairseq ``dict.xx.txt`` as the model's output symbols have them (fairseq's
    own reader: its special symbols come first, each counted once)."""
    from fairseq.data import Dictionary

    return Dictionary.load(path).count
