"""A Hugging Face model as a ``CorpusScorer`` and a ``PairScorer``: the same CXMI / P-CXMI records and contrastive
scores as the fairseq backend, from ``transformers`` seq2seq MT models and decoder-only LMs.

Rows (``inputs.Row``) are scored in batches padded on the right (exact: every scored position
sees only the tokens before it). A seq2seq batch encodes each distinct encoder input once. The
output layer is applied only at the scored positions (not at the forced target context or the
prompt), which is checked against the model's own logits when the backend is built; a model
for which the two differ is scored through its full forward instead.

In bfloat16 / float16 the model runs in that dtype; log p is computed in float32 from its
logits at the scored positions. The output layer check allows for the dtype's rounding (see
``_check_fast_head``), and the output layer's rows are padded to a multiple of 64 (zero rows,
cut off before the softmax): a vocabulary such as opus-mt's 58,101 otherwise leaves the half
precision matmul's output rows misaligned for tensor cores.
"""

from __future__ import annotations

import functools
import logging
from typing import Callable, Dict, Hashable, List, Optional, Sequence, Tuple

import numpy as np
import torch

from contextual_mt.backends.hf.inputs import InputLayout, Row, lm_context_sizes
from contextual_mt.backends.hf.model import HFModel
from contextual_mt.backends.hf.options import HFModelOptions
from contextual_mt.errors import Code, InputError, OverPositionsError
from contextual_mt.inference.batching import filled, hf_scoring_max_tokens, length_batches
from contextual_mt.inference.context_trim import last_sentences
from contextual_mt.inference.interface import ContextPair

logger = logging.getLogger(__name__)

HALF = (torch.bfloat16, torch.float16)


