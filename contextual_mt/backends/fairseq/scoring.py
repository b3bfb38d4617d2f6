"""A fairseq ``document_translation`` checkpoint as a ``CorpusScorer`` and a ``PairScorer`` (``inference.interface``):
token log-probabilities of reference targets given their source, with and without document
context, by teacher forcing; ``CADecScoringBackend`` for CADec checkpoints, which also read the
base model's translation of each sentence. ``scoring_backend`` picks the one for a loaded model.
"""

from __future__ import annotations

import logging
from typing import Callable, Dict, Hashable, List, Optional, Sequence, Tuple

import numpy as np
import torch

from contextual_mt.backends.fairseq.codec import unknown_warning
from contextual_mt.backends.fairseq.data.context_dataset import ContextDataset, ContextOptions
from contextual_mt.backends.fairseq.data.model_input import build_decoder_input, build_encoder_input
from contextual_mt.backends.fairseq.model import DocumentModel
from contextual_mt.backends.fairseq.translator import base_translations, collate_first_passes
from contextual_mt.errors import OverPositionsError
from contextual_mt.inference.context_trim import last_sentences, nearest_context
from contextual_mt.inference.interface import ContextPair
from contextual_mt.inference.precision import check_finite_scores
from contextual_mt.symbols import BRK

logger = logging.getLogger(__name__)


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

    def load(
        self,
        sources: Sequence[str],
        references: Sequence[str],
        doc_starts: np.ndarray,
        context_of: Optional[np.ndarray] = None,
        names: Tuple[str, str] = ("source", "reference"),
    ) -> List[List[str]]:
        m = self.model
        src_eos, tgt_eos = m.src_dict.eos(), m.tgt_dict.eos()
        src = [torch.tensor([*m.src_codec.to_ids(m.src_codec.encode(s)), src_eos], dtype=torch.long) for s in sources]
        pieces = [m.tgt_codec.encode(r) for r in references]
        tgt = [torch.tensor([*m.tgt_codec.to_ids(p), tgt_eos], dtype=torch.long) for p in pieces]
        sizes_s, sizes_t = np.array([len(s) for s in src]), np.array([len(t) for t in tgt])
        # context is trimmed to fit; the sentence itself cannot be
        m.check_fits(sizes_s.tolist(), names[0], "source")
        m.check_fits(sizes_t.tolist(), names[1], "target")

        def dataset(n_src: int, n_tgt: int, at: Optional[np.ndarray]) -> ContextDataset:
            options = ContextOptions(
                source_context_size=n_src,
                target_context_size=n_tgt,
                shuffle=False,
                max_source_positions=m.cfg.task.max_source_positions,
                max_target_positions=m.cfg.task.max_target_positions,
                multi_encoder=m.multi_encoder,
            )
            return ContextDataset(
                src, sizes_s, m.src_dict, tgt, sizes_t, m.tgt_dict, doc_starts, options, context_of=at
            )

        self._with = dataset(self.source_context_size, self.target_context_size, context_of)
        self._without = dataset(0, 0, None)
        self._corpus_loaded(src)
        return pieces

    # hooks of a model that reads more than its source and context (CADec)
    def _corpus_loaded(self, src: List[torch.Tensor]) -> None:
        """After ``load``: ``src`` are the corpus sources, with </s>."""

    def _corpus_inputs(self, net_input: Dict, ids: List[int]) -> None:
        """Extra encoder inputs of a batch of corpus sentences ``ids``."""

    def _pairs_loaded(self, encoded: List[Dict[str, torch.Tensor]]) -> None:
        """After ``load_pairs``: the encoded pairs, which may take more inputs."""

    def _pair_inputs(self, encoder_input: Dict, rows: List[Dict[str, torch.Tensor]]) -> None:
        """Extra encoder inputs of the distinct encoder rows of a batch of pairs."""

    def _dataset(self, context: bool = True) -> ContextDataset:
        """The loaded corpus, with context or without."""
        dataset = self._with if context else self._without
        if dataset is None:
            raise ValueError("no corpus loaded: call load() first")
        return dataset

    def context_sentences(self) -> Tuple[np.ndarray, np.ndarray]:
        return self._dataset().src_k, self._dataset().tgt_k

    def length(self, index: int) -> int:
        return self._dataset().num_tokens(index)

    def token_log_probs_both(
        self, indices: Sequence[int], with_context: Sequence[int]
    ) -> Tuple[Dict[int, np.ndarray], Dict[int, np.ndarray]]:
        """The two passes one after the other (each batch of a pass holds its own dataset's
        sentences)."""
        return (
            self.token_log_probs(indices, context=False),
            self.token_log_probs(with_context, context=True) if with_context else {},
        )

    @torch.no_grad()
    def token_log_probs(self, indices: Sequence[int], context: bool) -> Dict[int, np.ndarray]:
        from fairseq import utils

        from contextual_mt.backends.fairseq.generation.sequence_scorer import ContextSequenceScorer

        dataset = self._dataset(context)
        batch = dataset.collater([dataset[i] for i in indices])
        self._corpus_inputs(batch["net_input"], batch["id"].tolist())
        if self.model.device.type == "cuda":
            batch = utils.move_to_cuda(batch)
        tgt_dict = self.model.tgt_dict
        scores = ContextSequenceScorer(tgt_dict).token_log_probs(self.model.models, batch)
        keep = batch["target"].ne(tgt_dict.pad())
        check_finite_scores(scores[keep], self.model.dtype, self.model.path)
        return {int(i): scores[r][keep[r]].double().cpu().numpy() for r, i in enumerate(batch["id"].tolist())}

    # ------------------------------------------------------------------ free-standing pairs
    def load_pairs(self, pairs: Sequence[ContextPair], where: Callable[[int], str]) -> None:
        m = self.model
        src_ids = _memo(lambda text: m.src_codec.to_ids(m.src_codec.encode(text)))
        tgt_ids = _memo(lambda text: m.tgt_codec.to_ids(m.tgt_codec.encode(text)))
        src_brk, tgt_brk = m.src_dict.index(BRK), m.tgt_dict.index(BRK)
        max_src, max_tgt = m.max_source_positions, m.max_target_positions
        encoded, with_unk, unknown = [], [], []
        unk = (m.src_dict.unk(), m.tgt_dict.unk())
        for i, pair in enumerate(pairs):
            source = [*src_ids(pair.source), m.src_dict.eos()]
            target = [*tgt_ids(pair.target), m.tgt_dict.eos()]
            for side, tokens, limit in (("source", source, max_src), ("target", target, max_tgt)):
                if len(tokens) > limit:
                    raise OverPositionsError(
                        f"{where(i)}: the {side} sentence has {len(tokens)} subword pieces "
                        f"(with </s>), but the model takes at most {limit} {side} positions"
                    )
            # the nearest sentences that fit beside the sentence itself, as ContextDataset trims
            src_ctx = nearest_context(
                _last(pair.source_context, self.source_context_size, src_ids),
                self.source_context_size,
                src_brk,
                max_src - len(source),
            )
            tgt_ctx = nearest_context(
                _last(pair.target_context, self.target_context_size, tgt_ids),
                self.target_context_size,
                tgt_brk,
                max_tgt - len(target),
            )
            if unk[0] in source or unk[0] in src_ctx or unk[1] in target or unk[1] in tgt_ctx:
                with_unk.append(i)
                unknown += m.src_codec.unknown_pieces(m.src_codec.encode(pair.source))
                unknown += m.tgt_codec.unknown_pieces(m.tgt_codec.encode(pair.target))
            encoded.append(
                {
                    "source": torch.tensor(source),
                    "target": torch.tensor(target),
                    "src_context": torch.tensor(src_ctx, dtype=torch.long),
                    "tgt_context": torch.tensor(tgt_ctx, dtype=torch.long),
                }
            )
        if with_unk:
            logger.warning(
                "%s",
                unknown_warning(
                    m.tgt_codec, f"{len(with_unk)} of {len(pairs)} pairs", f"first: {where(with_unk[0])}", unknown
                ),
            )
        self._pairs_loaded(encoded)
        self._pairs = encoded

    def pair_length(self, index: int) -> int:
        p = self._pairs[index]
        return max(len(p["source"]) + len(p["src_context"]), len(p["target"]) + len(p["tgt_context"]))

    def pair_source_key(self, index: int) -> Hashable:
        p = self._pairs[index]
        key = (tuple(p["src_context"].tolist()), tuple(p["source"].tolist()))
        # a multi-encoder model also encodes the target context
        return (*key, tuple(p["tgt_context"].tolist())) if self.model.multi_encoder else key

    def pair_identity(self, index: int) -> Hashable:
        p = self._pairs[index]
        return (
            tuple(p["src_context"].tolist()),
            tuple(p["source"].tolist()),
            tuple(p["tgt_context"].tolist()),
            tuple(p["target"].tolist()),
        )

    @torch.no_grad()
    def pair_log_probs(self, indices: Sequence[int]) -> Dict[int, np.ndarray]:
        from contextual_mt.backends.fairseq.generation.sequence_scorer import ContextSequenceScorer

        m = self.model
        pad, eos = m.src_dict.pad(), m.src_dict.eos()
        rows = [self._pairs[i] for i in indices]
        # each distinct encoder input once; rows take theirs by index
        first: Dict[Hashable, int] = {}
        owner = [first.setdefault(self.pair_source_key(i), len(first)) for i in indices]
        unique = [rows[owner.index(u)] for u in range(len(first))]
        encoder_input = build_encoder_input(
            [r["source"] for r in unique],
            [r["src_context"] for r in unique],
            [r["tgt_context"] for r in unique],
            pad,
            eos,
            m.multi_encoder,
        )
        decoder_input = build_decoder_input(
            [r["target"] for r in rows],
            [r["tgt_context"] for r in rows],
            m.tgt_dict.pad(),
            m.tgt_dict.eos(),
            m.multi_encoder,
        )
        self._pair_inputs(encoder_input, unique)
        expand = torch.tensor(owner, dtype=torch.long)
        if m.device.type == "cuda":
            from fairseq import utils

            encoder_input, decoder_input, expand = utils.move_to_cuda((encoder_input, decoder_input, expand))
        target = decoder_input["target"]
        scores = ContextSequenceScorer(m.tgt_dict).shared_encoder_log_probs(
            m.models, encoder_input, expand, decoder_input["prev_output_tokens"], target
        )
        keep = target.ne(m.tgt_dict.pad())
        check_finite_scores(scores[keep], m.dtype, m.path)
        return {int(i): scores[r][keep[r]].double().cpu().numpy() for r, i in enumerate(indices)}


