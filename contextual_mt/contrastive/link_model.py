"""A model's own probability of an output sentence given its source line(s), as the optional link
score of ``docalign`` (``contextual-mt align --path/--hf-model``): the geometric mean probability
of the output's tokens, ``exp(log p(output | source) / tokens)``, in [0, 1] as chrF is. The pairs
are scored without context, batched like contrastive candidates (``score_candidates``).

A candidate link is made by the aligner, not written by the user: one longer than the model's
positions (two long lines and their sentences) is left unscored (None), and docalign scores it by
its other terms alone and counts it in the summary, instead of failing the command."""

from __future__ import annotations

import math
from typing import Callable, List, Optional, Sequence, Tuple

from contextual_mt.contrastive.evaluate import score_candidates
from contextual_mt.errors import OverPositionsError
from contextual_mt.inference.interface import ContextPair, ModelSpec, PairScorer
from contextual_mt.inference.registry import open_pair_scorer


def link_model(
    spec: ModelSpec, batch_size: int = 64, max_tokens: Optional[int] = None, progress: bool = True
) -> Callable[[Sequence[Tuple[str, str]]], List[Optional[float]]]:
    """The model (loaded now, once) as docalign's ``LinkModel``."""
    backend = open_pair_scorer(spec, max_tokens)

    def similarities(pairs: Sequence[Tuple[str, str]]) -> List[Optional[float]]:
        readable = _load_readable(backend, pairs)
        out: List[Optional[float]] = [None] * len(pairs)
        for records in score_candidates(backend, list(range(len(readable))), batch_size, max_tokens, progress):
            for r in records:
                out[readable[r["line"] - 1]] = math.exp(r["logprob"] / max(r["tokens"], 1))
        return out

    return similarities


def _load_readable(backend: PairScorer, pairs: Sequence[Tuple[str, str]]) -> List[int]:
    """Load the pairs the model can read whole into ``backend``; their indices in ``pairs``. The
    pairs are tried one by one only when some pair does not fit (the usual case loads once)."""

    def where(pair: Tuple[str, str]) -> str:
        return f"the link of {pair[0][:40]!r} and {pair[1][:40]!r}"

    def load(indices: Sequence[int]) -> None:
        backend.load_pairs(
            [ContextPair(pairs[i][0], pairs[i][1]) for i in indices], where=lambda k: where(pairs[indices[k]])
        )

    everything = list(range(len(pairs)))
    try:
        load(everything)
        return everything
    except OverPositionsError:
        pass
    readable = []
    for i in everything:
        try:
            load([i])
            readable.append(i)
        except OverPositionsError:
            continue
    load(readable)
    return readable
