"""CADec, the context-aware decoder of Voita et al. (2019), on a frozen sentence-level base model.

The encoder side is the base model itself, frozen and always in eval mode: its encoder reads the
current source and each of the K previous source sentences separately; its decoder reads, by
teacher forcing, the first-pass translation of the current sentence and the translations of the
context sentences. Two memories follow, each state concatenated with the one-hot vector of its
sentence's distance (0 = current, 1 = previous, ... K):

    encoder memory:  base encoder last-layer states of x_0, x_1, ..., x_K
    base memory:     base decoder last-layer states and target token embeddings of y_0 (first
                     pass), y_1, ..., y_K

The CADec decoder is a Transformer decoder whose layers attend to itself (masked), to the
encoder memory and to the base memory. The base's configuration and weights are stored inside
the CADec checkpoint (``base_model_config`` and the ``encoder.base.*`` parameters), so that one
file is enough at inference.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from fairseq.models import (
    FairseqEncoder,
    FairseqEncoderDecoderModel,
    FairseqIncrementalDecoder,
    register_model,
    register_model_architecture,
)
from fairseq.modules import MultiheadAttention, PositionalEmbedding
from torch import Tensor

from commandkit.options import add_options, option
from contextual_mt.backends.fairseq.checkpoint_file import read_checkpoint
from contextual_mt.errors import Code, InputError

logger = logging.getLogger(__name__)


def split_context(
    tokens: Optional[Tensor], lengths: Optional[Tensor], brk: int, eos: int, limit: int
) -> List[List[Tensor]]:
    """Per row, its context sentences nearest first (``c_far <brk> ... c_near <brk>`` as
    ContextDataset writes them), each ending in </s> as the base model reads sentences; at most
    ``limit`` of them."""
    if tokens is None:
        return [[] for _ in range(len(lengths))] if lengths is not None else []
    if lengths is None:
        raise ValueError("context tokens without their lengths")
    rows = []
    for r in range(tokens.size(0)):
        row = tokens[r, : int(lengths[r])]
        cuts = (row == brk).nonzero(as_tuple=True)[0].tolist()
        sentences, start = [], 0
        for cut in cuts:
            sentences.append(torch.cat([row[start:cut], row.new_tensor([eos])]))
            start = cut + 1
        rows.append(list(reversed(sentences))[:limit])
    return rows


def distance_features(length: int, distance: int, size: int, like: Tensor) -> Tensor:
    """``length`` one-hot rows of the sentence distance (size = K + 1)."""
    out = like.new_zeros(length, size)
    out[:, distance] = 1.0
    return out


def pack(pieces: Sequence[Sequence[Tensor]], dim: int) -> Tuple[Tensor, Tensor]:
    """Per row a list of (length, dim) tensors -> (T, B, dim) memory and (B, T) padding mask."""
    rows = [torch.cat(list(p), dim=0) if len(p) else None for p in pieces]
    longest = max(r.size(0) if r is not None else 0 for r in rows)
    longest = max(longest, 1)
    like = next(r for r in rows if r is not None)
    memory = like.new_zeros(longest, len(rows), dim)
    mask = torch.ones(len(rows), longest, dtype=torch.bool, device=like.device)
    for b, r in enumerate(rows):
        if r is not None:
            memory[: r.size(0), b] = r
            mask[b, : r.size(0)] = False
    return memory, mask


class CADecEncoder(FairseqEncoder):
    """The frozen base model, turned into CADec's two memories."""

    def __init__(self, base, dictionary, context_size: int, brk: int):
        super().__init__(dictionary)
        self.base = base
        self.context_size = context_size
        self.brk = brk
        self.dim = base.encoder.embed_tokens.embedding_dim
        self.memory_dim = self.dim + context_size + 1
        for p in self.base.parameters():
            p.requires_grad_(False)

    def train(self, mode: bool = True):
        super().train(mode)
        self.base.eval()  # frozen: no dropout in its representations
        return self

    @torch.no_grad()
    def _encode_sentences(self, sentences: List[Tensor]) -> Tuple[List[Tensor], Dict]:
        """Base encoder last-layer states of each sentence (its own length, no padding)."""
        from fairseq.data import data_utils

        pad, eos = self.dictionary.pad(), self.dictionary.eos()
        tokens = data_utils.collate_tokens(sentences, pad, eos, left_pad=False)
        lengths = torch.tensor([len(s) for s in sentences], device=tokens.device)
        out = self.base.encoder(tokens, src_lengths=lengths)
        states = out["encoder_out"][0]  # T x N x C
        return [states[: len(s), n] for n, s in enumerate(sentences)], out

    @torch.no_grad()
    def _decode_sentences(self, translations: List[Tensor], encoder_out: Dict, sources: List[int]) -> List[Tensor]:
        """Base decoder last-layer states and token embeddings of each translation, teacher-forced
        on the source sentence ``sources[i]`` of the encoded batch."""
        from fairseq.data import data_utils

        pad, eos = self.dictionary.pad(), self.dictionary.eos()
        prev = data_utils.collate_tokens(translations, pad, eos, left_pad=False, move_eos_to_beginning=True)
        tokens = data_utils.collate_tokens(translations, pad, eos, left_pad=False)
        index = torch.tensor(sources, device=prev.device)
        enc = self.base.encoder.reorder_encoder_out(encoder_out, index)
        states, _ = self.base.decoder(prev, encoder_out=enc, features_only=True)  # N x T x C
        embeddings = self.base.decoder.embed_tokens(tokens)
        return [torch.cat([states[n, : len(t)], embeddings[n, : len(t)]], dim=0) for n, t in enumerate(translations)]

    def forward(
        self,
        src_tokens: Tensor,
        src_lengths: Tensor,
        first_pass: Optional[Tensor] = None,
        src_ctx_tokens: Optional[Tensor] = None,
        src_ctx_lengths: Optional[Tensor] = None,
        tgt_ctx_tokens: Optional[Tensor] = None,
        tgt_ctx_lengths: Optional[Tensor] = None,
        **unused,
    ) -> Dict:
        if first_pass is None:
            raise InputError(
                "CADec needs the first-pass translation of the current sentence (first_pass)", code=Code.MODEL
            )
        pad, eos = self.dictionary.pad(), self.dictionary.eos()
        K = self.context_size
        bsz = src_tokens.size(0)
        current = [row[row.ne(pad)] for row in src_tokens]
        src_ctx = split_context(src_ctx_tokens, src_ctx_lengths, self.brk, eos, K) if K else [[] for _ in range(bsz)]
        tgt_ctx = split_context(tgt_ctx_tokens, tgt_ctx_lengths, self.brk, eos, K) if K else [[] for _ in range(bsz)]
        # a context translation needs its source sentence, and the other way round
        n_ctx = [min(len(s), len(t)) for s, t in zip(src_ctx, tgt_ctx, strict=True)]
        sentences: List[Tensor] = []
        where: List[List[int]] = []  # where[b][k]: index of row b's sentence at distance k
        for b in range(bsz):
            where.append([len(sentences)])
            sentences.append(current[b])
            for k in range(n_ctx[b]):
                where[b].append(len(sentences))
                sentences.append(src_ctx[b][k])
        encoded, encoder_out = self._encode_sentences(sentences)
        translations, sources, owner = [], [], []
        for b in range(bsz):
            first = first_pass[b][first_pass[b].ne(pad)]
            for k, t in enumerate([first, *tgt_ctx[b][: n_ctx[b]]]):
                translations.append(t)
                sources.append(where[b][k])
                owner.append((b, k))
        decoded = self._decode_sentences(translations, encoder_out, sources)
        size = K + 1
        enc_pieces: List[List[Tensor]] = [[] for _ in range(bsz)]
        for b in range(bsz):
            for k, n in enumerate(where[b]):
                s = encoded[n]
                enc_pieces[b].append(torch.cat([s, distance_features(len(s), k, size, s)], dim=1))
        base_pieces: List[List[Tensor]] = [[] for _ in range(bsz)]
        for (b, k), d in zip(owner, decoded, strict=True):
            base_pieces[b].append(torch.cat([d, distance_features(len(d), k, size, d)], dim=1))
        enc_memory, enc_mask = pack(enc_pieces, self.memory_dim)
        base_memory, base_mask = pack(base_pieces, self.memory_dim)
        return {
            "encoder_out": [enc_memory],
            "encoder_padding_mask": [enc_mask],
            "base_out": [base_memory],
            "base_padding_mask": [base_mask],
            "src_lengths": [src_lengths],
        }

    def reorder_encoder_out(self, encoder_out: Dict, new_order: Tensor) -> Dict:
        return {
            "encoder_out": [encoder_out["encoder_out"][0].index_select(1, new_order)],
            "encoder_padding_mask": [encoder_out["encoder_padding_mask"][0].index_select(0, new_order)],
            "base_out": [encoder_out["base_out"][0].index_select(1, new_order)],
            "base_padding_mask": [encoder_out["base_padding_mask"][0].index_select(0, new_order)],
            "src_lengths": [encoder_out["src_lengths"][0].index_select(0, new_order)],
        }

    def max_positions(self):
        return self.base.encoder.max_positions()


