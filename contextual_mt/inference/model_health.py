"""Does a model look untrained? Two signs, each checked in one place here:

* its validation loss is no better than a unigram model of the target language (the loss of
  always predicting the training data's piece frequencies): ``train`` warns at its end, and the
  one checkpoint loader (``backends/fairseq/model.py``) warns on every load, so translate, score
  (its translations), CXMI and contrastive runs from an untrained model do not pass silently;
* its translations are degenerate (most of them empty or mostly one token repeated, or all the
  same): the translation writers warn, of sentences (``--unit sentence``) and of chunks of a
  document (``--unit document``) alike.

Losses are fairseq's: bits per target token, with the criterion's label smoothing; the counts of
the target dictionary come from its file (``backends/fairseq/checkpoint_file.dictionary_counts``).
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

logger = logging.getLogger(__name__)


def unigram_loss(counts: Sequence[int], label_smoothing: float = 0.0) -> float:
    """The loss (bits per token) of a unigram model with the dictionary's ``counts`` (one per
    output symbol, add-one smoothed so that none has probability 0), as label-smoothed cross
    entropy reports it: (1-ε)·H + ε·mean over the vocabulary of -log2 p(w), H = -Σ p log2 p."""
    if not counts:
        raise ValueError("unigram_loss: empty dictionary")
    total = sum(c + 1 for c in counts)
    bits = [-math.log2((c + 1) / total) for c in counts]
    entropy = sum((c + 1) / total * b for c, b in zip(counts, bits, strict=True))
    return (1 - label_smoothing) * entropy + label_smoothing * sum(bits) / len(bits)


@dataclass(frozen=True)
class LossCheck:
    """A model's validation loss next to a unigram model's of its target dictionary."""

    valid_loss: Optional[float]  # None: not recorded (nothing to judge)
    unigram_loss: float

    @property
    def looks_untrained(self) -> bool:
        return self.valid_loss is not None and self.valid_loss >= self.unigram_loss

    def message(self, name: str) -> str:
        return (
            f"{name}: validation loss {self.valid_loss:.2f} bits is no better than a unigram model of the "
            f"target ({self.unigram_loss:.2f}): the model looks untrained; translations, scores and CXMI "
            "from it mean little"
        )


def check_loss(valid_loss: Optional[float], counts: Sequence[int], label_smoothing: float = 0.0) -> LossCheck:
    return LossCheck(valid_loss, round(unigram_loss(counts, label_smoothing), 3))


def warn_if_untrained(
    name: str, valid_loss: Optional[float], counts: Sequence[int], label_smoothing: float = 0.0
) -> LossCheck:
    """``check_loss``, logging one warning naming ``name`` when the model looks untrained."""
    check = check_loss(valid_loss, counts, label_smoothing)
    if check.looks_untrained:
        logger.warning(check.message(name))
    return check


def _repeats_one_token(hyp: str) -> bool:
    """Empty, mostly one whitespace token repeated (``, , ,``; an untrained model's translation of
    a whole document: ``see see see seeiii see ...``), or one character repeated (``,,,,``)."""
    tokens = hyp.split()
    if not tokens:
        return True
    if len(tokens) > 1:
        return 2 * Counter(tokens).most_common(1)[0][1] > len(tokens)
    return len(tokens[0]) > 1 and len(set(tokens[0])) == 1


@dataclass(frozen=True)
class OutputCheck:
    total: int  # translations judged (those of empty sources left out)
    repeated: int  # one token repeated, or empty
    distinct: int  # different strings
    example: str  # the most common degenerate (or, all the same, the one) translation

    @property
    def degenerate(self) -> bool:
        return self.total > 0 and (2 * self.repeated > self.total or self._all_same)

    @property
    def _all_same(self) -> bool:  # a handful of lines may well have one translation
        return self.total >= 10 and self.distinct == 1

    def message(self, name: str) -> str:
        if self._all_same:
            what = f"all {self.total} translations are the same ({self.example!r})"
        else:
            what = (
                f"{self.repeated} of {self.total} translations are mostly one token repeated or empty "
                f"(e.g. {self.example!r})"
            )
        return f"{name}: {what}: the model looks untrained"


def check_outputs(hyps: Sequence[str], sources: Optional[Sequence[str]] = None) -> OutputCheck:
    """How degenerate ``hyps`` are; with ``sources``, those of empty source lines (kept empty
    on purpose) are left out."""
    kept = [h for k, h in enumerate(hyps) if sources is None or sources[k].strip()]
    repeated = [h.strip() for h in kept if _repeats_one_token(h)]
    pool = repeated if repeated and len(set(kept)) > 1 else [h.strip() for h in kept]
    example = Counter(pool).most_common(1)[0][0] if pool else ""
    return OutputCheck(len(kept), len(repeated), len(set(kept)), example[:40])


def warn_if_degenerate(name: str, hyps: Sequence[str], sources: Optional[Sequence[str]] = None) -> OutputCheck:
    """``check_outputs``, logging one warning naming ``name`` (the output file) when most
    translations are degenerate."""
    check = check_outputs(hyps, sources)
    if check.degenerate:
        logger.warning(check.message(name))
    return check