class HFScoringBackend:
    """Teacher-forced log-probabilities of targets from a ``transformers`` model."""

    trained_context = None  # these models were not trained with a context size
    HEAD_ROWS_MULTIPLE = 64  # half precision: the fused output layer's rows padded to a multiple of this

    def __init__(self, hf: HFModel, max_tokens: Optional[int] = None):
        self.hf = hf
        self.layout = InputLayout(hf)
        self.max_tokens = hf_scoring_max_tokens(max_tokens, hf.device.type)
        self.source_context_size, self.target_context_size = lm_context_sizes(
            hf, hf.options.source_context_size, hf.options.target_context_size
        )
        self._with: List[Row] = []
        self._without: List[Row] = []
        self._pairs: List[Row] = []
        self.pad = self._pad_id()
        self._fused: Optional[Tuple[torch.Tensor, Optional[torch.Tensor], int]] = None  # see _fused_head
        self.head_check: Dict[str, float] = {}  # what _check_fast_head measured (benchmarks, logs)
        self.fast_head = self._check_fast_head()

    @classmethod
    def open(cls, options: HFModelOptions, max_tokens: Optional[int] = None) -> HFScoringBackend:
        return cls(HFModel.load(options), max_tokens)

    def _pad_id(self) -> int:
        tok = self.hf.tokenizer
        for value in (tok.pad_token_id, getattr(self.hf.model.config, "pad_token_id", None), tok.eos_token_id, 0):
            if value is not None:
                return int(value)
        return 0

    # ------------------------------------------------------------------ corpus
    def load(
        self,
        sources: Sequence[str],
        references: Sequence[str],
        doc_starts: np.ndarray,
        context_of: Optional[np.ndarray] = None,
        names: Tuple[str, str] = ("source", "reference"),
    ) -> List[List[str]]:
        at = np.arange(len(sources)) if context_of is None else np.asarray(context_of)
        starts = np.asarray(doc_starts)
        self._with, self._without = [], []
        for i, (source, reference) in enumerate(zip(sources, references, strict=True)):
            a = int(at[i])
            first = int(starts[a])
            k = max(self.source_context_size, self.target_context_size)
            where = lambda i=i: f"{names[0]}:{i + 1}"  # noqa: E731
            self._without.append(self.layout.row(source, reference, (), (), 0, 0, where))
            self._with.append(
                self.layout.row(
                    source,
                    reference,
                    last_sentences(sources[first:a], k),
                    last_sentences(references[first:a], k),
                    self.source_context_size,
                    self.target_context_size,
                    where,
                )
            )
        self._warn_unknown(self._with, lambda i: f"{names[0]}:{i + 1}")
        return [self._record_pieces(r) for r in self._without]

    def _record_pieces(self, r: Row) -> List[str]:
        return list(r.pieces)

    def context_sentences(self) -> Tuple[np.ndarray, np.ndarray]:
        return (
            np.array([r.context[0] for r in self._with], dtype=np.int64),
            np.array([r.context[1] for r in self._with], dtype=np.int64),
        )

    def length(self, index: int) -> int:
        return self._with[index].length

    def token_log_probs(self, indices: Sequence[int], context: bool) -> Dict[int, np.ndarray]:
        rows = self._with if context else self._without
        scores = self.score_rows([rows[i] for i in indices])
        return {int(i): self._merge_end(rows[i], s) for i, s in zip(indices, scores, strict=True)}

    def token_log_probs_both(
        self, indices: Sequence[int], with_context: Sequence[int]
    ) -> Tuple[Dict[int, np.ndarray], Dict[int, np.ndarray]]:
        """Both passes in shared batches: (without context for ``indices``, with context for
        ``with_context``)."""
        rows = [self._without[i] for i in indices] + [self._with[i] for i in with_context]
        scores = self.score_rows(rows)
        n = len(indices)
        without = {int(i): self._merge_end(self._without[i], s) for i, s in zip(indices, scores[:n], strict=True)}
        within = {int(i): self._merge_end(self._with[i], s) for i, s in zip(with_context, scores[n:], strict=True)}
        return without, within

    def _merge_end(self, r: Row, scores: np.ndarray) -> np.ndarray:
        """The tokens that end the target (EOS, with a language code or a template's end string)
        become one final value, as the fairseq records have one '</s>'."""
        n = len(r.pieces)
        return np.append(scores[:n], scores[n:].sum())

    # ------------------------------------------------------------------ free-standing pairs
    def load_pairs(self, pairs: Sequence[ContextPair], where: Callable[[int], str]) -> None:
        self._pairs = [
            self.layout.row(
                p.source,
                p.target,
                p.source_context,
                p.target_context,
                self.source_context_size,
                self.target_context_size,
                functools.partial(where, i),
            )
            for i, p in enumerate(pairs)
        ]
        self._warn_unknown(self._pairs, where)

    def pair_length(self, index: int) -> int:
        return self._pairs[index].length

    def pair_source_key(self, index: int) -> Hashable:
        r = self._pairs[index]
        return r.encoder if r.encoder is not None else r.prefix

    def pair_identity(self, index: int) -> Hashable:
        r = self._pairs[index]
        return (r.encoder, r.prefix, r.target)

    def pair_log_probs(self, indices: Sequence[int]) -> Dict[int, np.ndarray]:
        return {int(i): s for i, s in zip(indices, self.score_rows([self._pairs[i] for i in indices]), strict=True)}

    def _warn_unknown(self, rows: Sequence[Row], where: Callable[[int], str]) -> None:
        tok = self.hf.tokenizer
        unk = tok.unk_token_id
        if unk is None or unk in (tok.eos_token_id, tok.bos_token_id, tok.pad_token_id):
            return  # byte-level BPE (GPT-2) has no unknown token: its 'unk' is its end token
        bad = [i for i, r in enumerate(rows) if unk in r.target or unk in r.prefix or (r.encoder and unk in r.encoder)]
        if bad:
            logger.warning(
                "%d of %d sentences contain text the tokenizer maps to its unknown token, first: %s",
                len(bad),
                len(rows),
                where(bad[0]),
            )

    # ------------------------------------------------------------------ the computation
    def score_rows(self, rows: Sequence[Row]) -> List[np.ndarray]:
        """log p of every target token of each row (natural log), in batches of at most
        ``max_tokens`` padded positions, sorted by length."""
        out: List[Optional[np.ndarray]] = [None] * len(rows)
        for batch in length_batches(
            range(len(rows)),
            lambda k: rows[k].length,
            max(1, len(rows)),
            self.max_tokens,
            key=lambda k: rows[k].encoder or (),
        ):
            for b, scores in zip(batch, self._forward([rows[b] for b in batch]), strict=True):
                out[b] = scores
        return filled(out)

    @torch.no_grad()
    def _forward(self, rows: Sequence[Row], fast: Optional[bool] = None) -> List[np.ndarray]:
        inputs, row_index, pos_index, labels, lengths = self._inputs(rows)
        logits = self._logits_at(inputs, row_index, pos_index, fast)
        # log p = logit - logsumexp (float32): no second vocabulary-sized tensor
        log_probs = logits.gather(-1, labels.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)
        flat = log_probs.cpu().double().numpy()
        return list(np.split(flat, np.cumsum(lengths)[:-1]))

    def _inputs(self, rows: Sequence[Row], share_encoder: bool = True):
        """The model inputs of a batch of rows (decoder input: prefix + target[:-1]), and where
        each target token is predicted: (inputs, row index, position, label, targets per row).
        ``share_encoder``: encode each distinct encoder input once (not for gradients, where
        each row needs its own encoder embeddings)."""
        decoder = [r.prefix + r.target[:-1] for r in rows]
        # position p predicts token p + 1: the target's tokens from the last prefix position on
        lengths = [len(r.target) for r in rows]
        row_at = np.repeat(np.arange(len(rows)), lengths)
        pos_at = np.concatenate(
            [np.arange(len(r.prefix) - 1, len(r.prefix) - 1 + n) for r, n in zip(rows, lengths, strict=True)]
        )
        label_ids = np.fromiter((tok for r in rows for tok in r.target), dtype=np.int64, count=int(sum(lengths)))
        host = [row_at, pos_at, label_ids, *self._pad(decoder)]
        if self.hf.seq2seq and share_encoder:
            unique: Dict[Tuple[int, ...], int] = {}
            owner = [unique.setdefault(r.encoder_ids, len(unique)) for r in rows]
            host += [*self._pad(list(unique)), np.asarray(owner)]
        elif self.hf.seq2seq:
            host += list(self._pad([r.encoder_ids for r in rows]))
        # one copy to the device, before the first kernel: a copy from pageable host memory waits
        # for the GPU's queue, so one made after the encoder (as before) stalled it mid-batch
        flat = torch.from_numpy(np.concatenate([a.ravel() for a in host])).to(self.hf.device)
        parts = torch.split(flat, [a.size for a in host])
        row_index, pos_index, labels, ids, mask, *encoder = [t.view(a.shape) for t, a in zip(parts, host, strict=True)]
        model = self.hf.model
        if self.hf.seq2seq and share_encoder:
            enc_ids, enc_mask, expand = encoder
            with self.hf.attention():
                encoded = model.get_encoder()(input_ids=enc_ids, attention_mask=enc_mask).last_hidden_state
            from transformers.modeling_outputs import BaseModelOutput

            inputs = {
                # a model output, not a tuple: some models (ProphetNet) read it by name only
                "encoder_outputs": BaseModelOutput(last_hidden_state=encoded.index_select(0, expand)),
                "attention_mask": enc_mask.index_select(0, expand),
                "decoder_input_ids": ids,
            }
        elif self.hf.seq2seq:
            enc_ids, enc_mask = encoder
            inputs = {"input_ids": enc_ids, "attention_mask": enc_mask, "decoder_input_ids": ids}
        else:
            inputs = {"input_ids": ids, "attention_mask": mask}
        return inputs, row_index, pos_index, labels, lengths

    def _logits_at(
        self, inputs: Dict, row_index: torch.Tensor, pos_index: torch.Tensor, fast: Optional[bool] = None
    ) -> torch.Tensor:
        """float32 logits at the given (row, position) pairs only."""
        fast = self.fast_head if fast is None else fast
        model = self.hf.model
        with self.hf.attention():
            if fast:
                hidden = model.base_model(**inputs, use_cache=False).last_hidden_state
                logits = self._head(hidden[row_index, pos_index])
            else:
                logits = model(**inputs, use_cache=False).logits[row_index, pos_index]
        # the padded head's extra columns are cut here; in half precision .float() is the one
        # conversion, of the scored positions only
        return logits[..., : self._vocabulary(logits)].float()

    def _pad(self, sequences: Sequence[Sequence[int]]) -> Tuple[np.ndarray, np.ndarray]:
        n = max(len(s) for s in sequences)
        ids = np.full((len(sequences), n), self.pad, dtype=np.int64)
        mask = np.zeros((len(sequences), n), dtype=np.int64)
        for b, s in enumerate(sequences):
            ids[b, : len(s)] = s
            mask[b, : len(s)] = 1
        return ids, mask

    def _vocabulary(self, logits: torch.Tensor) -> int:
        return self._fused[2] if self._fused is not None else logits.shape[-1]

    def _head(self, hidden: torch.Tensor, fused: bool = True) -> torch.Tensor:
        """The output layer (+ final_logits_bias) on ``hidden``. ``fused``: the bias added inside
        the matmul (one rounding), with the rows padded in half precision (see ``_fused_head``);
        otherwise in the model's own order (output layer, then + bias)."""
        model = self.hf.model
        layer = model.get_output_embeddings()
        extra = getattr(model, "final_logits_bias", None)  # Marian, mBART, BART
        if fused and isinstance(layer, torch.nn.Linear):
            weight, bias, _ = self._fused_head(layer, extra)
            return torch.nn.functional.linear(hidden.to(weight.dtype), weight, bias)
        logits = layer(hidden)
        return logits + extra.to(logits.dtype) if extra is not None else logits

    @torch.no_grad()
    def _fused_head(self, layer: torch.nn.Linear, extra: Optional[torch.Tensor]):
        """(weight, bias, vocabulary size) of the fused output layer, built once. The biases are
        summed in float32 and rounded once. In half precision the weight's rows are padded with
        zeros to a multiple of 64: the logits then have aligned rows for the half precision
        tensor-core matmul, which on GPUs is much slower for an odd output width such as
        opus-mt's 58,101. The padded tensor becomes the weight's storage (the model's weight is
        its first rows, the same values), so the weight is not held twice."""
        if self._fused is None:
            weight, vocab = layer.weight, layer.weight.shape[0]
            bias = None
            if extra is not None or layer.bias is not None:
                bias = torch.zeros(vocab, dtype=torch.float32, device=weight.device)
                for b in (extra, layer.bias):
                    if b is not None:
                        bias += b.reshape(-1).float()
                bias = bias.to(weight.dtype)
            padded = -vocab % self.HEAD_ROWS_MULTIPLE if weight.dtype in HALF else 0
            if padded and weight.device.type != "meta":  # (meta: weights offloaded by device_map)
                storage = weight.new_zeros(vocab + padded, weight.shape[1])
                storage[:vocab] = weight
                layer.weight.data = storage[:vocab]  # tied input embeddings share the parameter
                weight = storage
                bias = torch.cat([bias, bias.new_zeros(padded)]) if bias is not None else None
            self._fused = (weight, bias, vocab)
        return self._fused

    def _check_padding(self, row: Row, text: str, alone: np.ndarray) -> None:
        """Scoring batches rows padded on the right: a target position must not see the positions
        after it (a causal decoder). Checked on the short test sentence, alone and in a batch
        with a longer one; a model whose scores move with the padding (ProphetNet's n-gram
        decoder) is refused, its batched scores being not the model's."""
        longer = None
        for repeats in (6, 2):  # a model of few positions gets the longest row it can read
            try:
                longer = self.layout.row(
                    text,
                    " ".join([text] * repeats),
                    (text,),
                    (text,),
                    self.source_context_size,
                    self.target_context_size,
                    lambda: "check",
                )
                break
            except OverPositionsError:
                continue
        if longer is None:  # no row longer than the test sentence fits: nothing is padded more
            return
        batched = self._forward([row, longer], fast=False)[0]
        moved = float(np.abs(batched - alone).max())
        # the zoo's batch invariance, 1e-5 (causal decoders move by 0 here, ProphetNet's n-gram
        # decoder by 1.5e-4 on the zoo's tiny one)
        if moved > 1e-5:
            raise InputError(
                f"{self.hf.folder}: {type(self.hf.model).__name__}'s scores change when its rows are padded "
                f"to batch them (by up to {moved:.2g}; its target positions see the padding after them), "
                "so the scores of a batch would not be the model's: not supported",
                code=Code.MODEL,
            )

    def _check_fast_head(self) -> bool:
        """Applying the output layer at the scored positions only is exact for models whose
        logits are output_embeddings(base_model(...)) (+ final_logits_bias); checked here on a
        short input against the model's own forward. Others take the full forward.

        float32: the two paths' log p must agree to 1e-4 (the scores are those of the model).
        bfloat16 / float16: the model's logits are rounded twice (output layer, then + bias),
        ours once, so the two can only agree to within the dtype's rounding of each logit,
        which grows with the logit (bfloat16 spacing is 0.125 at 30, a size trained models
        reach): the former fixed tolerance on log p (5e-2) failed such models by rounding alone
        and sent them through the full forward, full-vocabulary logits at every position. The
        three roundings (eps/2 each, relative to |logit| or |logit - bias|) sum to at most
        1.5 eps (|logit| + |bias|); each logit must agree to within 2 eps (|logit| + |bias|)
        + eps rms(logits), the last term for the matmuls' accumulation order near 0. A
        different output computation (a scale, a soft cap, a missing bias) misses it by far."""
        text = "Context, checked once."
        try:
            row = self.layout.row(
                text, text, (text,), (text,), self.source_context_size, self.target_context_size, lambda: "check"
            )
        except InputError as e:
            raise InputError(f"{self.hf.folder}: cannot lay out a short test sentence ({e})", code=e.code) from None
        model = self.hf.model
        try:
            full = self._forward([row], fast=False)[0]
        except Exception as e:  # tokenizer and model disagree (token ids beyond the embeddings, ...)
            raise InputError(
                f"{self.hf.folder}: the model fails on a short test sentence "
                f"({type(e).__name__}: {e}); are the tokenizer and the weights of one model?",
                code=Code.MODEL,
            ) from None
        if next(model.parameters()).dtype == torch.float32:  # half precision: its rounding hides it
            self._check_padding(row, text, full)
        try:
            if model.base_model is model or model.get_output_embeddings() is None:
                return False
            fast = self._forward([row], fast=True)[0]
            half = next(model.parameters()).dtype in HALF
            if half:
                with torch.no_grad():
                    inputs, row_index, pos_index, _, _ = self._inputs([row])
                    ours = self._logits_at(inputs, row_index, pos_index, fast=True)
                    theirs = self._logits_at(inputs, row_index, pos_index, fast=False)
        except Exception as e:  # a model whose base model takes other inputs
            logger.info("scoring through the full forward (%s: %s)", type(e).__name__, e)
            self._fused = None
            return False
        self.head_check = {"max_log_prob_difference": float(np.abs(fast - full).max())}
        if not half:
            same = bool(np.allclose(fast, full, atol=1e-4, rtol=0))
            what = f"its log p by up to {self.head_check['max_log_prob_difference']:.3g}"
        else:
            eps = torch.finfo(next(model.parameters()).dtype).eps
            extra = getattr(model, "final_logits_bias", None)
            bias = extra.reshape(-1).float().abs()[: theirs.shape[-1]] if extra is not None else 0
            allowed = 2 * eps * (theirs.abs() + bias) + eps * theirs.pow(2).mean(-1, keepdim=True).sqrt()
            excess = float(((ours - theirs).abs() / allowed).max())
            self.head_check.update(max_logit_difference=float((ours - theirs).abs().max()), logit_excess=excess)
            same = excess <= 1
            what = (
                f"its logits by up to {self.head_check['max_logit_difference']:.3g}, {excess:.3g} times the "
                f"{torch.finfo(next(model.parameters()).dtype)} rounding allowed"
            )
        if not same:
            logger.info(
                "scoring through the full forward (the output layer alone differs from the model's by %s)", what
            )
            self._fused = None
        return same
