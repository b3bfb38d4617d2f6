"""The P-CXMI scorer: one model (a CorpusScorer) scores each reference with and without context.

    P-CXMI(y_t) = log q_C(y_t | y_<t, x, C) - log q_A(y_t | y_<t, x)

A word's value is the sum over its subwords (chain rule); a sentence's is the sum over all its
tokens, EOS included. Also the check of the random-context control (the corpus itself is read
and checked by ``contextual_mt.scored_corpus``).
"""

from __future__ import annotations

import logging
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from tqdm import tqdm

from commandkit.documents import document_spans, document_starts
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.batching import length_batches
from contextual_mt.inference.interface import CorpusScorer, ModelSpec
from contextual_mt.inference.registry import model_name, open_corpus_scorer
from contextual_mt.scored_corpus import LOG_BASES, check_log_base, check_references, no_context_error

logger = logging.getLogger(__name__)


def split_words(pieces: Sequence[str]) -> List[Tuple[str, List[int]]]:
    """Group subword pieces into words, with the indices of their pieces. sentencepiece marks
    word starts with '▁'; subword-nmt marks continued words with a trailing '@@'; otherwise
    every piece is a word."""
    sentencepiece = any(p.startswith("▁") for p in pieces)
    words: List[Tuple[str, List[int]]] = []
    continues = False
    for i, piece in enumerate(pieces):
        starts_word = not words or (piece.startswith("▁") if sentencepiece else not continues)
        text = piece.replace("▁", "")
        if piece.endswith("@@"):
            text = text[:-2]
        if starts_word:
            words.append((text, [i]))
        else:
            words[-1] = (words[-1][0] + text, words[-1][1] + [i])
        continues = piece.endswith("@@")
    return words


def random_context_sources(doc_starts: np.ndarray, sizes: np.ndarray, seed: int) -> np.ndarray:
    """For each sentence, a position in another document whose ``sizes[i]`` preceding
    sentences serve as its context (the random-context control)."""
    n = len(doc_starts)
    starts = np.flatnonzero(doc_starts == np.arange(n))
    ends = np.append(starts[1:], n)
    doc_of = np.searchsorted(starts, np.arange(n), side="right") - 1
    rng = np.random.default_rng(seed)
    out = np.arange(n)
    lengths = ends - starts
    for i in range(n):
        k = int(sizes[i])
        if k == 0 or len(starts) < 2:
            continue
        fits = np.flatnonzero((lengths > k) & (np.arange(len(starts)) != doc_of[i]))
        if len(fits) == 0:  # no other document is long enough: the longest other one
            others = np.flatnonzero(np.arange(len(starts)) != doc_of[i])
            fits = others[[np.argmax(lengths[others])]]
        d = int(rng.choice(fits))
        lo = starts[d] + min(k, lengths[d] - 1)
        out[i] = int(rng.integers(lo, ends[d])) if lo < ends[d] else ends[d] - 1
    return out


def check_random_context(docids: Sequence[str], name: str = "docids") -> None:
    """The control takes context from other documents: with one document there are none, and
    the 'random' context would silently be the real one."""
    n_docs = len(document_spans(docids))
    if n_docs < 2:
        raise InputError(f"{name}: --random-context needs at least two documents (found {n_docs})", code=Code.EMPTY)


class PCXMIScorer:
    """Scores references with and without context using one model (a CorpusScorer)."""

    def __init__(
        self, backend: CorpusScorer, batch_size: int = 64, name: str = "the model", max_tokens: Optional[int] = None
    ):
        self.backend = backend
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.n_src, self.n_tgt = backend.source_context_size, backend.target_context_size
        trained = backend.trained_context
        if not self.n_src and not self.n_tgt:
            raise no_context_error(name, trained)
        if trained is not None:
            n_src, n_tgt = trained["source_context_size"], trained["target_context_size"]
            if trained.get("cadec"):
                logger.info(
                    "%s is CADec: without context it reads only the base translation of the sentence, "
                    "as it was trained on the first sentences of documents",
                    name,
                )
            elif not trained["sample_context_size"] and (n_src or n_tgt):
                logger.warning(
                    "%s was trained with a fixed context size, not --sample-context-size: it never "
                    "saw sentences without context, so CXMI from it is not meaningful",
                    name,
                )

    @classmethod
    def from_checkpoint(cls, model: ModelSpec, batch_size: int = 64, max_tokens: Optional[int] = None) -> PCXMIScorer:
        """The scorer of a fairseq checkpoint or a Hugging Face model (``--hf-model``)."""
        return cls(open_corpus_scorer(model, max_tokens), batch_size, name=model_name(model), max_tokens=max_tokens)

    def score(
        self,
        sources: Sequence[str],
        references: Sequence[str],
        docids: Sequence[str],
        todo: Optional[Iterable[int]] = None,
        random_context: bool = False,
        seed: int = 1,
        log_base: str = "e",
        progress: bool = True,
        names: Tuple[str, str, str] = ("source", "reference", "docids"),
    ) -> Iterable[List[Dict]]:
        """Yield lists of per-sentence records, one list per batch, for sentences ``todo``.
        ``names`` (the files of sources, references and docids) are what errors name."""
        check_log_base(log_base)
        if not (len(sources) == len(references) == len(docids)):
            raise InputError(
                f"{len(sources)} sources, {len(references)} references, {len(docids)} docids", code=Code.LINE_COUNT
            )
        check_references(sources, names[0], "source")
        check_references(references, names[1])
        if random_context:
            check_random_context(docids, names[2])
        starts = document_starts(list(docids))
        context_of = None
        if random_context:
            sizes = np.minimum(max(self.n_src, self.n_tgt), np.arange(len(starts)) - starts)
            context_of = random_context_sources(starts, sizes, seed)
        ref_pieces = self.backend.load(sources, references, starts, context_of, names=names[:2])
        src_k, tgt_k = self.backend.context_sentences()
        todo = sorted(set(range(len(sources)) if todo is None else todo), key=lambda i: (self.backend.length(i), i))
        scale = LOG_BASES[log_base]
        bar = tqdm(total=len(todo), unit="sent", desc="P-CXMI", disable=not progress)
        for chunk in length_batches(todo, self.backend.length, self.batch_size, self.max_tokens):
            # with no context available (document starts), q_C is q_A: no second pass
            has_ctx = [i for i in chunk if src_k[i] or tgt_k[i]]
            lp_a, lp_c = self.backend.token_log_probs_both(chunk, has_ctx)
            lp_c = {**lp_a, **lp_c}
            records = []
            for i in chunk:
                token_values = (lp_c[i] - lp_a[i]) / scale
                pieces = ref_pieces[i] + ["</s>"]
                words = split_words(ref_pieces[i])
                records.append(
                    {
                        "doc": docids[i],
                        "sentence": int(i - starts[i]),
                        "line": i + 1,
                        "source": sources[i],
                        "reference": references[i],
                        "context_sentences": {"source": int(src_k[i]), "target": int(tgt_k[i])},
                        "tokens": pieces,
                        "token_pcxmi": [round(float(v), 6) for v in token_values],
                        "words": [w for w, _ in words],
                        "word_pcxmi": [round(float(token_values[idx].sum()), 6) for _, idx in words],
                        "sentence_pcxmi": round(float(token_values.sum()), 6),
                        "logprob_context": round(float(lp_c[i].sum() / scale), 6),
                        "logprob_no_context": round(float(lp_a[i].sum() / scale), 6),
                    }
                )
            bar.update(len(chunk))
            yield records
        bar.close()
