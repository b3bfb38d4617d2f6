"""Paired bootstrap resampling over documents: is the difference between two systems, in word
f-measure per tag, in BLEU or in COMET, due to chance? Every test draws from the same resamples
(``bootstrap_samples``), so the p-values of one comparison are computed on the same documents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from muda.evaluation.words import prf

if TYPE_CHECKING:
    from sacrebleu.metrics import BLEU


def bootstrap_samples(n_docs: int, n: int, seed: int) -> np.ndarray:
    """``n`` resamples of document indices (with replacement), shared by every system and metric."""
    return np.random.default_rng(seed).integers(0, n_docs, size=(n, n_docs))


def paired_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    samples: np.ndarray,
    metric: Callable[[np.ndarray], np.ndarray] = lambda c: prf(c)[..., 2],
) -> np.ndarray:
    """p-values per tag that A's and B's difference in ``metric`` is due to chance: the share of
    resamples in which the difference does not have the sign observed on the whole set.
    ``a``/``b``: (documents, tags, 4) counts; returns (tags,)."""
    observed = metric(a.sum(0)) - metric(b.sum(0))
    diffs = np.stack([metric(a[s].sum(0)) - metric(b[s].sum(0)) for s in samples])
    sign = np.sign(observed)
    worse = np.where(sign != 0, (np.sign(diffs) != sign).mean(axis=0), 1.0)
    return worse


def _scalar_bootstrap(score: Callable[[np.ndarray], float], a: np.ndarray, b: np.ndarray, samples: np.ndarray) -> float:
    """The same test for one corpus-level score computed from per-document rows."""
    observed = score(a) - score(b)
    if observed == 0:
        return 1.0
    diffs = np.array([score(a[s]) - score(b[s]) for s in samples])
    return float((np.sign(diffs) != np.sign(observed)).mean())


def bleu_bootstrap(stats_a: np.ndarray, stats_b: np.ndarray, samples: np.ndarray, bleu: BLEU) -> float:
    """The same test for corpus BLEU, from per-document sufficient statistics (documents, k)."""

    def score(stats: np.ndarray) -> float:
        return bleu._compute_score_from_stats(list(stats.sum(0))).score

    return _scalar_bootstrap(score, stats_a, stats_b, samples)


def mean_bootstrap(a: np.ndarray, b: np.ndarray, samples: np.ndarray) -> float:
    """The same test for a mean of segment scores (COMET), from per-document (sum, count)."""

    def mean(x: np.ndarray) -> float:
        return float(x[:, 0].sum() / max(x[:, 1].sum(), 1))

    return _scalar_bootstrap(mean, a, b, samples)
