"""The one interface every model backend implements (fairseq ``document_translation``, CADec
and Hugging Face): how CXMI / P-CXMI read a model (``CorpusScorer``), how contrastive scoring
reads one (``PairScorer``),
how ``translate`` reads one (``Translator``), and what a model specification tells the runners
without loading anything (``ModelFamily``). Runners are written against these protocols only:
they never ask which kind of model they hold.

Scoring has two ways in, one protocol each: a corpus of documents (``CorpusScorer.load``: each
sentence's context is the sentences before it), or free-standing pairs that carry their own
context (``PairScorer.load_pairs``: contrastive sets, where every candidate translation has its own
target context). A backend implements those it does (both backends today, in one class each).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Hashable, Iterator, List, Optional, Protocol, Sequence, Tuple, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class ContextPair:
    """A source sentence and a target to score, each with the sentences before it (oldest
    first). The backend uses at most its context sizes of them, the nearest ones."""

    source: str
    target: str
    source_context: Tuple[str, ...] = ()
    target_context: Tuple[str, ...] = ()


@runtime_checkable
class ReadsContext(Protocol):
    """The context a scorer reads: what both kinds of scorer report in their summaries."""

    source_context_size: int  # the context the model reads, in sentences (0: none)
    target_context_size: int

    @property
    def trained_context(self) -> Optional[Dict]:
        """sample_context_size / source / target sizes as trained, if known."""
        ...


@runtime_checkable
class CorpusScorer(ReadsContext, Protocol):
    """What CXMI / P-CXMI and attribution need from a model: scores of the references of a corpus.

    ``load`` fixes a corpus: sentences, references, where each document starts, and optionally,
    for each sentence, the position whose preceding sentences serve as its context (a control
    that takes context from another document). Then ``token_log_probs`` scores any subset of it.
    """

    def load(
        self,
        sources: Sequence[str],
        references: Sequence[str],
        doc_starts: np.ndarray,
        context_of: Optional[np.ndarray] = None,
        names: Tuple[str, str] = ("source", "reference"),
    ) -> List[List[str]]:
        """Encode a corpus (later calls refer to its sentences by index); return the subword
        pieces of each reference, without EOS. A sentence the model cannot read whole is an
        error naming its line in ``names`` (the files of sources and references)."""

    def context_sentences(self) -> Tuple[np.ndarray, np.ndarray]:
        """Per sentence, how many (source, target) context sentences it is scored with."""

    def length(self, index: int) -> int:
        """Tokens of the sentence with its context (its longer side), what ``--max-tokens`` counts."""

    def token_log_probs(self, indices: Sequence[int], context: bool) -> Dict[int, np.ndarray]:
        """log p(y_t | y_<t, x[, C]) for every reference token of each sentence, EOS included."""

    def token_log_probs_both(
        self, indices: Sequence[int], with_context: Sequence[int]
    ) -> Tuple[Dict[int, np.ndarray], Dict[int, np.ndarray]]:
        """Both passes of P-CXMI: (without context for ``indices``, with context for
        ``with_context``). A backend may share batches between them."""


@runtime_checkable
class PairScorer(ReadsContext, Protocol):
    """What contrastive scoring (and docalign's link model) needs from a model: scores of
    free-standing pairs, each carrying its own context."""

    def load_pairs(self, pairs: Sequence[ContextPair], where: Callable[[int], str]) -> None:
        """Encode free-standing pairs (later calls refer to them by index). A pair the model
        cannot read whole is an error naming ``where(index)`` (its file and entry)."""

    def pair_length(self, index: int) -> int:
        """Tokens of the pair with its context (its longer side), what ``--max-tokens`` counts."""

    def pair_source_key(self, index: int) -> Hashable:
        """Pairs with equal keys share their encoder input: sorting by it lets a batch encode
        each distinct source once."""

    def pair_identity(self, index: int) -> Hashable:
        """Everything the model reads of the pair: equal identities score alike (two candidates
        that differ only in characters the model cannot represent)."""

    def pair_log_probs(self, indices: Sequence[int]) -> Dict[int, np.ndarray]:
        """log p(y_t | y_<t, x, C) for every target token of each pair, EOS included, with the
        pair's own context (up to the backend's context sizes)."""


@runtime_checkable
class Translator(Protocol):
    """Document translation with the model's own previous translations (or given references)
    as target context, decoded by the one driver (``inference.waves.decode_documents``)."""

    def translate(
        self,
        sources: Sequence[str],
        docids: Sequence[str],
        gold_targets: Optional[Sequence[str]] = None,
        progress: bool = True,
        source_name: str = "source",
    ) -> List[str]:
        """One translation per source line (``inference.waves.Translations``: a list that also
        records how it was decoded); ``source_name`` (the file) is what messages name."""


@dataclass(frozen=True)
class ChunkRequest:
    """``--unit document``: one chunk of whole sentences to translate in one generation, with
    the previous chunk of its document (its source and translation) as context, if any."""

    source: str
    context_source: Optional[str] = None
    context_target: Optional[str] = None
    where: str = "source"  # file:line of the chunk's first sentence, for messages


@runtime_checkable
class ChunkTranslator(Protocol):
    """Translation of chunks of documents, each in one generation (``inference.document_unit``
    cuts the chunks and drives the waves)."""

    def source_tokens(self, text: str) -> int:
        """The model tokenizer's tokens of a source text (no special tokens): what the budget counts."""

    def largest_source(self) -> int:
        """The source tokens of the largest chunk that fits the model's positions by itself (no
        context, one position for its translation): what ``--max-source-tokens`` may be at most."""

    def default_budget(self) -> int:
        """The source tokens of the largest chunk that fits the model's positions with room for
        its translation (``--max-len-a``/``--max-len-b``); one line when none does."""

    def translate_chunks(self, requests: Sequence[ChunkRequest]) -> Iterator[Tuple[int, str]]:
        """(the request's index, its translation) for every request once, batch by batch as each
        is decoded (``inference.batching``), so that the documents it finishes are kept at once."""