class CADecLayer(nn.Module):
    """Masked self-attention, attention over the encoder memory, attention over the base memory,
    feed-forward; post-norm residual blocks as in the base Transformer."""

    def __init__(self, dim: int, memory_dim: int, heads: int, ffn: int, dropout: float, attention_dropout: float):
        super().__init__()
        self.self_attn = MultiheadAttention(dim, heads, dropout=attention_dropout, self_attention=True)
        self.encoder_attn = MultiheadAttention(
            dim, heads, kdim=memory_dim, vdim=memory_dim, dropout=attention_dropout, encoder_decoder_attention=True
        )
        self.base_attn = MultiheadAttention(
            dim, heads, kdim=memory_dim, vdim=memory_dim, dropout=attention_dropout, encoder_decoder_attention=True
        )
        self.norms = nn.ModuleList([nn.LayerNorm(dim) for _ in range(4)])
        self.fc1, self.fc2 = nn.Linear(dim, ffn), nn.Linear(ffn, dim)
        self.dropout = dropout

    def forward(
        self, x: Tensor, encoder_out: Dict, incremental_state=None, self_attn_mask=None, self_attn_padding_mask=None
    ) -> Tensor:
        y, _ = self.self_attn(
            query=x,
            key=x,
            value=x,
            key_padding_mask=self_attn_padding_mask,
            incremental_state=incremental_state,
            need_weights=False,
            attn_mask=self_attn_mask,
        )
        x = self.norms[0](x + F.dropout(y, self.dropout, self.training))
        for k, (attn, memory, mask) in enumerate(
            (
                (self.encoder_attn, encoder_out["encoder_out"][0], encoder_out["encoder_padding_mask"][0]),
                (self.base_attn, encoder_out["base_out"][0], encoder_out["base_padding_mask"][0]),
            )
        ):
            y, _ = attn(
                query=x,
                key=memory,
                value=memory,
                key_padding_mask=mask,
                incremental_state=incremental_state,
                static_kv=True,
                need_weights=False,
            )
            x = self.norms[1 + k](x + F.dropout(y, self.dropout, self.training))
        y = self.fc2(F.dropout(F.relu(self.fc1(x)), self.dropout, self.training))
        return self.norms[3](x + F.dropout(y, self.dropout, self.training))


