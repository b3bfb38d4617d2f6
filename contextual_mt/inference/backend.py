"""The scoring backend: token log-probabilities of reference targets given their source, with
and without document context, for batches of sentences. CXMI / P-CXMI (and contrastive scoring)
are written against the ``ScoringBackend`` protocol; ``FairseqScoringBackend`` implements it for
``document_translation`` checkpoints (a Hugging Face backend can implement it too).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Protocol, Sequence, Tuple, runtime_checkable

import numpy as np
import torch

from contextual_mt.data.context_dataset import ContextDataset, ContextOptions
from contextual_mt.inference.checkpoint import DocumentModel


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


class FairseqScoringBackend:
    """A ``document_translation`` checkpoint as a scoring backend (one model, teacher forcing)."""

    def __init__(self, model: DocumentModel):
        self.model = model
        self.source_context_size = model.source_context_size
        self.target_context_size = model.target_context_size
        self.trained_context = model.trained_context
        self._with: Optional[ContextDataset] = None
        self._without: Optional[ContextDataset] = None

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
        return pieces

    def context_sentences(self) -> Tuple[np.ndarray, np.ndarray]:
        return self._with.src_k, self._with.tgt_k

    def length(self, index: int) -> int:
        return self._with.num_tokens(index)

    @torch.no_grad()
    def token_log_probs(self, indices: Sequence[int], context: bool) -> Dict[int, np.ndarray]:
        from fairseq import utils

        from contextual_mt.generation.sequence_scorer import ContextSequenceScorer

        dataset = self._with if context else self._without
        batch = dataset.collater([dataset[i] for i in indices])
        if self.model.device.type == "cuda":
            batch = utils.move_to_cuda(batch)
        tgt_dict = self.model.tgt_dict
        scores = ContextSequenceScorer(tgt_dict).token_log_probs(self.model.models, batch)
        keep = batch["target"].ne(tgt_dict.pad())
        return {int(i): scores[r][keep[r]].double().cpu().numpy() for r, i in enumerate(batch["id"].tolist())}
