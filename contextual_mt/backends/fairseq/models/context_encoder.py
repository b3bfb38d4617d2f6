"""Encoders for the multi-encoder variant (appendix C of Fernandes et al., 2021).

A separate Transformer encoder reads the context. Source context is embedded with the
source embeddings, target context with the decoder's, so the context encoder adds layers but
no embedding tables. Its outputs, tagged by a learned segment vector per side, are appended to
the current sentence's encoder memory: the decoder's cross-attention then attends to both.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import torch
import torch.nn as nn
from fairseq.models.transformer import TransformerEncoder
from torch import Tensor


class ContextEncoder(TransformerEncoder):
    """Transformer encoder layers for context; embeddings are lent at call time."""

    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        self.embed_tokens = None  # shared tables live in the main encoder and the decoder

    def encode(self, tokens: Tensor, embed_tokens: nn.Embedding) -> Dict[str, Tensor]:
        padding_mask = tokens.eq(self.padding_idx)
        x = self.embed_scale * embed_tokens(tokens)
        if self.embed_positions is not None:
            x = x + self.embed_positions(tokens)
        if self.layernorm_embedding is not None:
            x = self.layernorm_embedding(x)
        x = self.dropout_module(x)
        x = x * (1 - padding_mask.unsqueeze(-1).type_as(x))
        x = x.transpose(0, 1)
        has_pad = padding_mask.any()
        for layer in self.layers:
            x = layer(x, encoder_padding_mask=padding_mask if has_pad else None)
        if self.layer_norm is not None:
            x = self.layer_norm(x)
        return {"out": x, "padding_mask": padding_mask}


class MultiContextEncoder(TransformerEncoder):
    """The current-sentence encoder, plus a context encoder; returns one joint memory.

    Parameter names of the current-sentence encoder are those of a stock fairseq
    ``transformer``, so sentence-level checkpoints load for fine-tuning.
    """

    def __init__(self, args, dictionary, embed_tokens, decoder_embed_tokens, context_args):
        super().__init__(args, dictionary, embed_tokens)
        self.context_encoder = ContextEncoder(context_args, dictionary, embed_tokens)
        self._decoder_embed = [decoder_embed_tokens]  # a list: not registered twice
        dim = embed_tokens.embedding_dim
        self.segment = nn.Parameter(torch.empty(2, dim))  # source context, target context
        nn.init.normal_(self.segment, mean=0.0, std=dim**-0.5)

    def forward(
        self,
        src_tokens: Tensor,
        src_lengths: Optional[Tensor] = None,
        return_all_hiddens: bool = False,
        token_embeddings: Optional[Tensor] = None,
        src_ctx_tokens: Optional[Tensor] = None,
        src_ctx_lengths: Optional[Tensor] = None,
        tgt_ctx_tokens: Optional[Tensor] = None,
        tgt_ctx_lengths: Optional[Tensor] = None,
    ) -> Dict[str, List[Tensor]]:
        out = super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)
        memory = [out["encoder_out"][0]]
        masks = [
            out["encoder_padding_mask"][0] if len(out["encoder_padding_mask"]) > 0 else src_tokens.eq(self.padding_idx)
        ]
        contexts = ((src_ctx_tokens, self.embed_tokens), (tgt_ctx_tokens, self._decoder_embed[0]))
        for side, (tokens, embed) in enumerate(contexts):
            if tokens is None or tokens.numel() == 0:
                continue
            ctx = self.context_encoder.encode(tokens, embed)
            memory.append(ctx["out"] + self.segment[side].to(ctx["out"]))
            masks.append(ctx["padding_mask"])
        if len(memory) > 1:
            out["encoder_out"] = [torch.cat(memory, dim=0)]
            out["encoder_padding_mask"] = [torch.cat(masks, dim=1)]
        return out