class CADecDecoder(FairseqIncrementalDecoder):
    """CADec's decoder: the base decoder's width, heads and feed-forward size unless given."""

    def __init__(self, args, dictionary, base_decoder, memory_dim: int):
        super().__init__(dictionary)
        self.padding_idx = dictionary.pad()
        dim = base_decoder.embed_tokens.embedding_dim
        heads = args.decoder_attention_heads or base_decoder.layers[0].self_attn.num_heads
        ffn = args.decoder_ffn_embed_dim or base_decoder.layers[0].fc1.out_features
        # CADec's own target embeddings (tied to its output), starting from the base's
        self.embed_tokens = nn.Embedding(len(dictionary), dim, dictionary.pad())
        self.embed_tokens.weight.data.copy_(base_decoder.embed_tokens.weight.data)
        self.embed_scale = dim**0.5
        self.max_target_positions = base_decoder.max_positions()
        self.embed_positions = PositionalEmbedding(self.max_target_positions, dim, dictionary.pad(), learned=False)
        self.layers = nn.ModuleList(
            [
                CADecLayer(dim, memory_dim, heads, ffn, args.dropout, args.attention_dropout)
                for _ in range(args.decoder_layers)
            ]
        )
        self.dropout = args.dropout

    def forward(
        self,
        prev_output_tokens: Tensor,
        encoder_out: Optional[Dict] = None,
        incremental_state=None,
        features_only: bool = False,
        **unused,
    ):
        x, extra = self.extract_features(prev_output_tokens, encoder_out, incremental_state)
        if not features_only:
            x = self.output_layer(x)
        return x, extra

    def extract_features(
        self, prev_output_tokens: Tensor, encoder_out: Optional[Dict] = None, incremental_state=None, **unused
    ):
        positions = self.embed_positions(prev_output_tokens, incremental_state=incremental_state)
        if incremental_state is not None:
            prev_output_tokens = prev_output_tokens[:, -1:]
            positions = positions[:, -1:]
        x = self.embed_scale * self.embed_tokens(prev_output_tokens) + positions
        x = F.dropout(x, self.dropout, self.training).transpose(0, 1)
        padding = prev_output_tokens.eq(self.dictionary.pad())
        mask = None
        if incremental_state is None:
            n = x.size(0)
            mask = torch.triu(x.new_full((n, n), float("-inf")), 1)
        for layer in self.layers:
            x = layer(
                x,
                encoder_out,
                incremental_state,
                self_attn_mask=mask,
                self_attn_padding_mask=padding if padding.any() else None,
            )
        return x.transpose(0, 1), {"attn": [None], "inner_states": [x]}

    def output_layer(self, features: Tensor) -> Tensor:
        return F.linear(features, self.embed_tokens.weight)

    def max_positions(self) -> int:
        return self.max_target_positions


