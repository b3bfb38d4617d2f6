"""MT metrics over whole systems: corpus BLEU (sacreBLEU) with per-document sufficient statistics
for the bootstrap, and COMET (unbabel-comet, optional) with per-document segment sums.

Loading a COMET model, and what its failures say, is defined here once for every caller."""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import sys
import warnings
from contextlib import contextmanager, redirect_stdout
from functools import cache
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from commandkit.documents import document_spans
from commandkit.errors import Code, InputError, first_line

if TYPE_CHECKING:
    from sacrebleu.metrics import BLEU


def document_sums(values: np.ndarray, ids: Sequence[str]) -> np.ndarray:
    """``values`` (one row per sentence) summed over each document: (documents, ...)."""
    return np.stack([values[a:b].sum(0) for a, b in document_spans(ids)])


# what is said, once a process, in place of sacreBLEU's three lines "That's 100 lines that end in a
# tokenized period ('.')", "It looks like you forgot to detokenize your test data, which may hurt
# your score.", "If you insist ... the `force` parameter." (per scored file, so thrice on the demo)
TOKENIZED_TEXT_NOTE = (
    "BLEU: the text is tokenized (lines end in ' .'), so sacreBLEU scores it as it is: harmless when "
    "every system is scored against the same tokenized references (as here), but such BLEU is not "
    "comparable with BLEU published on detokenized text"
)


class _TokenizedTextNote(logging.Filter):
    """sacreBLEU's warning about tokenized text, as one line of ours, once a process."""

    said = False

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message.startswith(("That's 100 lines that end in a tokenized period", "If you insist your data")):
            return False
        if message.startswith("It looks like you forgot to detokenize"):
            if _TokenizedTextNote.said:
                return False
            _TokenizedTextNote.said = True
            record.msg, record.args = TOKENIZED_TEXT_NOTE, ()
        return True


def bleu_metric() -> BLEU:
    """sacreBLEU's BLEU with its default settings (the signature every BLEU here uses); its
    warning about tokenized text said once, in a user's words (``TOKENIZED_TEXT_NOTE``)."""
    from sacrebleu.metrics import BLEU

    log = logging.getLogger("sacrebleu")
    if not any(isinstance(f, _TokenizedTextNote) for f in log.filters):
        log.addFilter(_TokenizedTextNote())
    return BLEU()


def bleu_with_document_statistics(
    hyps: Sequence[Sequence[str]], refs: Sequence[str], ids: Sequence[str]
) -> Tuple[List[float], List[np.ndarray]]:
    """Corpus BLEU of each system, and its sufficient statistics per document (documents, k),
    from which the bootstrap recomputes BLEU on resampled documents."""
    metric = bleu_metric()
    scores, stats = [], []
    for h in hyps:
        per_sentence = np.array(metric._extract_corpus_statistics(list(h), [list(refs)]), dtype=np.int64)
        stats.append(document_sums(per_sentence, ids))
        scores.append(metric._compute_score_from_stats(list(per_sentence.sum(0))).score)
    return scores, stats


# ------------------------------------------------------------------------------------- COMET
COMET_INSTALL = "make install (or: .venv/bin/pip install -e '.[comet]')"
# the libraries under unbabel-comet, whose banners, tips and warnings are kept off the terminal
_COMET_LOGGERS = ("comet", "pytorch_lightning", "lightning_fabric", "lightning", "torchmetrics")
_COMET_MODULES = r"(comet|pytorch_lightning|lightning_fabric|lightning|lightning_utilities|torchmetrics)(\..*)?$"
# a Hugging Face hub id (owner/name) or an unbabel-comet legacy name (wmt20-comet-da)
_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


@contextmanager
def quiet_comet() -> Iterator[None]:
    """unbabel-comet without its chatter on the user's terminal: Lightning's banners ("GPU
    available: ...", "💡 Tip: ...") and warnings, comet's INFO lines, and the root logger that
    ``import comet`` configures (``logging.basicConfig``); everything is restored after. Errors
    still raise; the progress bar of a prediction stays."""
    root = logging.getLogger()
    saved_root = (root.level, list(root.handlers))
    loggers = [logging.getLogger(name) for name in _COMET_LOGGERS]
    levels = [logger.level for logger in loggers]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=_COMET_MODULES)
        warnings.filterwarnings("ignore", message="pkg_resources is deprecated")  # torchmetrics' import
        for logger in loggers:
            logger.setLevel(logging.ERROR)
        try:
            yield
        finally:
            for logger, level in zip(loggers, levels, strict=True):
                logger.setLevel(level)
            root.setLevel(saved_root[0])
            root.handlers[:] = saved_root[1]


def import_comet() -> Any:
    """The ``comet`` module. "Not installed" only when unbabel-comet itself is missing; when it is
    there but cannot be imported (a dependency missing or of the wrong version), that error."""
    try:
        with quiet_comet():
            import comet
    except Exception as e:  # a dependency missing (ModuleNotFoundError), an ImportError inside it, ...
        if isinstance(e, ModuleNotFoundError) and e.name == "comet":
            raise InputError(
                f"COMET needs the unbabel-comet package, which is not installed: run {COMET_INSTALL}", code=Code.MODEL
            ) from None
        raise InputError(
            f"unbabel-comet is installed but cannot be imported ({first_line(e)}); run {COMET_INSTALL}, "
            "which installs it with the versions it needs",
            code=Code.MODEL,
        ) from None
    return comet


