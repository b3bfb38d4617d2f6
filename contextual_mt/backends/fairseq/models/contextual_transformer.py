"""The ``contextual_transformer`` model.

Concatenation (default): context is part of the data (see ``context_dataset``); the network
is a standard Transformer, so stock sentence-level checkpoints fine-tune into it directly.
``--multi-encoder``: a separate context encoder (``context_encoder``).
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from typing import Optional

from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import TransformerModel, base_architecture

from commandkit.options import add_options, option
from contextual_mt.backends.fairseq.models.context_encoder import MultiContextEncoder

logger = logging.getLogger(__name__)


@dataclass
class ContextualTransformerArgs:
    """The model's own options, beyond fairseq's transformer's (the names checkpoints hold)."""

    multi_encoder: bool = option(
        action="store_true",
        default=False,
        help="encode context with a separate encoder (sharing embeddings) instead of "
        "concatenating it to the current sentence",
    )
    context_encoder_layers: Optional[int] = option(
        metavar="N", help="layers of the context encoder (default: --encoder-layers)"
    )


@register_model("contextual_transformer")
class ContextualTransformerModel(TransformerModel):
    def __init__(self, args, encoder, decoder):
        super().__init__(args, encoder, decoder)
        self.multi_encoder = bool(getattr(args, "multi_encoder", False))

    @staticmethod
    def add_args(parser):
        TransformerModel.add_args(parser)
        add_options(parser, ContextualTransformerArgs)

    @classmethod
    def build_model(cls, args, task):
        base_contextual_architecture(args)
        model = super().build_model(args, task)
        if args.multi_encoder:
            # Rebuild the encoder around the shared tables, adding the context encoder.
            context_args = copy.copy(args)
            context_args.encoder_layers = args.context_encoder_layers
            model.encoder = MultiContextEncoder(
                args,
                task.source_dictionary,
                model.encoder.embed_tokens,
                model.decoder.embed_tokens,
                context_args,
            )
        return model

    def forward(
        self,
        src_tokens,
        src_lengths,
        prev_output_tokens,
        return_all_hiddens: bool = True,
        features_only: bool = False,
        alignment_layer=None,
        alignment_heads=None,
        **context,
    ):
        encoder_out = self.encoder(
            src_tokens, src_lengths=src_lengths, return_all_hiddens=return_all_hiddens, **context
        )
        return self.decoder(
            prev_output_tokens,
            encoder_out=encoder_out,
            features_only=features_only,
            alignment_layer=alignment_layer,
            alignment_heads=alignment_heads,
            src_lengths=src_lengths,
            return_all_hiddens=return_all_hiddens,
        )

    def load_state_dict(self, state_dict, strict=True, model_cfg=None, args=None):
        """Load a checkpoint, also a sentence-level ``transformer`` one (fine-tuning).

        - Embedding tables with fewer rows (a dictionary without <brk>/<mask> appended at the
          end) keep their rows; the new symbols keep their fresh initialisation.
        - A multi-encoder model missing its context encoder starts it from the sentence
          encoder's layers where they exist.
        """
        state_dict = dict(state_dict)
        own = self.state_dict()
        from_encoder, from_scratch = [], []
        for key, value in own.items():
            if key in state_dict:
                loaded = state_dict[key]
                grows = key.endswith(("embed_tokens.weight", "output_projection.weight"))
                if grows and loaded.dim() == 2 and loaded.size(1) == value.size(1) and loaded.size(0) < value.size(0):
                    logger.warning(
                        "%s: checkpoint has %d rows, model %d; new symbols keep their initialisation",
                        key,
                        loaded.size(0),
                        value.size(0),
                    )
                    grown = value.clone()
                    grown[: loaded.size(0)] = loaded
                    state_dict[key] = grown
                continue
            if key.startswith("encoder.context_encoder.") or key == "encoder.segment":
                source = key.replace("encoder.context_encoder.", "encoder.", 1)
                if source != key and source in state_dict and state_dict[source].shape == value.shape:
                    state_dict[key] = state_dict[source].clone()
                    from_encoder.append(key)
                else:
                    state_dict[key] = value
                    from_scratch.append(key)
        if from_encoder or from_scratch:
            logger.info(
                "context encoder not in checkpoint: %d tensors copied from the sentence "
                "encoder, %d freshly initialised (%s)",
                len(from_encoder),
                len(from_scratch),
                ", ".join(from_scratch[:4]),
            )
        return super().load_state_dict(state_dict, strict=strict, model_cfg=model_cfg, args=args)


def base_contextual_architecture(args):
    args.multi_encoder = getattr(args, "multi_encoder", False)
    base_architecture(args)
    args.context_encoder_layers = getattr(args, "context_encoder_layers", None) or args.encoder_layers


@register_model_architecture("contextual_transformer", "contextual_transformer")
def contextual_transformer(args):
    base_contextual_architecture(args)


def _size(args, dim: int, ffn: int, layers: int, heads: int) -> None:
    """Architecture defaults for both sides; explicit command-line values win."""
    for side in ("encoder", "decoder"):
        for name, value in (("embed_dim", dim), ("ffn_embed_dim", ffn), ("layers", layers), ("attention_heads", heads)):
            key = f"{side}_{name}"
            setattr(args, key, getattr(args, key, value))


@register_model_architecture("contextual_transformer", "contextual_transformer_small")
def contextual_transformer_small(args):
    """The papers' small model: hidden 512, FFN 1024, 6 layers, 8 heads."""
    _size(args, dim=512, ffn=1024, layers=6, heads=8)
    base_contextual_architecture(args)


@register_model_architecture("contextual_transformer", "contextual_transformer_big")
def contextual_transformer_big(args):
    """The papers' large model: hidden 1024, FFN 4096, 6 layers, 16 heads."""
    _size(args, dim=1024, ffn=4096, layers=6, heads=16)
    args.dropout = getattr(args, "dropout", 0.3)
    base_contextual_architecture(args)


@register_model_architecture("contextual_transformer", "contextual_transformer_tiny")
def contextual_transformer_tiny(args):
    """A CPU-sized model for demos and tests: hidden 128, FFN 256, 2 layers, 4 heads."""
    _size(args, dim=128, ffn=256, layers=2, heads=4)
    base_contextual_architecture(args)