def load_base_model(path: Optional[str], task) -> Tuple[nn.Module, Dict]:
    """The base checkpoint's model, checked: a sentence-level translation model whose
    dictionaries are the task's. Returns it and its model config (stored in CADec's)."""
    if not path:
        raise InputError(
            "--base-model: give the sentence-level base checkpoint CADec refines", code=Code.OPTION_MISSING
        )
    state = read_checkpoint(path, "--base-model checkpoint")
    cfg = state.get("cfg")
    task_name = getattr(cfg.task, "_name", None) if cfg is not None else None
    if cfg is None or task_name not in ("translation", "document_translation"):
        raise InputError(
            f"{path}: --base-model was trained with task '{task_name}'; CADec refines a "
            "sentence-level 'translation' or 'document_translation' model",
            code=Code.MODEL,
        )
    if task_name == "document_translation" and (cfg.task.source_context_size or cfg.task.target_context_size):
        raise InputError(
            f"{path}: --base-model was trained with context ({cfg.task.source_context_size}/"
            f"{cfg.task.target_context_size} sentences); CADec's base must be context-agnostic "
            "(trained at context 0)",
            code=Code.MODEL,
        )
    _check_base_dictionaries(path, cfg, task)
    config = _container(cfg.model)
    model = _build_base(config, task, path)
    model.load_state_dict(state["model"], strict=True)
    return model, config


def _check_base_dictionaries(path: str, cfg, task) -> None:
    """The base must read and write the data's symbols with the same ids: its dict.*.txt
    (beside the checkpoint, else in its training data directory) against the task's."""
    from fairseq.data import Dictionary

    checked = False
    for side, lang, ours in (
        ("source", cfg.task.source_lang, task.source_dictionary),
        ("target", cfg.task.target_lang, task.target_dictionary),
    ):
        for directory in (os.path.dirname(os.path.abspath(path)), getattr(cfg.task, "data", None)):
            dict_path = os.path.join(str(directory), f"dict.{lang}.txt") if directory and lang else None
            if dict_path and os.path.isfile(dict_path):
                theirs = Dictionary.load(dict_path)
                if theirs.symbols != ours.symbols:
                    raise InputError(
                        f"{path}: the base model's {side} dictionary ({dict_path}) differs from "
                        f"the data's; CADec needs a base trained on the same dictionaries",
                        code=Code.MISMATCH,
                    )
                checked = True
                break
    if not checked:
        logger.warning(
            "%s: the base model's dictionaries were not found beside it or in its data directory; "
            "only their sizes are checked",
            path,
        )


def _container(model_cfg) -> Dict:
    from omegaconf import OmegaConf

    if isinstance(model_cfg, dict):
        return dict(model_cfg)
    try:
        container = OmegaConf.to_container(model_cfg, resolve=True)
    except ValueError:
        return dict(vars(model_cfg))
    if not isinstance(container, dict):
        raise InputError(f"the base model's config is not a mapping ({type(container).__name__})", code=Code.MODEL)
    return container


