"""MT metrics over whole systems: corpus BLEU (sacreBLEU) with per-document sufficient statistics
for the bootstrap, and COMET (unbabel-comet, optional) with per-document segment sums.

Loading a COMET model, and what its failures say, is defined here once for every caller."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from commandkit.documents import document_spans
from commandkit.errors import InputError

if TYPE_CHECKING:
    from sacrebleu.metrics import BLEU


def document_sums(values: np.ndarray, ids: Sequence[str]) -> np.ndarray:
    """``values`` (one row per sentence) summed over each document: (documents, ...)."""
    return np.stack([values[a:b].sum(0) for a, b in document_spans(ids)])


def bleu_metric() -> BLEU:
    """sacreBLEU's BLEU with its default settings (the signature every BLEU here uses)."""
    from sacrebleu.metrics import BLEU

    return BLEU()


def bleu_with_document_statistics(hyps: Sequence[Sequence[str]], refs: Sequence[str],
                                  ids: Sequence[str]) -> Tuple[List[float], List[np.ndarray]]:
    """Corpus BLEU of each system, and its sufficient statistics per document (documents, k),
    from which the bootstrap recomputes BLEU on resampled documents."""
    metric = bleu_metric()
    scores, stats = [], []
    for h in hyps:
        per_sentence = np.array(metric._extract_corpus_statistics(list(h), [list(refs)]), dtype=np.int64)
        stats.append(document_sums(per_sentence, ids))
        scores.append(metric._compute_score_from_stats(list(per_sentence.sum(0))).score)
    return scores, stats


def load_comet(model: str) -> Any:
    """Load a COMET model by name (downloaded by unbabel-comet) or by checkpoint path; ``Any``
    because unbabel-comet is optional (its model class is not imported for the hint)."""
    try:
        import comet
    except ImportError:
        raise InputError("COMET needs the unbabel-comet package: .venv/bin/pip install -e '.[comet]'") from None
    if os.path.exists(model):
        path = model
    else:
        try:
            path = comet.download_model(model)
        except Exception as e:  # any failure to fetch: the fix is the same, fetch it elsewhere
            raise InputError(
                f"COMET model '{model}' could not be downloaded ({type(e).__name__}). On a machine "
                "with network access run: python -c \"import comet; print(comet.download_model("
                f"'{model}'))\" and pass the printed checkpoint path (…/checkpoints/model.ckpt) "
                "to --comet-model"
            ) from None
    try:
        return comet.load_from_checkpoint(path)
    except Exception as e:
        raise InputError(f"{path}: cannot load COMET checkpoint ({type(e).__name__}: {e})") from None


def comet_predict(scorer: Any, srcs: Sequence[str], hyps: Sequence[str], refs: Sequence[str], model: str = "",
                  batch_size: int = 16, gpus: Optional[int] = None) -> Dict:
    """COMET with a model already loaded (load it once for several systems)."""
    if gpus is None:
        import torch  # only here: muda starts without torch otherwise

        gpus = 1 if torch.cuda.is_available() else 0
    data = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(srcs, hyps, refs)]
    out = scorer.predict(data, batch_size=batch_size, gpus=gpus, progress_bar=True)
    return {"score": float(out.system_score), "model": model, "segments": [float(x) for x in out.scores]}


def comet_document_sums(segments: Sequence[float], ids: Sequence[str]) -> np.ndarray:
    """(documents, 2): the sum of segment scores and the segment count of each document, from
    which the bootstrap recomputes the mean on resampled documents."""
    seg = np.asarray(segments, dtype=np.float64)
    counts = [b - a for a, b in document_spans(ids)]
    return np.column_stack([document_sums(seg, ids), np.asarray(counts, dtype=np.float64)])
