"""A fairseq ``document_translation`` checkpoint (concatenation model) as an attribution backend.

The source context is the start of the encoder input (``x[-k] <brk> ... x[-1] <brk> x </s>``,
left-padded), the target context the decoder prefix after its first ``</s>``: context tokens
are found at those positions, their separators are not context tokens. Multi-encoder and CADec
checkpoints read their context through other inputs and are refused (``check_attributable``).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from contextual_mt.attribution.distributions import compare_distributions
from contextual_mt.attribution.gradients import (
    Passes,
    captured_embeddings,
    contrast_values,
    slot_gradients,
    slot_width,
    token_scores,
)
from contextual_mt.attribution.interface import ContextToken, CueRequest, TokenContrast
from contextual_mt.backends.fairseq.data.model_input import build_decoder_input, build_encoder_input
from contextual_mt.backends.fairseq.model import DocumentModel, beyond_trained_error
from contextual_mt.backends.fairseq.scoring import FairseqScoringBackend
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.batching import FAIRSEQ_ATTRIBUTION_MAX_TOKENS, length_batches
from contextual_mt.symbols import BRK

# why attribute refuses context sizes larger than those trained (``DocumentModel.load`` refuses them so)
BEYOND_TRAINED = (
    "the model never learned to read that context, so attributing to it means nothing; give sizes up to those trained"
)


def check_attributable(model: DocumentModel, name: str) -> None:
    """Attribution reads context at known input positions of a concatenation model."""
    if model.cadec:
        raise InputError(
            f"{name}: a CADec checkpoint; attribute supports concatenation "
            "document_translation checkpoints and --hf-model models",
            code=Code.MODEL,
        )
    if model.multi_encoder:
        raise InputError(
            f"{name}: a multi-encoder checkpoint (context read by a separate encoder); attribute "
            "supports concatenation document_translation checkpoints and --hf-model models",
            code=Code.MODEL,
        )


class FairseqAttributionBackend(FairseqScoringBackend):
    """CTI and CCI of a concatenation ``document_translation`` checkpoint."""

    def __init__(
        self, model: DocumentModel, name: str = "the checkpoint", max_tokens: int = FAIRSEQ_ATTRIBUTION_MAX_TOKENS
    ):
        check_attributable(model, name)
        trained = model.trained_context
        if (
            model.source_context_size > trained["source_context_size"]
            or model.target_context_size > trained["target_context_size"]
        ):
            raise beyond_trained_error(
                name, (model.source_context_size, model.target_context_size), trained, BEYOND_TRAINED
            )
        super().__init__(model)
        self.max_tokens = max_tokens
        self.brk = (model.src_dict.index(BRK), model.tgt_dict.index(BRK))
        for p in model.models[0].parameters():  # gradients are taken w.r.t. inputs only
            p.requires_grad_(False)
        self.passes = Passes()  # how the cue scores were computed (the run's summary)

    def translator(self, decoding):
        from contextual_mt.backends.fairseq.translator import DocumentTranslator

        return DocumentTranslator(self.model, options=decoding)

    # ------------------------------------------------------------------ context tokens
    def _item(self, index: int, context: bool = True) -> Dict:
        return self._dataset(context)[index]

    def context_tokens(self, index: int) -> List[ContextToken]:
        item = self._item(index)
        out: List[ContextToken] = []
        for side, ids, dictionary, brk in (
            ("source", item["src_context"], self.model.src_dict, self.brk[0]),
            ("target", item["tgt_context"], self.model.tgt_dict, self.brk[1]),
        ):
            for sentence, position, token_id in _split_context(ids.tolist(), brk):
                out.append(ContextToken(side, sentence, position, dictionary[token_id]))
        return out

    def _context_positions(self, item: Dict, src_width: int) -> Tuple[List[int], List[int]]:
        """Where the context tokens sit: encoder positions (the row left-padded to ``src_width``)
        and decoder positions (after the leading </s>), separators skipped."""
        src_ctx, tgt_ctx = item["src_context"].tolist(), item["tgt_context"].tolist()
        offset = src_width - (len(src_ctx) + len(item["source"]))
        enc = [offset + p for p, t in enumerate(src_ctx) if t != self.brk[0]]
        dec = [1 + p for p, t in enumerate(tgt_ctx) if t != self.brk[1]]
        return enc, dec

    # ------------------------------------------------------------------ batches
    def _inputs(self, items: Sequence[Dict]):
        m = self.model
        encoder_input = build_encoder_input(
            [it["source"] for it in items],
            [it["src_context"] for it in items],
            [it["tgt_context"] for it in items],
            m.src_dict.pad(),
            m.src_dict.eos(),
            False,
        )
        decoder_input = build_decoder_input(
            [it["target"] for it in items],
            [it["tgt_context"] for it in items],
            m.tgt_dict.pad(),
            m.tgt_dict.eos(),
            False,
        )
        if m.device.type == "cuda":
            from fairseq import utils

            encoder_input, decoder_input = utils.move_to_cuda((encoder_input, decoder_input))
        return encoder_input, decoder_input

    def _features(self, items: Sequence[Dict], **decoder_kwargs):
        """Decoder features (before the output layer) of a batch, the decoder's extra outputs
        and the inputs; one model only (the scorer's ensemble of one)."""
        net = self.model.models[0]
        net.eval()
        encoder_input, decoder_input = self._inputs(items)
        encoder_out = net.encoder(encoder_input["src_tokens"], src_lengths=encoder_input["src_lengths"])
        x, extra = net.decoder(
            decoder_input["prev_output_tokens"], encoder_out=encoder_out, features_only=True, **decoder_kwargs
        )
        return x, extra, encoder_input, decoder_input

    def _log_probs_at(self, x: torch.Tensor, rows: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """log p over the vocabulary at (row, position) pairs: the output layer only there."""
        net = self.model.models[0]
        logits = net.decoder.output_layer(x[rows, positions])
        return torch.log_softmax(logits.float(), dim=-1)

    def _batches(self, keys: Sequence[int], length) -> List[List[int]]:
        return list(length_batches(list(keys), length, max(1, len(keys)), self.max_tokens))

    # ------------------------------------------------------------------ CTI
    @torch.no_grad()
    def contrast(self, indices: Sequence[int]) -> Dict[int, TokenContrast]:
        out: Dict[int, TokenContrast] = {}
        for chunk in self._batches(indices, self.length):
            passes = []
            for context in (True, False):
                items = [self._item(i, context) for i in chunk]
                x, _, _, decoder_input = self._features(items)
                rows, positions = _target_positions(items)
                rows, positions = rows.to(x.device), positions.to(x.device)
                passes.append(
                    (
                        self._log_probs_at(x, rows, positions),
                        decoder_input["prev_output_tokens"].new_tensor(
                            [t for it in items for t in it["target"].tolist()]
                        ),
                    )
                )
            (lp_c, targets), (lp_a, _) = passes
            values = compare_distributions(lp_c, lp_a, targets)
            bounds = np.cumsum([0] + [len(self._item(i)["target"]) for i in chunk])
            for k, i in enumerate(chunk):
                a, b = bounds[k], bounds[k + 1]
                out[int(i)] = TokenContrast(*(v[a:b] for v in values))
        return out

    # ------------------------------------------------------------------ CCI
    def cue_scores(self, requests: Sequence[CueRequest], method: str) -> List[np.ndarray]:
        """One forward per sentence (not per request), sentences batched within ``--max-tokens``:
        attention reads every request of a sentence from its one pass, gradients come from
        backward passes of its one graph (``gradients.slot_gradients``)."""
        out: List[np.ndarray] = [np.zeros(0)] * len(requests)
        by_sentence: Dict[int, List[int]] = {}
        for k, r in enumerate(requests):
            by_sentence.setdefault(r.index, []).append(k)
        for chunk in self._batches(list(by_sentence), self.length):
            if method == "attention":
                keys = [k for i in chunk for k in by_sentence[i]]
                scores = self._attention([requests[k] for k in keys])
            else:
                groups = [[requests[k] for k in by_sentence[i]] for i in chunk]
                keys = [k for i in chunk for k in by_sentence[i]]
                scores = self._gradients(groups, method)
            for k, s in zip(keys, scores, strict=True):
                out[k] = s
        return out

    def _request_positions(self, batch: Sequence[CueRequest], items: Sequence[Dict]) -> torch.Tensor:
        """The decoder position predicting each request's token (after the target context)."""
        return torch.tensor([len(it["tgt_context"]) + r.token for r, it in zip(batch, items, strict=True)])

    def _gradients(self, groups: Sequence[Sequence[CueRequest]], method: str) -> List[np.ndarray]:
        """The scores of every request of ``groups`` (one group per distinct sentence), in order."""
        net = self.model.models[0]
        net.eval()
        items = [self._item(g[0].index) for g in groups]
        encoder_input, decoder_input = self._inputs(items)
        width = encoder_input["src_tokens"].size(1)
        # no source-context token in the batch: nothing to attribute through the encoder, so it
        # runs without gradients
        through_encoder = any(len(it["src_context"]) for it in items)
        tables = [net.encoder.embed_tokens, net.decoder.embed_tokens] if through_encoder else [net.decoder.embed_tokens]
        if not through_encoder:
            with torch.no_grad():
                encoder_out = net.encoder(encoder_input["src_tokens"], src_lengths=encoder_input["src_lengths"])
        slots = max(len(g) for g in groups)
        chosen = [g[s] if s < len(g) else g[0] for g in groups for s in range(slots)]  # extra slots: read by no one
        owner = [b for b in range(len(groups)) for _ in range(slots)]
        padded = len(items) * max(width, decoder_input["prev_output_tokens"].size(1))
        per_pass: List[Tuple[np.ndarray, Optional[np.ndarray]]] = []
        with captured_embeddings(tables) as embedded:
            if through_encoder:
                encoder_out = net.encoder(encoder_input["src_tokens"], src_lengths=encoder_input["src_lengths"])
            x, _ = net.decoder(decoder_input["prev_output_tokens"], encoder_out=encoder_out, features_only=True)
            positions = self._request_positions(chosen, [items[b] for b in owner]).to(x.device)
            lp = self._log_probs_at(x, torch.tensor(owner, device=x.device), positions)
            targets = [int(items[b]["target"][r.token]) for r, b in zip(chosen, owner, strict=True)]
            values = contrast_values(lp, targets, [r.foil for r in chosen]).view(len(groups), slots)
            if len(embedded) != len(tables):  # the encoder's table, then the decoder's (one shared table: twice)
                raise RuntimeError(f"expected {len(tables)} embedding calls, saw {len(embedded)}")
            count = Passes(forwards=1, sentences=len(groups))
            per = slot_width(self.max_tokens, padded)
            for _first, grads in slot_gradients(values, [embedded[0], embedded[-1]], per, count):
                dec = token_scores(embedded[-1], grads[1], method).cpu().numpy()
                enc = token_scores(embedded[0], grads[0], method).cpu().numpy() if through_encoder else None
                per_pass.append((dec, enc))
        self.passes.add(count)
        dec = np.concatenate([d for d, _ in per_pass])  # [slots, rows, positions]
        enc = np.concatenate([e for _, e in per_pass]) if through_encoder else None
        result = []
        for b, (group, it) in enumerate(zip(groups, items, strict=True)):
            e, d = self._context_positions(it, width)
            for s in range(len(group)):
                source_side = enc[s, b, e] if enc is not None else np.zeros(0)
                result.append(np.concatenate([source_side, dec[s, b, d]]).astype(np.float64))
        return result

    @torch.no_grad()
    def _attention(self, batch: Sequence[CueRequest]) -> List[np.ndarray]:
        """One forward per distinct sentence: the weights of every position come out at once."""
        net = self.model.models[0]
        first: Dict[int, int] = {}
        owner = [first.setdefault(r.index, len(first)) for r in batch]
        unique = [self._item(i) for i in first]
        self.passes.add(Passes(forwards=1, sentences=len(unique)))
        with _self_attention_of(net.decoder.layers[-1]) as self_attn:
            _, extra, encoder_input, _ = self._features(unique, alignment_layer=len(net.decoder.layers) - 1)
        cross = extra["attn"][0]  # [rows, target positions, source positions], mean over heads
        own = self_attn[0]
        width = encoder_input["src_tokens"].size(1)
        result = []
        for r, u in zip(batch, owner, strict=True):
            it = unique[u]
            e, d = self._context_positions(it, width)
            p = len(it["tgt_context"]) + r.token
            result.append(
                np.concatenate([cross[u, p, e].float().cpu().numpy(), own[u, p, d].float().cpu().numpy()]).astype(
                    np.float64
                )
            )
        return result


def _split_context(ids: List[int], brk: int) -> List[Tuple[int, int, int]]:
    """(sentence counting back, position in the sentence, id) of ``x[-k] <brk> ... x[-1] <brk>``."""
    sentences: List[List[int]] = [[]]
    for t in ids:
        if t == brk:
            sentences.append([])
        else:
            sentences[-1].append(t)
    sentences = sentences[:-1] if not sentences[-1] else sentences
    k = len(sentences)
    return [(s - k, p, t) for s, sent in enumerate(sentences) for p, t in enumerate(sent)]


def _target_positions(items: Sequence[Dict]) -> Tuple[torch.Tensor, torch.Tensor]:
    """(row, decoder position) of every target token (EOS included), row by row."""
    rows, positions = [], []
    for r, it in enumerate(items):
        start = len(it["tgt_context"])
        for t in range(len(it["target"])):
            rows.append(r)
            positions.append(start + t)
    return torch.tensor(rows, dtype=torch.long), torch.tensor(positions, dtype=torch.long)


class _self_attention_of:
    """Within the block, the self-attention weights (mean over heads) of one fairseq decoder
    layer: asks its attention module for weights, which the layer does not need itself."""

    def __init__(self, layer):
        self.module = layer.self_attn
        self.weights: List[torch.Tensor] = []

    def __enter__(self) -> List[torch.Tensor]:
        def ask(module, args, kwargs):
            return args, {**kwargs, "need_weights": True}

        def keep(module, args, kwargs, output):
            self.weights.append(output[1])

        self.handles = [
            self.module.register_forward_pre_hook(ask, with_kwargs=True),
            self.module.register_forward_hook(keep, with_kwargs=True),
        ]
        return self.weights

    def __exit__(self, *exc) -> None:
        for h in self.handles:
            h.remove()