def _build_base(config: Dict, task, where: str) -> nn.Module:
    from argparse import Namespace

    from fairseq.models import ARCH_MODEL_REGISTRY

    arch = config.get("arch") or config.get("_name")
    if arch not in ARCH_MODEL_REGISTRY:
        raise InputError(f"{where}: base architecture '{arch}' is not registered", code=Code.MODEL)
    args = Namespace(**{k: v for k, v in config.items() if k != "_name"})
    model = ARCH_MODEL_REGISTRY[arch].build_model(args, task)
    rows = model.decoder.embed_tokens.weight.size(0)
    if rows != len(task.target_dictionary) or model.encoder.embed_tokens.weight.size(0) != len(task.source_dictionary):
        raise InputError(
            f"{where}: the base model's dictionaries differ from the data's "
            f"({rows} target symbols, the data has {len(task.target_dictionary)})",
            code=Code.MISMATCH,
        )
    return model


@dataclass
class CADecArgs:
    """CADec's options (the names its checkpoints hold)."""

    base_model: Optional[str] = option(metavar="PATH", help="the frozen sentence-level base checkpoint")
    base_model_config: Optional[str] = option(help=argparse.SUPPRESS)
    cadec_max_distance: Optional[int] = option(help=argparse.SUPPRESS)
    decoder_layers: Optional[int] = option(metavar="N", help="CADec decoder layers")
    decoder_attention_heads: Optional[int] = option(metavar="N")
    decoder_ffn_embed_dim: Optional[int] = option(metavar="N")
    dropout: Optional[float] = option(metavar="D")
    attention_dropout: Optional[float] = option(metavar="D")


@register_model("cadec_transformer")
class CADecModel(FairseqEncoderDecoderModel):
    # contexts reach the encoder as separate inputs, as for multi-encoder models (the data layout)
    multi_encoder = True

    @staticmethod
    def add_args(parser):
        add_options(parser, CADecArgs)

    @classmethod
    def build_model(cls, args, task):
        cadec_transformer(args)
        from contextual_mt.symbols import BRK

        if getattr(args, "base_model_config", None):  # a CADec checkpoint: the base is inside it
            config = json.loads(args.base_model_config)
            base = _build_base(config, task, "CADec checkpoint")
        else:
            base, config = load_base_model(getattr(args, "base_model", None), task)
            args.base_model_config = json.dumps(config)  # saved with the checkpoint
        if getattr(args, "cadec_max_distance", None) is None:  # K as trained, fixed in the checkpoint
            args.cadec_max_distance = int(getattr(task.cfg, "context_size", 0))
        context_size = int(args.cadec_max_distance)
        encoder = CADecEncoder(base, task.source_dictionary, context_size, task.source_dictionary.index(BRK))
        decoder = CADecDecoder(args, task.target_dictionary, base.decoder, encoder.memory_dim)
        return cls(encoder, decoder)

    @property
    def base(self) -> nn.Module:
        return self.encoder.base

    def forward(self, src_tokens, src_lengths, prev_output_tokens, **context):
        encoder_out = self.encoder(src_tokens, src_lengths=src_lengths, **context)
        return self.decoder(prev_output_tokens, encoder_out=encoder_out)

    def max_positions(self):
        return (self.encoder.max_positions(), self.decoder.max_positions())


@register_model_architecture("cadec_transformer", "cadec_transformer")
def cadec_transformer(args):
    args.decoder_layers = getattr(args, "decoder_layers", None) or 6
    args.decoder_attention_heads = getattr(args, "decoder_attention_heads", None)
    args.decoder_ffn_embed_dim = getattr(args, "decoder_ffn_embed_dim", None)
    args.dropout = getattr(args, "dropout", None) if getattr(args, "dropout", None) is not None else 0.1
    args.attention_dropout = getattr(args, "attention_dropout", None) or 0.0
    args.base_model_config = getattr(args, "base_model_config", None)
    args.base_model = getattr(args, "base_model", None)
    args.cadec_max_distance = getattr(args, "cadec_max_distance", None)


@register_model_architecture("cadec_transformer", "cadec_transformer_tiny")
def cadec_transformer_tiny(args):
    """Two CADec layers, for the demo and tests."""
    args.decoder_layers = getattr(args, "decoder_layers", None) or 2
    cadec_transformer(args)
