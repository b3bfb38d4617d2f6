"""The shared pieces of gradient attribution: capturing the input embeddings of a forward pass
as leaves that receive gradients, the contrast each request attributes, and the reduction of
a (embedding, gradient) pair to one score per token.

Requests are batched by giving each its own row (a sentence with several selected tokens is
repeated once per token): rows never interact in a Transformer, so one backward of the sum of
the rows' contrasts gives every row exactly its own gradient.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, List, Optional, Sequence

import torch

from contextual_mt.attribution.interface import METHODS


@contextmanager
def captured_embeddings(modules: Sequence[torch.nn.Module]) -> Iterator[List[torch.Tensor]]:
    """Within the block, every output of these embedding modules is replaced by a leaf tensor
    that requires grad, appended to the yielded list in call order (a module shared by the
    encoder and the decoder appears once per call). Gradients are taken w.r.t. what the
    embedding table returns, before any scaling or positions are added."""
    outputs: List[torch.Tensor] = []

    def hook(module, inputs, output):
        leaf = output.detach().requires_grad_(True)
        outputs.append(leaf)
        return leaf

    seen, handles = set(), []
    for m in modules:
        if id(m) not in seen:
            seen.add(id(m))
            handles.append(m.register_forward_hook(hook))
    try:
        with torch.enable_grad():
            yield outputs
    finally:
        for h in handles:
            h.remove()


def contrast_values(log_probs: torch.Tensor, targets: Sequence[int], foils: Sequence[Optional[int]]) -> torch.Tensor:
    """Per row r: log p(targets[r]) - log p(foils[r]) (or log p(targets[r]) without a foil),
    from ``log_probs`` [rows, vocabulary] at the rows' attributed positions."""
    index = torch.arange(len(targets), device=log_probs.device)
    value = log_probs[index, torch.tensor(list(targets), device=log_probs.device)]
    if any(f is not None for f in foils):
        foil_ids = torch.tensor(
            [f if f is not None else t for f, t in zip(foils, targets, strict=True)], device=log_probs.device
        )
        has = torch.tensor([f is not None for f in foils], device=log_probs.device)
        value = value - torch.where(has, log_probs[index, foil_ids], torch.zeros_like(value))
    return value


def token_scores(embedding: torch.Tensor, gradient: torch.Tensor, method: str) -> torch.Tensor:
    """One score per token (the last dimension reduced by its L2 norm): saliency = |grad|,
    input_x_gradient = |embedding * grad|."""
    embedding, gradient = embedding.detach(), gradient.detach()
    if method == "saliency":
        return gradient.float().norm(dim=-1)
    if method == "input_x_gradient":
        return (embedding.float() * gradient.float()).norm(dim=-1)
    raise ValueError(f"not a gradient method: {method!r} (methods: {', '.join(METHODS)})")
