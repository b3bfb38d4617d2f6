"""The one place where a batch of sentences with context becomes the model's encoder input.

Concatenation models read ``x[i-k] <brk> ... x[i-1] <brk> x[i] </s>`` as one left-padded source;
multi-encoder models read the sentence alone and take both contexts as separate, right-padded
inputs (``src_ctx_tokens`` / ``tgt_ctx_tokens``, None when no row has any). Used by the
training/scoring collater (ContextDataset), by translation (DocumentTranslator) and by pair
scoring (contrastive evaluation).

Teacher forcing (``build_decoder_input``) feeds concatenation models the target context as a
decoder prefix, with padding in ``target`` at its positions, so only the current sentence is
scored:

    prev_output_tokens:  </s> y[i-1] <brk> y[i]
    target:              pad  pad    pad   y[i] </s>
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, TypedDict

import torch
from fairseq.data import data_utils


def model_sources(
    sources: Sequence[torch.Tensor], src_contexts: Sequence[torch.Tensor], multi_encoder: bool
) -> List[torch.Tensor]:
    """What the (sentence) encoder reads for each row."""
    if multi_encoder:
        return list(sources)
    return [torch.cat([c, s]) if len(c) else s for s, c in zip(sources, src_contexts, strict=True)]


def build_encoder_input(
    sources: Sequence[torch.Tensor],
    src_contexts: Sequence[torch.Tensor],
    tgt_contexts: Sequence[torch.Tensor],
    pad: int,
    eos: int,
    multi_encoder: bool,
    left_pad_source: bool = True,
) -> Dict[str, torch.Tensor]:
    """``net_input`` without the decoder side: src_tokens, src_lengths and, for multi-encoder
    models, the context tokens and lengths. Rows stay in the order given."""
    src = model_sources(sources, src_contexts, multi_encoder)
    net_input = {
        "src_tokens": data_utils.collate_tokens(src, pad, eos, left_pad=left_pad_source),
        "src_lengths": torch.LongTensor([len(s) for s in src]),
    }
    if multi_encoder:
        for side, ctx in (("src", src_contexts), ("tgt", tgt_contexts)):
            net_input[f"{side}_ctx_tokens"] = (
                data_utils.collate_tokens(list(ctx), pad, eos, left_pad=False) if any(len(c) for c in ctx) else None
            )
            net_input[f"{side}_ctx_lengths"] = torch.LongTensor([len(c) for c in ctx])
    return net_input


class DecoderInput(TypedDict):
    """What ``build_decoder_input`` gives (see there)."""

    prev_output_tokens: torch.Tensor
    target: torch.Tensor
    prefix_lengths: torch.Tensor
    tgt_prefix: Optional[torch.Tensor]


def build_decoder_input(
    targets: Sequence[torch.Tensor], tgt_contexts: Sequence[torch.Tensor], pad: int, eos: int, multi_encoder: bool
) -> DecoderInput:
    """Teacher-forcing tensors for targets (each ending in </s>): ``prev_output_tokens``,
    ``target`` (context positions padded), ``prefix_lengths`` and ``tgt_prefix`` (None when no
    row has a target-context prefix). Multi-encoder models read their target context in the
    encoder, so their decoder sees the sentence alone."""
    if multi_encoder or not any(len(c) for c in tgt_contexts):
        prefixes = None
        full = masked = list(targets)
    else:
        prefixes = list(tgt_contexts)
        full = [torch.cat([p, t]) for p, t in zip(prefixes, targets, strict=True)]
        masked = [torch.cat([p.new_full((len(p),), pad), t]) for p, t in zip(prefixes, targets, strict=True)]
    return {
        "prev_output_tokens": data_utils.collate_tokens(full, pad, eos, left_pad=False, move_eos_to_beginning=True),
        "target": data_utils.collate_tokens(masked, pad, eos, left_pad=False),
        "prefix_lengths": (
            torch.LongTensor([len(p) for p in prefixes])
            if prefixes is not None
            else torch.zeros(len(targets), dtype=torch.long)
        ),
        "tgt_prefix": data_utils.collate_tokens(prefixes, pad, eos, left_pad=False) if prefixes is not None else None,
    }
