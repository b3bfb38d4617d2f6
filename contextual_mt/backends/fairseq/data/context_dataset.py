"""Sentence pairs with their document context, for concatenation and multi-encoder models.

Example ``i`` uses up to ``N`` previous source and ``M`` previous target sentences of its
own document (never across a document boundary). Concatenation layout, with ``<brk>``
closing each context sentence:

    source:  x[i-2] <brk> x[i-1] <brk> x[i] </s>
    decoder: </s> y[i-2] <brk> y[i-1] <brk> y[i]          (prev_output_tokens)
    target:  pad ... pad ... pad ... pad   y[i] </s>      (loss on the current sentence only)

With ``sample_context_size`` the sizes are drawn uniformly from 0..N and 0..M, per example
and per epoch, from ``seed``; lengths for batching and filtering are those of the sampled
context. CoWord dropout masks tokens of the current source sentence only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np
import torch
from fairseq.data import FairseqDataset, data_utils

from commandkit.errors import check_number
from contextual_mt.backends.fairseq.data.model_input import build_decoder_input, build_encoder_input, model_sources
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.context_trim import nearest_fitting_sizes
from contextual_mt.symbols import BRK, MASK

COWORD_TYPES = ("token", "whole")


_GOLDEN, _MIX1, _MIX2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S11, _S27, _S30, _S31 = (np.uint64(n) for n in (11, 27, 30, 31))


def hashed_uniforms(key: int, positions: np.ndarray) -> np.ndarray:
    """Uniforms in [0, 1) that depend only on (``key``, position), by splitmix64's finaliser: an
    example's CoWord masks are the same whichever data worker or batch builds it, without a
    random generator per example (seeding one cost more than the rest of ``__getitem__``).
    (uint64 arrays wrap around on overflow without a warning, which the hash relies on.)"""
    x = np.asarray(positions, dtype=np.uint64).reshape(-1) * _GOLDEN + np.uint64(key)
    x ^= x >> _S30
    x *= _MIX1
    x ^= x >> _S27
    x *= _MIX2
    x ^= x >> _S31
    return (x >> _S11).astype(np.float64) * (1.0 / 2**53)


@dataclass
class ContextOptions:
    """How examples take their context; validated when built (the task builds one from its
    config, so a bad value fails before any data is read)."""

    source_context_size: int = 0
    target_context_size: int = 0
    sample_context_size: bool = False  # draw sizes uniformly from 0..N / 0..M per example and epoch
    coword_dropout: float = 0.0
    coword_dropout_type: str = "token"
    seed: int = 1
    shuffle: bool = True
    left_pad_source: bool = True
    max_source_positions: int = 1024
    max_target_positions: int = 1024
    multi_encoder: bool = False

    def __post_init__(self) -> None:
        check_number("--source-context-size", self.source_context_size, minimum=0, integer=True)
        check_number("--target-context-size", self.target_context_size, minimum=0, integer=True)
        check_number("--coword-dropout", self.coword_dropout, minimum=0, maximum=1)
        if self.coword_dropout_type not in COWORD_TYPES:
            raise InputError(
                f"--coword-dropout-type must be one of {', '.join(COWORD_TYPES)} (got {self.coword_dropout_type!r})",
                code=Code.OPTION_VALUE,
            )


class ContextDataset(FairseqDataset):
    def __init__(
        self,
        src: FairseqDataset,
        src_sizes: np.ndarray,
        src_dict,
        tgt: Optional[FairseqDataset],
        tgt_sizes: Optional[np.ndarray],
        tgt_dict,
        doc_starts: np.ndarray,
        options: Optional[ContextOptions] = None,
        context_of: Optional[np.ndarray] = None,
    ):
        o = options or ContextOptions()
        self.src, self.tgt = src, tgt
        self.src_dict, self.tgt_dict = src_dict, tgt_dict
        self.base_src_sizes = np.asarray(src_sizes, dtype=np.int64)
        self.base_tgt_sizes = (
            np.asarray(tgt_sizes, dtype=np.int64) if tgt_sizes is not None else np.zeros_like(self.base_src_sizes)
        )
        self.doc_starts = np.asarray(doc_starts, dtype=np.int64)
        self.position = np.arange(len(self.doc_starts)) - self.doc_starts
        # Example i takes its context from the sentences before context_of[i] (default: i).
        # A control experiment points it into another document (random context).
        self.context_of = (
            np.arange(len(self.doc_starts)) if context_of is None else np.asarray(context_of, dtype=np.int64)
        )
        self.source_context_size = o.source_context_size
        self.target_context_size = o.target_context_size
        self.sample_context_size = o.sample_context_size
        self.coword_dropout = o.coword_dropout
        self.coword_dropout_type = o.coword_dropout_type
        self.seed = o.seed
        self.shuffle = o.shuffle
        self.left_pad_source = o.left_pad_source
        self.max_source_positions = o.max_source_positions
        self.max_target_positions = o.max_target_positions
        self.brk = src_dict.index(BRK)
        self.tgt_brk = tgt_dict.index(BRK)
        self.mask = src_dict.index(MASK)
        self._multi_encoder = o.multi_encoder
        # Symbols CoWord dropout must never touch.
        protected = set(range(src_dict.nspecial)) | {self.brk, self.mask}
        protected |= {src_dict.bos(), src_dict.eos(), src_dict.pad(), src_dict.unk()}
        self._protected = np.zeros(max(len(src_dict), max(protected) + 1), dtype=bool)
        self._protected[sorted(protected)] = True
        self._src_cumsum = np.concatenate([[0], np.cumsum(self.base_src_sizes)])
        self._tgt_cumsum = np.concatenate([[0], np.cumsum(self.base_tgt_sizes)])
        self.epoch = 1
        self.set_epoch(1)

    # ---------------------------------------------------------------- context sizes
    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        # CoWord dropout's streams of this epoch: tokens (by position in the corpus), sentences
        self._token_key, self._sentence_key = (
            int(k) for k in np.random.SeedSequence([self.seed, epoch, 20210602]).generate_state(2, np.uint64)
        )
        self.src_k, self.tgt_k = self.context_sizes(epoch)
        at = self.context_of
        self.src_ctx_len = self._src_cumsum[at] - self._src_cumsum[at - self.src_k]
        self.tgt_ctx_len = self._tgt_cumsum[at] - self._tgt_cumsum[at - self.tgt_k]
        # Batching counts every token the model processes, context included.
        self.src_sizes = self.base_src_sizes + self.src_ctx_len
        self.tgt_sizes = self.base_tgt_sizes + self.tgt_ctx_len

    def context_sizes(self, epoch: int):
        """Per-example (source, target) context sizes for ``epoch``."""
        n = len(self)
        if self.sample_context_size:
            rng = np.random.default_rng([self.seed, epoch, 20210601])
            src_k = rng.integers(0, self.source_context_size + 1, size=n)
            tgt_k = rng.integers(0, self.target_context_size + 1, size=n)
        else:
            src_k = np.full(n, self.source_context_size, dtype=np.int64)
            tgt_k = np.full(n, self.target_context_size, dtype=np.int64)
        src_k = np.minimum(src_k, self.position[self.context_of])
        tgt_k = np.minimum(tgt_k, self.position[self.context_of])
        # Drop the furthest context sentences that do not fit the model's positions, so that
        # a long context never removes the example itself.
        src_k = self._fit(src_k, self._src_cumsum, self.max_source_positions)
        tgt_k = self._fit(tgt_k, self._tgt_cumsum, self.max_target_positions)
        return src_k.astype(np.int64), tgt_k.astype(np.int64)

    def _fit(self, k: np.ndarray, cumsum: np.ndarray, limit: int) -> np.ndarray:
        idx = np.arange(len(k))
        own = cumsum[idx + 1] - cumsum[idx]
        at = self.context_of
        return nearest_fitting_sizes(k, lambda k: own + cumsum[at] - cumsum[at - k], limit)

    @property
    def multi_encoder(self) -> bool:
        return self._multi_encoder

    @multi_encoder.setter
    def multi_encoder(self, value: bool) -> None:
        # The task learns the model type only after loading datasets.
        self._multi_encoder = bool(value)

    @property
    def can_reuse_epoch_itr_across_epochs(self) -> bool:
        # Sampled sizes change every epoch, so batches must be rebuilt.
        return not self.sample_context_size

    # ---------------------------------------------------------------- items
    def __len__(self) -> int:
        return len(self.doc_starts)

    def coword_uniforms(self, index: int, length: int) -> np.ndarray:
        """The uniforms CoWord dropout compares with p for example ``index`` (``length`` tokens):
        one per token, or one for the sentence (``whole``); a function of (seed, epoch, index)."""
        if self.coword_dropout_type == "whole":
            return np.full(length, hashed_uniforms(self._sentence_key, np.array([index]))[0])
        start = int(self._src_cumsum[index])
        return hashed_uniforms(self._token_key, np.arange(start, start + length))

    def apply_coword_dropout(self, tokens: torch.Tensor, uniforms: np.ndarray) -> torch.Tensor:
        """Replace non-special tokens of the current source by <mask> where ``uniforms`` < p."""
        if self.coword_dropout <= 0:
            return tokens
        values = tokens.numpy()
        drop = (uniforms < self.coword_dropout) & ~self._protected[values]
        if not drop.any():
            return tokens
        tokens = tokens.clone()
        tokens[torch.from_numpy(drop)] = self.mask
        return tokens

    def _context(self, dataset, index: int, k: int, eos: int, brk: int) -> torch.Tensor:
        if k == 0:
            return torch.empty(0, dtype=torch.long)
        at = int(self.context_of[index])
        parts: List[np.ndarray] = []
        for j in range(at - k, at):
            sentence = dataset[j].numpy()
            parts.append(sentence[:-1] if len(sentence) and sentence[-1] == eos else sentence)
            parts.append(np.array([brk], dtype=sentence.dtype))
        return torch.from_numpy(np.concatenate(parts).astype(np.int64))

    def __getitem__(self, index: int) -> Dict:
        src_eos, tgt_eos = self.src_dict.eos(), self.tgt_dict.eos()
        source = self.src[index].long()
        if self.coword_dropout > 0:
            source = self.apply_coword_dropout(source, self.coword_uniforms(index, len(source)))
        item = {
            "id": index,
            "source": source,
            "src_context": self._context(self.src, index, int(self.src_k[index]), src_eos, self.brk),
            "target": None,
            "tgt_context": torch.empty(0, dtype=torch.long),
        }
        if self.tgt is not None:
            item["target"] = self.tgt[index].long()
            item["tgt_context"] = self._context(self.tgt, index, int(self.tgt_k[index]), tgt_eos, self.tgt_brk)
        return item

    # ---------------------------------------------------------------- batching
    def collater(self, samples: List[Dict]) -> Dict:
        if len(samples) == 0:
            return {}
        pad, eos = self.src_dict.pad(), self.src_dict.eos()
        ids: torch.Tensor = torch.LongTensor([s["id"] for s in samples])
        # Sort by source length, as fairseq's LanguagePairDataset does (packed encoders).
        read = model_sources([s["source"] for s in samples], [s["src_context"] for s in samples], self.multi_encoder)
        src_lengths, order = torch.LongTensor([len(s) for s in read]).sort(descending=True)
        samples = [samples[i] for i in order.tolist()]
        ids = ids[order]
        net_input: Dict[str, Optional[torch.Tensor]] = {}  # the encoder's, then prev_output_tokens
        net_input.update(
            build_encoder_input(
                [s["source"] for s in samples],
                [s["src_context"] for s in samples],
                [s["tgt_context"] for s in samples],
                pad,
                eos,
                self.multi_encoder,
                self.left_pad_source,
            )
        )
        batch = {"id": ids, "nsentences": len(samples), "net_input": net_input}
        if samples[0]["target"] is None:
            batch["ntokens"] = int(src_lengths.sum())
            return batch

        decoder = build_decoder_input(
            [s["target"] for s in samples], [s["tgt_context"] for s in samples], pad, eos, self.multi_encoder
        )
        net_input["prev_output_tokens"] = decoder["prev_output_tokens"]
        batch["target"] = decoder["target"]
        batch["ntokens"] = sum(len(s["target"]) for s in samples)
        batch["target_lengths"] = torch.LongTensor([len(s["target"]) for s in samples])
        batch["prefix_lengths"] = decoder["prefix_lengths"]
        batch["tgt_prefix"] = decoder["tgt_prefix"]
        return batch

    def num_tokens(self, index: int) -> int:
        return int(max(self.src_sizes[index], self.tgt_sizes[index]))

    def num_tokens_vec(self, indices: np.ndarray) -> np.ndarray:
        return np.maximum(self.src_sizes[indices], self.tgt_sizes[indices])

    def size(self, index: int):
        return (int(self.src_sizes[index]), int(self.tgt_sizes[index]))

    @property
    def sizes(self) -> np.ndarray:
        return np.vstack((self.src_sizes, self.tgt_sizes)).T

    def ordered_indices(self) -> np.ndarray:
        if self.shuffle:
            indices = np.random.permutation(len(self)).astype(np.int64)
        else:
            indices = np.arange(len(self), dtype=np.int64)
        indices = indices[np.argsort(self.tgt_sizes[indices], kind="mergesort")]
        return indices[np.argsort(self.src_sizes[indices], kind="mergesort")]

    def filter_indices_by_size(self, indices: np.ndarray, max_sizes):
        # Actual lengths with the sampled context; context was already trimmed to the
        # positions limit, so only a sentence too long by itself is dropped. A multi-encoder
        # model reads its context separately, so only the sentence counts there.
        src = self.base_src_sizes if self.multi_encoder else self.src_sizes
        tgt = self.base_tgt_sizes if self.multi_encoder else self.tgt_sizes
        return data_utils.filter_paired_dataset_indices_by_size(
            src, tgt if self.tgt is not None else None, indices, max_sizes
        )

    @property
    def supports_prefetch(self) -> bool:
        return False  # items read their neighbours, which prefetch(indices) would miss
