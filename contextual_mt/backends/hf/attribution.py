"""Context attribution (PECoRe-style CTI and CCI) for Hugging Face models: the CXMI scoring
backend plus the context tokens each sentence reads, the two next-token distributions of every
target token, and one score per context token for a chosen target token.

Where a context sentence's tokens are in the model input: the input text is built from the
sentences (seq2seq: the encoder text and the forced target-context text; decoder-only: the
prompt), so each sentence is a known character span of it. Its tokens are found by tokenizing
the text up to the span's start and up to its end and comparing with the actual ids: tokens
identical to the actual ids lie before the cut. The tokens are therefore always slices of the
model's own input ids (slow tokenizers such as Marian's included, no offsets needed). A token
that straddles a sentence boundary (merged with template text or a separator) counts in the
sentence; special tokens (EOS, language codes) are never context tokens.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import torch

from commandkit.errors import first_line
from contextual_mt.attribution.distributions import compare_distributions
from contextual_mt.attribution.gradients import (
    Passes,
    captured_embeddings,
    checkpointed,
    contrast_values,
    slot_gradients,
    slot_width,
    token_scores,
)
from contextual_mt.attribution.interface import METHODS, ContextToken, CueRequest, TokenContrast
from contextual_mt.backends.hf.inputs import Row
from contextual_mt.backends.hf.scoring import HFScoringBackend
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.batching import filled, length_batches
from contextual_mt.inference.context_trim import last_sentences

ENCODER, DECODER = 0, 1
_MARK = ("\ue000", "\ue001")  # private-use characters around a sentence: where it lands in a prompt


@dataclass(frozen=True)
class _Located:
    """The context tokens of one with-context row and where the model reads them:
    ``stream`` ENCODER or DECODER per token, ``position`` in that stream's ids."""

    tokens: Tuple[ContextToken, ...]
    stream: np.ndarray
    position: np.ndarray


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):  # a common prefix: up to the shorter
        if x != y:
            break
        n += 1
    return n


