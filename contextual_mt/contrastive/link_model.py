"""A model's own probability of an output sentence given its source line(s), as the optional link
score of ``docalign`` (``contextual-mt align --path/--hf-model``): the geometric mean probability
of the output's tokens, ``exp(log p(output | source) / tokens)``, in [0, 1] as chrF is. The pairs
are scored without context, batched like contrastive candidates (``score_candidates``)."""

from __future__ import annotations

import math
from typing import Callable, List, Optional, Sequence, Tuple

from contextual_mt.contrastive.evaluate import score_candidates
from contextual_mt.inference.interface import ContextPair
from contextual_mt.inference.registry import ModelSpec, open_backend


def link_model(
    spec: ModelSpec, batch_size: int = 64, max_tokens: Optional[int] = None, progress: bool = True
) -> Callable[[Sequence[Tuple[str, str]]], List[float]]:
    """The model (loaded now, once) as docalign's ``LinkModel``."""
    backend = open_backend(spec, max_tokens)

    def similarities(pairs: Sequence[Tuple[str, str]]) -> List[float]:
        backend.load_pairs(
            [ContextPair(source, output) for source, output in pairs],
            where=lambda i: f"the link of {pairs[i][0][:40]!r} and {pairs[i][1][:40]!r}",
        )
        out = [0.0] * len(pairs)
        for records in score_candidates(backend, list(range(len(pairs))), batch_size, max_tokens, progress):
            for r in records:
                out[r["line"] - 1] = math.exp(r["logprob"] / max(r["tokens"], 1))
        return out

    return similarities
