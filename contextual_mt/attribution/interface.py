"""What an attribution backend adds to a ``CorpusScorer`` (``inference.interface``), and the
small records that pass between the backends and the runner (``attribute.py``).

The corpus is loaded with ``CorpusScorer.load`` as for CXMI (each sentence's context is the
sentences before it, up to the context sizes); then:

- ``context_tokens(i)``: the context tokens sentence ``i`` reads, in one fixed order: the
  vector every cue score of the sentence is aligned with;
- ``contrast(indices)``: per target token, log p with and without context, the KL divergence
  between the two next-token distributions, and the no-context model's own choice (the foil);
- ``cue_scores(requests, method)``: for each (sentence, target token, foil) request, one score
  per context token of the sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from contextual_mt.inference.interface import CorpusScorer, Translator

SIDES = ("source", "target")
METHODS = ("saliency", "input_x_gradient", "attention")
CONTRASTS = ("foil", "logprob")


@dataclass(frozen=True)
class ContextToken:
    """A context token as the records name it: ``sentence`` counts back from the current one
    (-1: the previous sentence), ``position`` is the token's index among that sentence's tokens."""

    side: str  # "source" | "target"
    sentence: int
    position: int
    token: str


@dataclass
class TokenContrast:
    """Per target token of one sentence (EOS included, as the CXMI records): natural-log
    probabilities with and without context, KL(p_C || p_A) in nats, and the foil: the token the
    no-context distribution ranks first, or second when the first is the target token itself
    (ids in the model's target vocabulary)."""

    log_prob_context: np.ndarray
    log_prob_no_context: np.ndarray
    kl: np.ndarray
    foil: np.ndarray


@dataclass(frozen=True)
class CueRequest:
    """Attribute target token ``token`` of sentence ``index``. ``foil``: contrast the target
    token's log-probability with the foil's (``--contrast foil``); None: the target token's
    log-probability alone (``--contrast logprob``; its no-context value does not depend on the
    context, so this attributes the P-CXMI of the token)."""

    index: int
    token: int
    foil: Optional[int] = None


@runtime_checkable
class AttributionBackend(CorpusScorer, Protocol):
    def context_tokens(self, index: int) -> List[ContextToken]:
        """The context tokens sentence ``index`` is read with (after ``load``), source side
        first, oldest sentence first; special tokens (separators, EOS, language codes, prompt
        text) are not context tokens."""

    def contrast(self, indices: Sequence[int]) -> Dict[int, TokenContrast]:
        """CTI inputs for each sentence: both passes in batches (``--max-tokens``)."""

    def translator(self, decoding) -> Translator:
        """The loaded model as a ``Translator`` with these ``DecodingOptions`` (``attribute
        --translate``: the model's own translations, without loading it twice)."""

    def cue_scores(self, requests: Sequence[CueRequest], method: str) -> List[np.ndarray]:
        """For each request, one score per ``context_tokens(request.index)`` (in that order):
        saliency (the L2 norm of the gradient of the contrast w.r.t. the token's input
        embedding), input_x_gradient (the L2 norm of embedding x gradient), or attention
        (the last decoder layer's weights from the target position to the token, mean over
        heads: cross-attention for source tokens, self-attention for target tokens)."""
