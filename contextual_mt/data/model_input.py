"""The one place where a batch of sentences with context becomes the model's encoder input.

Concatenation models read ``x[i-k] <brk> ... x[i-1] <brk> x[i] </s>`` as one left-padded source;
multi-encoder models read the sentence alone and take both contexts as separate, right-padded
inputs (``src_ctx_tokens`` / ``tgt_ctx_tokens``, None when no row has any). Used by the
training/scoring collater (ContextDataset) and by translation (DocumentTranslator).
"""
from __future__ import annotations

from typing import Dict, List, Sequence

import torch
from fairseq.data import data_utils


def model_sources(sources: Sequence[torch.Tensor], src_contexts: Sequence[torch.Tensor],
                  multi_encoder: bool) -> List[torch.Tensor]:
    """What the (sentence) encoder reads for each row."""
    if multi_encoder:
        return list(sources)
    return [torch.cat([c, s]) if len(c) else s for s, c in zip(sources, src_contexts)]


def build_encoder_input(sources: Sequence[torch.Tensor], src_contexts: Sequence[torch.Tensor],
                        tgt_contexts: Sequence[torch.Tensor], pad: int, eos: int, multi_encoder: bool,
                        left_pad_source: bool = True) -> Dict[str, torch.Tensor]:
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