class HFAttributionBackend(HFScoringBackend):
    """``AttributionBackend`` for ``transformers`` seq2seq MT models and decoder-only LMs."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._texts: List[Tuple[List[str], List[str], str]] = []
        self._located: Dict[int, _Located] = {}
        tok = self.hf.tokenizer
        self._special = {int(i) for i in tok.all_special_ids}
        probe = tok.convert_ids_to_tokens(list(tok(" a", add_special_tokens=False)["input_ids"]))
        self._byte_level = bool(probe) and str(probe[0]).startswith("Ġ")
        for p in self.hf.model.parameters():  # gradients are taken w.r.t. inputs only (nothing kept for weights)
            p.requires_grad_(False)
        self.passes = Passes()  # how the cue scores were computed (the run's summary)

    def translator(self, decoding):
        from contextual_mt.backends.hf.translator import HFDocumentTranslator

        return HFDocumentTranslator(self.hf, decoding)

    # ------------------------------------------------------------------ corpus
    def load(self, sources, references, doc_starts, context_of=None, names=("source", "reference")):
        out = super().load(sources, references, doc_starts, context_of, names)
        # the context sentences each with-context row was given (as in HFScoringBackend.load);
        # the row itself says how many of the nearest it actually reads
        at = np.arange(len(sources)) if context_of is None else np.asarray(context_of)
        starts = np.asarray(doc_starts)
        self._texts, self._located = [], {}
        for i, row in enumerate(self._with):
            a = int(at[i])
            k = max(self.source_context_size, self.target_context_size)
            first = int(starts[a])
            src, tgt = last_sentences(sources[first:a], k), last_sentences(references[first:a], k)
            n_src, n_tgt = row.context
            self._texts.append((last_sentences(src, n_src), last_sentences(tgt, n_tgt), sources[i]))
        return out

    def context_tokens(self, index: int) -> List[ContextToken]:
        return list(self._locate(index).tokens)

    def _locate(self, index: int) -> _Located:
        if index not in self._located:
            self._located[index] = self._build_located(index)
        return self._located[index]

    def _build_located(self, index: int) -> _Located:
        row = self._with[index]
        src_ctx, tgt_ctx, source = self._texts[index]
        if self.hf.seq2seq:
            per_side = [self._seq2seq_source(row, src_ctx, source), self._seq2seq_target(row, tgt_ctx)]
        else:
            per_side = self._lm_prompt(row, src_ctx, tgt_ctx, source)
        tokens, stream, position = [], [], []
        for side, (where, sentences) in zip(("source", "target"), per_side, strict=True):
            for j, (pieces, positions) in enumerate(sentences):
                for p, (piece, at) in enumerate(zip(pieces, positions, strict=True)):
                    tokens.append(ContextToken(side, j - len(sentences), p, piece))
                    stream.append(where)
                    position.append(at)
        return _Located(tuple(tokens), np.array(stream, dtype=np.int64), np.array(position, dtype=np.int64))

    def _piece(self, tok_id: int) -> str:
        """A readable piece, '▁' opening a word (byte-level BPE pieces are decoded to text)."""
        tok = self.hf.tokenizer
        if self._byte_level:
            text = tok.decode([tok_id])
            return ("▁" if text[:1].isspace() else "") + text.strip()
        return str(tok.convert_ids_to_tokens(tok_id))

    def _offset_pieces(self, ids: Sequence[int], text: str, encode: Callable) -> Optional[List[str]]:
        """Pieces from a fast tokenizer's character offsets (as ``InputLayout.pieces``): the bytes of
        one character split over tokens show the character once. None for a slow tokenizer."""
        if not getattr(self.hf.tokenizer, "is_fast", False):
            return None
        enc = encode(text, return_offsets_mapping=True)
        if list(enc["input_ids"]) != list(ids):
            return None
        out, end, bare_space = [], 0, False
        for a, b in enc["offset_mapping"]:
            a = max(a, end)
            piece = text[a:b] if b > a else ""
            starts = (a == 0 or text[a - 1].isspace() or piece[:1].isspace()) and not bare_space
            bare_space = bool(piece) and not piece.strip()  # a space token opens the word after it
            piece = piece.strip()
            out.append("▁" + piece if starts and (piece or bare_space) else piece)
            end = max(end, b)
        return out

    def _sentences_in(
        self, ids: Sequence[int], text: str, spans: Sequence[Tuple[int, int]], encode: Callable
    ) -> List[Tuple[List[str], List[int]]]:
        """For each character span of ``text`` (tokenized by ``encode`` into ``ids``): the pieces
        of its tokens and their positions in ``ids`` (see the module docstring)."""
        ids = list(ids)

        def cut(end: int, straddle_in: bool) -> int:
            part = list(encode(text[:end])["input_ids"])
            while part and part[-1] in self._special:  # EOS added to the partial text
                part.pop()
            n = _common_prefix(ids, part)
            # the partial text's last token differs: the actual token there straddles the cut
            return n + 1 if straddle_in and n < len(part) else n

        pieces = self._offset_pieces(ids, text, encode)
        out = []
        for a, b in spans:
            start, end = cut(a, False), min(cut(b, True), len(ids))
            keep = [p for p in range(start, end) if ids[p] not in self._special]
            out.append(([pieces[p] if pieces else self._piece(ids[p]) for p in keep], keep))
        return out

    def _seq2seq_source(self, row: Row, src_ctx: List[str], source: str):
        sep, lead = self.hf.options.separator, self.hf.marian_prefix
        text = lead + sep.join([*src_ctx, source])
        spans, at = [], len(lead)
        for s in src_ctx:
            spans.append((at, at + len(s)))
            at += len(s) + len(sep)
        return ENCODER, self._sentences_in(row.encoder_ids, text, spans, self.hf.tokenizer)

    def _seq2seq_target(self, row: Row, tgt_ctx: List[str]):
        if not tgt_ctx:
            return DECODER, []
        ids = self.layout.target_context_ids(tgt_ctx)
        sep = self.hf.options.separator
        text = sep.join(tgt_ctx) + (sep if sep.strip() else "")
        spans, at = [], 0
        for s in tgt_ctx:
            spans.append((at, at + len(s)))
            at += len(s) + len(sep)
        offset = len(row.prefix) - len(ids)  # after the decoder start (and language code)
        found = self._sentences_in(
            ids, text, spans, lambda t, **kw: self.hf.tokenizer(text_target=t, add_special_tokens=False, **kw)
        )
        return DECODER, [(i, [p + offset for p in ps]) for i, ps in found]

    def _lm_prompt(self, row: Row, src_ctx: List[str], tgt_ctx: List[str], source: str):
        """The prompt rendered with each context sentence between two marks: the marks give the
        sentences' spans in the prompt without them."""
        k = row.context[0]
        pairs = list(zip(last_sentences(src_ctx, k), last_sentences(tgt_ctx, k), strict=True))
        marked = [(f"{_MARK[0]}{s}{_MARK[1]}", f"{_MARK[0]}{t}{_MARK[1]}") for s, t in pairs]
        t, tok = self.hf.prompt, self.hf.tokenizer
        if t.chat:

            def render(p):
                return tok.apply_chat_template(t.chat_messages(source, p), tokenize=False, add_generation_prompt=True)

            special = False
        else:

            def render(p):
                return t.render_prompt(source, p)

            special = True
        chars: List[str] = []
        spans, start = [], 0
        for c in render(marked):  # strip the marks, recording the spans they enclose
            if c == _MARK[0]:
                start = len(chars)
            elif c == _MARK[1]:
                spans.append((start, len(chars)))
            else:
                chars.append(c)
        text = "".join(chars)
        if text != render(pairs) or len(spans) != 2 * k:
            raise InputError(
                f"{self.hf.folder}: cannot find the context sentences in the prompt (the "
                "template changes the sentences' text); attribution needs them verbatim",
                code=Code.MODEL,
            )
        found = self._sentences_in(row.prefix, text, spans, lambda x, **kw: tok(x, add_special_tokens=special, **kw))
        # the spans alternate source, target (pair by pair, oldest first)
        return [(DECODER, found[0::2]), (DECODER, found[1::2])]

    # ------------------------------------------------------------------ CTI
    def contrast(self, indices: Sequence[int]) -> Dict[int, TokenContrast]:
        """Both passes in shared batches; a sentence without context has equal passes."""
        indices = [int(i) for i in indices]
        read = [i for i in indices if self._with[i].context != (0, 0)]
        rows = [self._without[i] for i in indices] + [self._with[i] for i in read]
        dists = self._distributions(rows)
        n = len(indices)
        with_context = dict(zip(read, dists[n:], strict=True))
        out = {}
        for i, no_context in zip(indices, dists[:n], strict=True):
            context = with_context.get(i, no_context)
            lp_c, lp_a, kl, foil = compare_distributions(context, no_context, torch.tensor(self._with[i].target))
            m = len(self._with[i].pieces)

            def merge(v: np.ndarray, m: int = m) -> np.ndarray:  # the end tokens: one value
                return np.append(v[:m], v[m:].sum())

            foil = np.append(foil[:m], foil[m] if len(foil) > m else -1)
            out[i] = TokenContrast(merge(lp_c), merge(lp_a), merge(kl), foil.astype(np.int64))
        return out

    @torch.no_grad()
    def _distributions(self, rows: Sequence[Row]) -> List[torch.Tensor]:
        """Log-softmax [target tokens, vocabulary] of each row (on the CPU), in batches."""
        out: List[Optional[torch.Tensor]] = [None] * len(rows)
        for batch in length_batches(
            range(len(rows)),
            lambda k: rows[k].length,
            max(1, len(rows)),
            self.max_tokens,
            key=lambda k: rows[k].encoder or (),
        ):
            inputs, row_index, pos_index, _, lengths = self._inputs([rows[b] for b in batch])
            lp = torch.log_softmax(self._logits_at(inputs, row_index, pos_index), dim=-1).cpu()
            for b, part in zip(batch, torch.split(lp, lengths), strict=True):
                out[b] = part
        return filled(out)

    # ------------------------------------------------------------------ CCI
    def cue_scores(self, requests: Sequence[CueRequest], method: str) -> List[np.ndarray]:
        """One forward per sentence (not per request): the requests of a sentence are its slots,
        read from one teacher-forced pass (attention) or from backward passes of one graph
        (gradients, ``gradients.slot_gradients``); sentences are batched within ``--max-tokens``."""
        if method not in METHODS:
            raise InputError(
                f"unknown attribution method {method!r} (methods: {', '.join(METHODS)})", code=Code.OPTION_VALUE
            )
        for q in requests:
            if not 0 <= q.token < len(self._with[q.index].pieces) + 1:
                raise InputError(f"sentence {q.index + 1} has no target token {q.token}", code=Code.FORMAT)
        out: List[Optional[np.ndarray]] = [None] * len(requests)
        by_sentence: Dict[int, List[int]] = {}
        for k, q in enumerate(requests):
            if len(self._locate(q.index).tokens):
                by_sentence.setdefault(q.index, []).append(k)
            else:
                out[k] = np.zeros(0, dtype=np.float64)  # no context read: nothing to score
        rows = {i: self._sentence_row(i, [requests[k].token for k in ks]) for i, ks in by_sentence.items()}
        for batch in length_batches(
            list(by_sentence),
            lambda i: rows[i].length,
            max(1, len(by_sentence)),
            self.max_tokens,
            key=lambda i: (len(by_sentence[i]), rows[i].encoder or ()),  # similar slot counts together
        ):
            groups = [[requests[k] for k in by_sentence[i]] for i in batch]
            scores = (
                self._attention_scores(groups, [rows[i] for i in batch])
                if method == "attention"
                else self._gradient_scores(groups, [rows[i] for i in batch], method)
            )
            for i, values in zip(batch, scores, strict=True):
                for k, v in zip(by_sentence[i], values, strict=True):
                    out[k] = v
        return filled(out)

    def _sentence_row(self, index: int, tokens: Sequence[int]) -> Row:
        """The with-context row cut after the last attributed token (position p predicts target
        token p - len(prefix) + 1; the merged end value attributes the first end token): the
        same scores, fewer positions, since every position sees only the ones before it."""
        r = self._with[index]
        return Row(r.encoder, r.prefix, r.target[: max(tokens) + 1], r.pieces, r.context)

    def _slots(self, groups: Sequence[Sequence[CueRequest]], rows: Sequence[Row]):
        """Per (row, slot): the decoder position predicting the slot's token, the token and the
        foil, flattened row-major; a row with fewer requests repeats its first (read by no one)."""
        slots = max(len(g) for g in groups)
        chosen = [g[s] if s < len(g) else g[0] for g in groups for s in range(slots)]
        prefix = [len(r.prefix) for r in rows for _ in range(slots)]
        positions = torch.tensor([n - 1 + q.token for n, q in zip(prefix, chosen, strict=True)], device=self.hf.device)
        targets = [rows[b // slots].target[q.token] for b, q in enumerate(chosen)]
        return slots, positions, targets, [q.foil for q in chosen]

    def _read(
        self, groups: Sequence[Sequence[CueRequest]], per_stream: Sequence[torch.Tensor]
    ) -> List[List[np.ndarray]]:
        """Each request's values at its sentence's context tokens; ``per_stream``: [slots, rows,
        positions] per stream (slot s of row b: request s of group b)."""
        out = []
        for b, group in enumerate(groups):
            loc = self._locate(group[0].index)
            values = np.zeros((len(group), len(loc.tokens)), dtype=np.float64)
            for s, tensor in enumerate(per_stream):
                pick = loc.stream == s
                if pick.any():
                    at = torch.as_tensor(loc.position[pick], device=tensor.device)
                    values[:, pick] = tensor[: len(group), b][:, at].double().cpu().numpy()
            out.append(list(values))
        return out

    def _embedding_modules(self) -> List[torch.nn.Module]:
        model = self.hf.model
        modules = [model.get_input_embeddings()]
        for part in ("get_encoder", "get_decoder"):
            embed = getattr(getattr(model, part, lambda: None)(), "embed_tokens", None)
            if embed is not None:
                modules.append(embed)
        return modules

    def _layers(self) -> List[torch.nn.Module]:
        """The model's Transformer layers (what activation checkpointing wraps): those that
        ``transformers`` itself can checkpoint."""
        try:
            from transformers.modeling_layers import GradientCheckpointingLayer
        except ImportError:  # an older transformers: the whole graph is kept
            return []
        return [m for m in self.hf.model.modules() if isinstance(m, GradientCheckpointingLayer)]

    def _gradient_scores(
        self, groups: Sequence[Sequence[CueRequest]], rows: Sequence[Row], method: str
    ) -> List[List[np.ndarray]]:
        # each row's own encoder pass: rows never share an input whose gradient they would sum
        inputs, _, _, _, _ = self._inputs(rows, share_encoder=False)
        slots, positions, targets, foils = self._slots(groups, rows)
        index = torch.arange(len(rows), device=self.hf.device).repeat_interleave(slots)
        padded = len(rows) * max(r.length for r in rows)
        # a sentence over --max-tokens (a batch alone): its layers keep their inputs only
        long = bool(self.max_tokens) and padded > self.max_tokens
        # (a model without layers transformers can checkpoint keeps its whole graph: not counted)
        layers = self._layers() if long else []
        count = Passes(forwards=1, sentences=len(rows), checkpointed=int(bool(layers)))
        per_stream: List[List[torch.Tensor]] = []
        with captured_embeddings(self._embedding_modules()) as leaves, checkpointed(layers):
            logits = self._logits_at(inputs, index, positions)
            values = contrast_values(torch.log_softmax(logits, dim=-1), targets, foils).view(len(rows), slots)
            # seq2seq: the encoder runs first, so its embeddings are the first captured
            expected = 2 if self.hf.seq2seq else 1
            if len(leaves) != expected:
                raise InputError(
                    f"{self.hf.folder}: the input embeddings were called {len(leaves)} times "
                    f"in one forward (expected {expected}); this model is not supported",
                    code=Code.MODEL,
                )
            for _first, grads in slot_gradients(values, leaves, slot_width(self.max_tokens, padded), count):
                per_stream.append([token_scores(leaf, g, method) for leaf, g in zip(leaves, grads, strict=True)])
        self.passes.add(count)
        streams = [torch.cat(parts) for parts in zip(*per_stream, strict=True)]  # [slots, rows, positions]
        if not self.hf.seq2seq:
            streams = [streams[0], streams[0]]  # decoder-only: one stream (both sides in the prompt)
        return self._read(groups, streams)

    @torch.no_grad()
    def _attention_scores(self, groups: Sequence[Sequence[CueRequest]], rows: Sequence[Row]) -> List[List[np.ndarray]]:
        self.passes.add(Passes(forwards=1, sentences=len(rows)))
        inputs, _, _, _, _ = self._inputs(rows, share_encoder=False)
        with self._eager_attention():
            out = self.hf.model(**inputs, use_cache=False, output_attentions=True)
        weights = out.cross_attentions if self.hf.seq2seq else out.attentions
        if not weights or weights[-1] is None:
            raise InputError(
                f"{self.hf.folder}: {type(self.hf.model).__name__} returns no attention weights with "
                "output_attentions (eager attention); --method attention cannot read them: use a gradient "
                "method (saliency, input_x_gradient)",
                code=Code.MODEL,
            )
        slots, positions, _, _ = self._slots(groups, rows)
        index = torch.arange(len(rows), device=self.hf.device).repeat_interleave(slots)

        def at_slots(weights: torch.Tensor) -> torch.Tensor:  # [slots, rows, positions]
            return weights.float().mean(1)[index, positions].view(len(rows), slots, -1).transpose(0, 1)

        if self.hf.seq2seq:
            return self._read(groups, [at_slots(out.cross_attentions[-1]), at_slots(out.decoder_attentions[-1])])
        own = at_slots(out.attentions[-1])
        return self._read(groups, [own, own])

    @contextmanager
    def _eager_attention(self) -> Iterator[None]:
        """Attention weights need the eager implementation (SDPA and flash attention do not
        return them); the model goes back to its own after, so scoring is unchanged."""
        model = self.hf.model
        before = getattr(model.config, "_attn_implementation", None)
        if before in (None, "eager"):
            yield
            return
        try:
            model.set_attn_implementation("eager")
        except Exception as e:  # a model with no eager path
            raise InputError(
                f"{self.hf.folder}: {type(model).__name__} cannot switch to eager attention ({first_line(e)}); "
                "--method attention needs it (SDPA and flash attention return no weights): use a gradient method",
                code=Code.MODEL,
            ) from None
        try:
            yield
        finally:
            model.set_attn_implementation(before)
