"""The scoring backend: token log-probabilities of reference targets given their source, with
and without document context, for batches of sentences. CXMI / P-CXMI and contrastive scoring
are written against the ``ScoringBackend`` protocol; ``FairseqScoringBackend`` implements it for
``document_translation`` checkpoints (a Hugging Face backend can implement it too).

Two ways in: a corpus of documents (``load``: each sentence's context is the sentences before
it), or free-standing pairs that carry their own context (``load_pairs``: contrastive sets,
where every candidate translation has its own target context).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Hashable, List, Optional, Protocol, Sequence, Tuple, runtime_checkable

import logging

import numpy as np
import torch

from contextual_mt.data.context_dataset import ContextDataset, ContextOptions
from contextual_mt.data.model_input import build_decoder_input, build_encoder_input
from contextual_mt.errors import ContextualMTError
from contextual_mt.inference.checkpoint import DocumentModel
from contextual_mt.symbols import BRK

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ContextPair:
    """A source sentence and a target to score, each with the sentences before it (oldest
    first). The backend uses at most its context sizes of them, the nearest ones."""

    source: str
    target: str
    source_context: Tuple[str, ...] = ()
    target_context: Tuple[str, ...] = ()


@runtime_checkable
class ScoringBackend(Protocol):
    """What an analysis needs from a model.

    ``load`` fixes a corpus: sentences, references, where each document starts, and optionally,
    for each sentence, the position whose preceding sentences serve as its context (a control
    that takes context from another document). Then ``token_log_probs`` scores any subset of it.
    """

    source_context_size: int  # the context the model reads, in sentences (0: none)
    target_context_size: int
    trained_context: Optional[Dict]  # sample_context_size / source / target sizes as trained, if known

    def load(self, sources: Sequence[str], references: Sequence[str], doc_starts: np.ndarray,
             context_of: Optional[np.ndarray] = None,
             names: Tuple[str, str] = ("source", "reference")) -> List[List[str]]:
        """Encode a corpus (later calls refer to its sentences by index); return the subword
        pieces of each reference, without EOS. A sentence the model cannot read whole is an
        error naming its line in ``names`` (the files of sources and references)."""

    def context_sentences(self) -> Tuple[np.ndarray, np.ndarray]:
        """Per sentence, how many (source, target) context sentences it is scored with."""

    def length(self, index: int) -> int:
        """Tokens of the sentence with its context, to batch similar lengths together."""

    def token_log_probs(self, indices: Sequence[int], context: bool) -> Dict[int, np.ndarray]:
        """log p(y_t | y_<t, x[, C]) for every reference token of each sentence, EOS included."""

    def load_pairs(self, pairs: Sequence[ContextPair], where: Callable[[int], str]) -> None:
        """Encode free-standing pairs (later calls refer to them by index). A pair the model
        cannot read whole is an error naming ``where(index)`` (its file and entry)."""

    def pair_length(self, index: int) -> int:
        """Tokens of the pair with its context, to batch similar lengths together."""

    def pair_source_key(self, index: int) -> Hashable:
        """Pairs with equal keys share their encoder input: sorting by it lets a batch encode
        each distinct source once."""

    def pair_identity(self, index: int) -> Hashable:
        """Everything the model reads of the pair: equal identities score alike (two candidates
        that differ only in characters the model cannot represent)."""

    def pair_log_probs(self, indices: Sequence[int]) -> Dict[int, np.ndarray]:
        """log p(y_t | y_<t, x, C) for every target token of each pair, EOS included, with the
        pair's own context (up to the backend's context sizes)."""


class FairseqScoringBackend:
    """A ``document_translation`` checkpoint as a scoring backend (one model, teacher forcing)."""

    def __init__(self, model: DocumentModel):
        self.model = model
        self.source_context_size = model.source_context_size
        self.target_context_size = model.target_context_size
        self.trained_context = model.trained_context
        self._with: Optional[ContextDataset] = None
        self._without: Optional[ContextDataset] = None
        self._pairs: List[Dict[str, torch.Tensor]] = []
        self._first: Optional[List[torch.Tensor]] = None  # CADec: base translations of the corpus

    def load(self, sources: Sequence[str], references: Sequence[str], doc_starts: np.ndarray,
             context_of: Optional[np.ndarray] = None,
             names: Tuple[str, str] = ("source", "reference")) -> List[List[str]]:
        m = self.model
        src_eos, tgt_eos = m.src_dict.eos(), m.tgt_dict.eos()
        src = [torch.tensor(m.src_codec.to_ids(m.src_codec.encode(s)) + [src_eos], dtype=torch.long)
               for s in sources]
        pieces = [m.tgt_codec.encode(r) for r in references]
        tgt = [torch.tensor(m.tgt_codec.to_ids(p) + [tgt_eos], dtype=torch.long) for p in pieces]
        sizes_s, sizes_t = np.array([len(s) for s in src]), np.array([len(t) for t in tgt])
        # context is trimmed to fit; the sentence itself cannot be
        m.check_fits(sizes_s.tolist(), names[0], "source")
        m.check_fits(sizes_t.tolist(), names[1], "target")

        def dataset(n_src: int, n_tgt: int, at: Optional[np.ndarray]) -> ContextDataset:
            options = ContextOptions(source_context_size=n_src, target_context_size=n_tgt, shuffle=False,
                                     max_source_positions=m.cfg.task.max_source_positions,
                                     max_target_positions=m.cfg.task.max_target_positions,
                                     multi_encoder=m.multi_encoder)
            return ContextDataset(src, sizes_s, m.src_dict, tgt, sizes_t, m.tgt_dict, doc_starts, options,
                                  context_of=at)

        self._with = dataset(self.source_context_size, self.target_context_size, context_of)
        self._without = dataset(0, 0, None)
        self._first = self._first_passes([s[:-1].tolist() for s in src]) if m.cadec else None
        return pieces

    def context_sentences(self) -> Tuple[np.ndarray, np.ndarray]:
        return self._with.src_k, self._with.tgt_k

    def length(self, index: int) -> int:
        return self._with.num_tokens(index)

    def _first_passes(self, sources: List[List[int]]) -> List[torch.Tensor]:
        """CADec's first pass, as its authors score test sets: the frozen base model's beam
        translation (beam 4, their setting) of each distinct source, with </s>."""
        from contextual_mt.inference.translate import DecodingOptions, DocumentTranslator

        distinct = {tuple(s): None for s in sources}
        keys = list(distinct)
        translated = DocumentTranslator(self.model, options=DecodingOptions(beam=4)).first_pass(
            [list(k) for k in keys], progress=False)
        eos = self.model.tgt_dict.eos()
        by_source = {k: torch.tensor(t + [eos], dtype=torch.long) for k, t in zip(keys, translated)}
        return [by_source[tuple(s)] for s in sources]

    def _collate_first(self, rows: List[torch.Tensor]) -> torch.Tensor:
        from fairseq.data import data_utils

        d = self.model.tgt_dict
        return data_utils.collate_tokens(rows, d.pad(), d.eos(), left_pad=False)

    @torch.no_grad()
    def token_log_probs(self, indices: Sequence[int], context: bool) -> Dict[int, np.ndarray]:
        from fairseq import utils

        from contextual_mt.generation.sequence_scorer import ContextSequenceScorer

        dataset = self._with if context else self._without
        batch = dataset.collater([dataset[i] for i in indices])
        if self._first is not None:  # CADec reads the base translation of each sentence
            batch["net_input"]["first_pass"] = self._collate_first([self._first[i] for i in batch["id"].tolist()])
        if self.model.device.type == "cuda":
            batch = utils.move_to_cuda(batch)
        tgt_dict = self.model.tgt_dict
        scores = ContextSequenceScorer(tgt_dict).token_log_probs(self.model.models, batch)
        keep = batch["target"].ne(tgt_dict.pad())
        return {int(i): scores[r][keep[r]].double().cpu().numpy() for r, i in enumerate(batch["id"].tolist())}

    # ------------------------------------------------------------------ free-standing pairs
    def load_pairs(self, pairs: Sequence[ContextPair], where: Callable[[int], str]) -> None:
        m = self.model
        src_ids = _memo(lambda text: m.src_codec.to_ids(m.src_codec.encode(text)))
        tgt_ids = _memo(lambda text: m.tgt_codec.to_ids(m.tgt_codec.encode(text)))
        src_brk, tgt_brk = m.src_dict.index(BRK), m.tgt_dict.index(BRK)
        max_src, max_tgt = m.max_source_positions, m.max_target_positions
        encoded, with_unk = [], []
        unk = (m.src_dict.unk(), m.tgt_dict.unk())
        for i, pair in enumerate(pairs):
            source = src_ids(pair.source) + [m.src_dict.eos()]
            target = tgt_ids(pair.target) + [m.tgt_dict.eos()]
            for side, tokens, limit in (("source", source, max_src), ("target", target, max_tgt)):
                if len(tokens) > limit:
                    raise ContextualMTError(f"{where(i)}: the {side} sentence has {len(tokens)} subword pieces "
                                            f"(with </s>), but the model takes at most {limit} {side} positions")
            # the nearest sentences that fit beside the sentence itself, as ContextDataset trims
            src_ctx = _context(pair.source_context, self.source_context_size, src_ids, src_brk, max_src - len(source))
            tgt_ctx = _context(pair.target_context, self.target_context_size, tgt_ids, tgt_brk, max_tgt - len(target))
            if unk[0] in source or unk[0] in src_ctx or unk[1] in target or unk[1] in tgt_ctx:
                with_unk.append(i)
            encoded.append({"source": torch.tensor(source), "target": torch.tensor(target),
                            "src_context": torch.tensor(src_ctx, dtype=torch.long),
                            "tgt_context": torch.tensor(tgt_ctx, dtype=torch.long)})
        if with_unk:
            logger.warning("%d of %d pairs contain pieces missing from the dictionary (mapped to <unk>), first: %s",
                           len(with_unk), len(pairs), where(with_unk[0]))
        if m.cadec:  # the base translation of each distinct source, shared by its candidates
            first = self._first_passes([p["source"][:-1].tolist() for p in encoded])
            for p, f in zip(encoded, first):
                p["first_pass"] = f
        self._pairs = encoded

    def pair_length(self, index: int) -> int:
        p = self._pairs[index]
        return max(len(p["source"]) + len(p["src_context"]), len(p["target"]) + len(p["tgt_context"]))

    def pair_source_key(self, index: int) -> Hashable:
        p = self._pairs[index]
        key = (tuple(p["src_context"].tolist()), tuple(p["source"].tolist()))
        # a multi-encoder model also encodes the target context
        return key + (tuple(p["tgt_context"].tolist()),) if self.model.multi_encoder else key

    def pair_identity(self, index: int) -> Hashable:
        p = self._pairs[index]
        return (tuple(p["src_context"].tolist()), tuple(p["source"].tolist()), tuple(p["tgt_context"].tolist()),
                tuple(p["target"].tolist()))

    @torch.no_grad()
    def pair_log_probs(self, indices: Sequence[int]) -> Dict[int, np.ndarray]:
        from contextual_mt.generation.sequence_scorer import ContextSequenceScorer

        m = self.model
        pad, eos = m.src_dict.pad(), m.src_dict.eos()
        rows = [self._pairs[i] for i in indices]
        # each distinct encoder input once; rows take theirs by index
        first: Dict[Hashable, int] = {}
        owner = [first.setdefault(self.pair_source_key(i), len(first)) for i in indices]
        unique = [rows[owner.index(u)] for u in range(len(first))]
        encoder_input = build_encoder_input([r["source"] for r in unique], [r["src_context"] for r in unique],
                                            [r["tgt_context"] for r in unique], pad, eos, m.multi_encoder)
        decoder_input = build_decoder_input([r["target"] for r in rows], [r["tgt_context"] for r in rows],
                                            m.tgt_dict.pad(), m.tgt_dict.eos(), m.multi_encoder)
        if m.cadec:
            encoder_input["first_pass"] = self._collate_first([r["first_pass"] for r in unique])
        expand = torch.tensor(owner, dtype=torch.long)
        if m.device.type == "cuda":
            from fairseq import utils

            encoder_input, decoder_input, expand = utils.move_to_cuda((encoder_input, decoder_input, expand))
        target = decoder_input["target"]
        scores = ContextSequenceScorer(m.tgt_dict).shared_encoder_log_probs(
            m.models, encoder_input, expand, decoder_input["prev_output_tokens"], target)
        keep = target.ne(m.tgt_dict.pad())
        return {int(i): scores[r][keep[r]].double().cpu().numpy() for r, i in enumerate(indices)}


def _memo(encode: Callable[[str], List[int]]) -> Callable[[str], List[int]]:
    """Contrastive candidates repeat their sources and contexts: encode each text once."""
    cache: Dict[str, List[int]] = {}

    def cached(text: str) -> List[int]:
        if text not in cache:
            cache[text] = encode(text)
        return cache[text]
    return cached


def _context(sentences: Sequence[str], size: int, ids: Callable[[str], List[int]], brk: int, room: int) -> List[int]:
    """``x[-k] <brk> ... x[-1] <brk>`` for the nearest k <= size sentences that fit in ``room``
    positions (the furthest are dropped first)."""
    kept: List[int] = []
    for text in reversed(list(sentences)[max(0, len(sentences) - size):] if size else []):
        piece = ids(text) + [brk]
        if len(kept) + len(piece) > room:
            break
        kept = piece + kept
    return kept