class ModelSpec(Protocol):
    """A model specification: an options object of a registered backend (``FairseqModelOptions``,
    ``HFModelOptions``), what the runners read of it without asking its kind (everything else
    they ask its family)."""

    @property
    def path(self) -> str: ...  # the checkpoint, model folder or model name: what messages name

    @property
    def source_context_size(self) -> Optional[int]: ...  # None: as the model was trained

    @property
    def target_context_size(self) -> Optional[int]: ...

    @property
    def dtype(self) -> str: ...  # as asked (``auto`` included); ``model_dtype`` gives the one it runs in

    @property
    def cpu(self) -> bool: ...


class ModelFamily(Protocol):
    """What a kind of model specification (``FairseqModelOptions``, ``HFModelOptions``) knows about
    itself: how to open its backends, what its numbers depend on, how summaries name it."""

    translates_documents: bool  # whether ``open_chunk_translator`` opens one (``--unit document``)

    def open_corpus_scorer(self, spec: ModelSpec, max_tokens: Optional[int] = None) -> CorpusScorer:
        """The model as a scorer of a corpus's references (loaded once)."""

    def open_pair_scorer(self, spec: ModelSpec, max_tokens: Optional[int] = None) -> PairScorer:
        """The model as a scorer of free-standing pairs (loaded once)."""

    def open_translator(self, spec: ModelSpec, decoding) -> Translator:
        """The translator of the model with these ``DecodingOptions``."""

    def open_chunk_translator(self, spec: ModelSpec, decoding) -> ChunkTranslator:
        """The ``--unit document`` translator of the model (one line where the family has none)."""

    def open_attribution(self, spec: ModelSpec, max_tokens: Optional[int] = None):
        """The attribution backend of the model (``attribution.interface``; loaded once)."""

    def fingerprint(self, spec: ModelSpec) -> Dict:
        """What scores depend on in the model, by content, without loading it."""

    def positions(self, spec: ModelSpec) -> Optional[int]:
        """The positions the model allows, read without loading its weights (None: not known so)."""

    def summary(self, spec: ModelSpec) -> Dict:
        """How a summary names the model."""

    def dtype(self, spec: ModelSpec) -> str:
        """The floating-point type the model runs in on this machine (float32, bfloat16, float16)."""

    def for_gradients(self, spec: ModelSpec) -> ModelSpec:
        """The specification to attribute with (gradients): the one given, or one in the dtype
        that attribution supports; one line when the dtype asked for cannot be."""

    def reads_raw_text(self, spec: ModelSpec) -> bool:
        """Whether the model reads untokenized text (then Moses-tokenized sets are detokenized)."""
