"""The shared pieces of gradient attribution: capturing the input embeddings of a forward pass
as leaves that receive gradients, the contrast each request attributes, and the reduction of
a (embedding, gradient) pair to one score per token.

One forward per sentence: a batch of sentences is read once (teacher-forced, every position),
each sentence's selected tokens are its "slots", and the gradients of the contrasts come from
backward passes of that one graph, slot by slot (``slot_gradients``): rows never interact in a
Transformer, so the backward of the sum over rows of slot s gives every row exactly the gradient
of its own s-th contrast. Several slots go through one vectorized backward pass
(``is_grads_batched``) as long as slots x padded tokens stay within ``--max-tokens``.

Memory: a batch's graph holds its activations until its last backward pass. A sentence longer
than ``--max-tokens`` (a long document context) is a batch alone, read with activation
checkpointing (``checkpointed``): each layer keeps its input only and recomputes the rest in
each backward pass, one slot per pass, so memory grows with the layers' inputs, not with every
activation of every layer.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

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


@dataclass
class Passes:
    """How a run's cue scores were computed (``attribute``'s summary reports it)."""

    forwards: int = 0  # forward passes (one per batch of sentences)
    sentences: int = 0  # sentences read (each once)
    checkpointed: int = 0  # forwards with activation checkpointing (a sentence over --max-tokens)
    backward: int = 0  # backward passes
    slots: int = 0  # gradients taken (attributed tokens, plus the idle slots of shorter groups)
    widest: int = 0  # most slots in one backward pass

    def add(self, other: Passes) -> None:
        for k, v in asdict(other).items():
            setattr(self, k, max(getattr(self, k), v) if k == "widest" else getattr(self, k) + v)

    def as_dict(self) -> Dict[str, int]:
        return asdict(self)


@contextmanager
def checkpointed(layers: Sequence[torch.nn.Module]) -> Iterator[None]:
    """Within the block, each of ``layers`` runs under activation checkpointing (non-reentrant:
    the backward passes recompute the layer from its saved input, as often as they run)."""
    from torch.utils.checkpoint import checkpoint

    patched = []
    for layer in layers:
        forward = layer.forward

        def wrapped(*args, _forward=forward, **kwargs):
            return checkpoint(_forward, *args, use_reentrant=False, **kwargs)

        patched.append((layer, layer.__dict__.get("forward")))
        layer.forward = wrapped
    try:
        yield
    finally:
        for layer, own in patched:
            if own is None:
                del layer.forward  # the class's forward again
            else:
                layer.forward = own


def slot_width(max_tokens: Optional[int], padded_tokens: int) -> int:
    """Slots per backward pass: a pass over ``width`` slots of a batch of ``padded_tokens``
    (rows x longest row) handles as many tokens as ``width`` forwards, kept within ``max_tokens``
    (at least one slot: a batch already over the budget is a batch alone)."""
    if not max_tokens:
        return 1
    return max(1, max_tokens // max(1, padded_tokens))


def slot_gradients(
    values: torch.Tensor, leaves: Sequence[torch.Tensor], width: int, count: Optional[Passes] = None
) -> Iterator[Tuple[int, List[torch.Tensor]]]:
    """Gradients of each column ("slot") of ``values`` [rows, slots] with respect to ``leaves``,
    ``width`` slots per backward pass of the one graph (kept until the last pass). Yields (first
    slot of the pass, one tensor per leaf [slots of the pass, *leaf.shape]; zeros where a leaf
    does not reach the values). Row r of slot s's gradient is that of ``values[r, s]`` alone,
    rows being independent; a row without an s-th contrast holds a value whose gradient is not
    meant to be read. ``count``: the passes are added to it."""
    slots = values.shape[1]
    for first in range(0, slots, width):
        last = min(slots, first + width)
        if count is not None:
            count.backward += 1
            count.slots += (last - first) * values.shape[0]
            count.widest = max(count.widest, last - first)
        retain = last < slots
        if last - first == 1:
            outputs = torch.zeros_like(values)
            outputs[:, first] = 1
            grads = torch.autograd.grad(values, leaves, outputs, retain_graph=retain, allow_unused=True)
            batched = [g.unsqueeze(0) if g is not None else None for g in grads]
        else:
            outputs = torch.zeros(last - first, *values.shape, dtype=values.dtype, device=values.device)
            outputs[torch.arange(last - first), :, torch.arange(first, last)] = 1
            batched = list(
                torch.autograd.grad(
                    values, leaves, outputs, retain_graph=retain, allow_unused=True, is_grads_batched=True
                )
            )
        yield (
            first,
            [
                g if g is not None else leaf.new_zeros(last - first, *leaf.shape)
                for g, leaf in zip(batched, leaves, strict=True)
            ],
        )