def local_comet_checkpoint(model: str) -> Optional[str]:
    """The checkpoint of a COMET model given as a local path: a model folder (as unbabel-comet
    downloads one: ``hparams.yaml`` and ``checkpoints/model.ckpt``) or its checkpoint file. None
    for a name to download (``Unbabel/wmt22-comet-da``). A path that is not there, or not a COMET
    model, fails here: before unbabel-comet is imported or the network is tried."""
    path = os.path.expanduser(model)
    if not os.path.exists(path):
        if _HUB_NAME.fullmatch(model) and not model.endswith(".ckpt"):
            return None
        raise InputError(f"{model}: COMET model not found (no such file or folder)", code=Code.NOT_FOUND)
    if os.path.isdir(path):
        path = os.path.join(path, "checkpoints", "model.ckpt")
        if not os.path.isfile(path):
            raise InputError(f"{model}: not a COMET model folder (no checkpoints/model.ckpt in it)", code=Code.MODEL)
    path = os.path.abspath(path)
    folder = os.path.dirname(os.path.dirname(path))
    if not os.path.isfile(os.path.join(folder, "hparams.yaml")):
        raise InputError(
            f"{path}: no hparams.yaml in {folder} (unbabel-comet reads a checkpoint with the "
            "hparams.yaml of its model folder, two levels up)",
            code=Code.MODEL,
        )
    return path


def load_comet(model: str) -> Any:
    """Load a COMET model by name (downloaded by unbabel-comet) or by local path (a model folder
    or its checkpoint); ``Any`` because unbabel-comet is optional (its model class is not
    imported for the hint)."""
    checkpoint = local_comet_checkpoint(model)
    comet = import_comet()
    if checkpoint is None:
        try:
            with quiet_comet():
                checkpoint = comet.download_model(model)
        except Exception as e:  # any failure to fetch: the fix is the same, fetch it elsewhere
            raise InputError(
                f"COMET model '{model}' is not a local file or folder and could not be downloaded "
                f'({type(e).__name__}). On a machine with network access run: python -c "import comet; '
                f"print(comet.download_model('{model}'))\", copy the model folder of the checkpoint it prints "
                "(…/checkpoints/model.ckpt) and pass that folder to --comet-model "
                "(docs/explanations/scoring.md, 'COMET without network')",
                code=Code.MODEL,
            ) from None
    try:
        with quiet_comet():
            return comet.load_from_checkpoint(checkpoint)
    except Exception as e:
        raise InputError(
            f"{checkpoint}: cannot load COMET checkpoint ({_load_error(e, checkpoint)})", code=Code.MODEL
        ) from None


# what torch says of a checkpoint cut short or overwritten (its zip archive unreadable)
_DAMAGED = ("PytorchStreamReader", "archive is corrupted", "central directory", "legacy .tar format")


def _load_error(e: Exception, checkpoint: str) -> str:
    """One line for a failed load, in a user's words. A damaged file (a download or copy cut
    short: torch's "[Errno 22] Invalid argument", "failed finding central directory", EOFError)
    is said to be one; torch's refusal under ``weights_only`` runs over many lines and starts with
    advice on how to load anyway: its cause comes after "WeightsUnpickler error:"; hparams.yaml
    without a model class is not a COMET model's."""
    import zipfile

    text = str(e)
    damaged = isinstance(e, EOFError) or (isinstance(e, OSError) and e.errno == errno.EINVAL)
    if damaged or any(k in text for k in _DAMAGED) or not zipfile.is_zipfile(checkpoint):
        return (
            "the file is damaged or not a PyTorch checkpoint: its archive cannot be read (a download or "
            "copy cut short?); fetch the model again"
        )
    if isinstance(e, KeyError) and "class_identifier" in text:
        return "its hparams.yaml names no COMET model class (class_identifier): not a COMET model's hparams.yaml"
    if "WeightsUnpickler error:" in text:
        cause = text.split("WeightsUnpickler error:", 1)[1].split("Check the documentation", 1)[0]
        return f"{type(e).__name__}: torch.load (weights_only) refused it: {' '.join(cause.split())}"
    return first_line(e)


@cache
def _checkpoint_digest(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()[:12]}"


def comet_model_id(model: str) -> str:
    """How a signature names a COMET model: a name as given, a local model by the start of its
    checkpoint's SHA-256 (a path on one machine tells a reader nothing; computed once a process)."""
    checkpoint = local_comet_checkpoint(model)
    if checkpoint is None:
        return model
    st = os.stat(checkpoint)
    return _checkpoint_digest(checkpoint, st.st_size, st.st_mtime_ns)


def comet_predict(
    scorer: Any,
    srcs: Sequence[str],
    hyps: Sequence[str],
    refs: Sequence[str],
    model: str = "",
    batch_size: int = 16,
    gpus: Optional[int] = None,
) -> Dict:
    """COMET with a model already loaded (load it once for several systems)."""
    if gpus is None:
        import torch  # only here: muda starts without torch otherwise

        gpus = 1 if torch.cuda.is_available() else 0
    data = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(srcs, hyps, refs, strict=True)]
    # progress bars on standard error: Lightning's own bars write to sys.stdout (unbabel-comet's
    # predict bar does not), and `score > file` must hold only what the command writes
    with quiet_comet(), redirect_stdout(sys.stderr):
        out = scorer.predict(data, batch_size=batch_size, gpus=gpus, progress_bar=True)
    return {"score": float(out.system_score), "model": model, "segments": [float(x) for x in out.scores]}


def comet_document_sums(segments: Sequence[float], ids: Sequence[str]) -> np.ndarray:
    """(documents, 2): the sum of segment scores and the segment count of each document, from
    which the bootstrap recomputes the mean on resampled documents."""
    seg = np.asarray(segments, dtype=np.float64)
    counts = [b - a for a, b in document_spans(ids)]
    return np.column_stack([document_sums(seg, ids), np.asarray(counts, dtype=np.float64)])
