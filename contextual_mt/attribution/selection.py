"""The selection rule of CTI and CCI: scores above mean + λ·std of their set, or the top k.

CTI: the set is every token of the run's sentences that were read with context (a sentence
without context cannot depend on it), EOS included in the statistics; EOS is never selected.
CCI: the set is the context tokens of one selected target token."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np


@dataclass(frozen=True)
class Rule:
    std: float = 1.0  # λ: selected when the score exceeds mean + λ·std
    top_k: Optional[int] = None  # instead: the k highest scores (per sentence / per target token)

    def describe(self) -> str:
        return f"top {self.top_k}" if self.top_k is not None else f"score > mean + {self.std:g}·std"


SIGNIFICANT = 7  # digits kept of a score written out: what float32 holds


def significant(x: float, digits: int = SIGNIFICANT) -> float:
    """``x`` to ``digits`` significant digits. Not a fixed number of decimals: input x gradient
    scores of a small model are ~1e-6, which 6 decimals collapse into a dozen values and false ties."""
    return float(f"{x:.{digits}g}")


@dataclass(frozen=True)
class Statistics:
    mean: float
    std: float
    threshold: float
    tokens: int

    def as_dict(self) -> Dict:
        return {
            "mean": significant(self.mean),
            "std": significant(self.std),
            "threshold": significant(self.threshold),
            "tokens": self.tokens,
        }


def statistics(values: Sequence[np.ndarray], rule: Rule) -> Statistics:
    """Mean, standard deviation and threshold over all the values (population std)."""
    flat = np.concatenate([np.asarray(v, dtype=np.float64) for v in values]) if values else np.zeros(0)
    if len(flat) == 0:
        return Statistics(0.0, 0.0, float("inf"), 0)
    mean, std = float(flat.mean()), float(flat.std())
    return Statistics(mean, std, mean + rule.std * std, len(flat))


def select(scores: np.ndarray, rule: Rule, threshold: Optional[float] = None, exclude: Sequence[int] = ()) -> List[int]:
    """Indices selected from ``scores``: above ``threshold`` (default: mean + λ·std of these
    scores), or the top k, in decreasing score; never an index in ``exclude``; never a score
    of 0 or less (nothing to attribute)."""
    scores = np.asarray(scores, dtype=np.float64)
    candidates = [i for i in range(len(scores)) if i not in set(exclude) and scores[i] > 0]
    if rule.top_k is not None:
        chosen = sorted(candidates, key=lambda i: (-scores[i], i))[: rule.top_k]
    else:
        if threshold is None:
            threshold = statistics([scores], rule).threshold if len(scores) else float("inf")
        chosen = [i for i in candidates if scores[i] > threshold]
    return sorted(chosen, key=lambda i: (-scores[i], i))