def _memo(encode: Callable[[str], List[int]]) -> Callable[[str], List[int]]:
    """Contrastive candidates repeat their sources and contexts: encode each text once."""
    cache: Dict[str, List[int]] = {}

    def cached(text: str) -> List[int]:
        if text not in cache:
            cache[text] = encode(text)
        return cache[text]

    return cached


def _last(sentences: Sequence[str], size: int, ids: Callable[[str], List[int]]) -> List[List[int]]:
    """The ids of the last ``size`` sentences (the only ones that can be read)."""
    return [ids(text) for text in last_sentences(sentences, size)]


class CADecScoringBackend(FairseqScoringBackend):
    """A CADec checkpoint: it also reads the frozen base model's translation of each sentence
    (``translator.base_translations``), computed once per distinct source."""

    def __init__(self, model: DocumentModel):
        super().__init__(model)
        self._first: List[torch.Tensor] = []  # base translations of the corpus, with </s>

    def _corpus_loaded(self, src: List[torch.Tensor]) -> None:
        self._first = base_translations(self.model, [s[:-1].tolist() for s in src])

    def _corpus_inputs(self, net_input: Dict, ids: List[int]) -> None:
        net_input["first_pass"] = collate_first_passes(self.model.tgt_dict, [self._first[i] for i in ids])

    def _pairs_loaded(self, encoded: List[Dict[str, torch.Tensor]]) -> None:
        # the base translation of each distinct source, shared by its candidates
        for p, f in zip(
            encoded, base_translations(self.model, [p["source"][:-1].tolist() for p in encoded]), strict=True
        ):
            p["first_pass"] = f

    def _pair_inputs(self, encoder_input: Dict, rows: List[Dict[str, torch.Tensor]]) -> None:
        encoder_input["first_pass"] = collate_first_passes(self.model.tgt_dict, [r["first_pass"] for r in rows])


def scoring_backend(model: DocumentModel) -> FairseqScoringBackend:
    """The scoring backend of a loaded checkpoint: CADec's, or the plain one."""
    return CADecScoringBackend(model) if model.cadec else FairseqScoringBackend(model)
