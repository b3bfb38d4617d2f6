"""CXMI and token-level P-CXMI with one shared model (Fernandes et al. 2021; Fernandes et al. 2023).

One ``document_translation`` model trained with dynamic context size is both q_MT_A (no
context) and q_MT_C (with context). Each reference sentence is scored twice, in batches:

    P-CXMI(y_t) = log q_C(y_t | y_<t, x, C) - log q_A(y_t | y_<t, x)

A word's value is the sum over its subwords (chain rule); a sentence's is the sum over all its
tokens, EOS included; corpus CXMI is the mean of sentence values. Records stream to
``OUTPUT.partial`` as batches finish; a rerun resumes from it; the sorted JSONL and a summary
are written atomically at the end. ``--shard i/n`` splits the documents over jobs.
"""
from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from tqdm import tqdm

from contextual_mt.errors import ContextualMTError
from contextual_mt.inference.backend import FairseqScoringBackend, ScoringBackend
from contextual_mt.inference.checkpoint import DocumentModel, ModelOptions
from muda.io import atomic_write_lines, atomic_write_text, check_line_count, document_starts, read_docids, read_lines

logger = logging.getLogger(__name__)

LOG_BASES = {"e": 1.0, "2": math.log(2)}
UNITS = {"e": "nats", "2": "bits"}


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


def parse_shard(shard: Optional[str]) -> Tuple[int, int]:
    if not shard:
        return 0, 1
    try:
        i, n = (int(x) for x in shard.split("/"))
    except ValueError:
        raise ContextualMTError(f"--shard must look like 'i/n' (got {shard!r})") from None
    if not (n >= 1 and 0 <= i < n):
        raise ContextualMTError(f"--shard {shard}: need 0 <= i < n")
    return i, n


class PCXMIScorer:
    """Scores references with and without context using one model (a ScoringBackend)."""

    def __init__(self, backend: ScoringBackend, batch_size: int = 64, name: str = "the model"):
        self.backend = backend
        self.batch_size = batch_size
        self.n_src, self.n_tgt = backend.source_context_size, backend.target_context_size
        trained = backend.trained_context
        if trained is not None:
            n_src, n_tgt = trained["source_context_size"], trained["target_context_size"]
            if not trained["sample_context_size"] and (n_src or n_tgt):
                logger.warning(
                    "%s was trained with a fixed context size, not --sample-context-size: it never "
                    "saw sentences without context, so CXMI from it is not meaningful", name)
            if self.n_src > n_src or self.n_tgt > n_tgt:
                logger.warning("context sizes %d/%d (source/target) exceed those trained (%d/%d)",
                               self.n_src, self.n_tgt, n_src, n_tgt)

    @classmethod
    def from_checkpoint(cls, model: ModelOptions, batch_size: int = 64) -> "PCXMIScorer":
        return cls(FairseqScoringBackend(DocumentModel.load(model)), batch_size, name=model.path)

    def score(self, sources: Sequence[str], references: Sequence[str], docids: Sequence[str],
              todo: Optional[Iterable[int]] = None, random_context: bool = False, seed: int = 1,
              log_base: str = "e", progress: bool = True) -> Iterable[List[Dict]]:
        """Yield lists of per-sentence records, one list per batch, for sentences ``todo``."""
        if log_base not in LOG_BASES:
            raise ContextualMTError(f"--log-base must be 'e' or '2' (got {log_base!r})")
        if not (len(sources) == len(references) == len(docids)):
            raise ContextualMTError(f"{len(sources)} sources, {len(references)} references, {len(docids)} docids")
        starts = document_starts(list(docids))
        context_of = None
        if random_context:
            sizes = np.minimum(max(self.n_src, self.n_tgt), np.arange(len(starts)) - starts)
            context_of = random_context_sources(starts, sizes, seed)
        ref_pieces = self.backend.load(sources, references, starts, context_of)
        src_k, tgt_k = self.backend.context_sentences()
        todo = sorted(set(range(len(sources)) if todo is None else todo), key=lambda i: (self.backend.length(i), i))
        scale = LOG_BASES[log_base]
        bar = tqdm(total=len(todo), unit="sent", desc="P-CXMI", disable=not progress)
        for b in range(0, len(todo), self.batch_size):
            chunk = todo[b:b + self.batch_size]
            lp_a = self.backend.token_log_probs(chunk, context=False)
            # with no context available (document starts), q_C is q_A: no second pass
            has_ctx = [i for i in chunk if src_k[i] or tgt_k[i]]
            lp_c = {**lp_a, **(self.backend.token_log_probs(has_ctx, context=True) if has_ctx else {})}
            records = []
            for i in chunk:
                token_values = (lp_c[i] - lp_a[i]) / scale
                pieces = ref_pieces[i] + ["</s>"]
                words = split_words(ref_pieces[i])
                records.append({
                    "doc": docids[i], "sentence": int(i - starts[i]), "line": i + 1,
                    "source": sources[i], "reference": references[i],
                    "context_sentences": {"source": int(src_k[i]), "target": int(tgt_k[i])},
                    "tokens": pieces, "token_pcxmi": [round(float(v), 6) for v in token_values],
                    "words": [w for w, _ in words],
                    "word_pcxmi": [round(float(token_values[idx].sum()), 6) for _, idx in words],
                    "sentence_pcxmi": round(float(token_values.sum()), 6),
                    "logprob_context": round(float(lp_c[i].sum() / scale), 6),
                    "logprob_no_context": round(float(lp_a[i].sum() / scale), 6),
                })
            bar.update(len(chunk))
            yield records
        bar.close()


def summarize(records: Sequence[Dict], log_base: str, extra: Optional[Dict] = None) -> Dict:
    sentence = [r["sentence_pcxmi"] for r in records]
    tokens = [v for r in records for v in r["token_pcxmi"]]
    return {
        "cxmi": float(np.mean(sentence)) if sentence else 0.0,
        "mean_token_pcxmi": float(np.mean(tokens)) if tokens else 0.0,
        "unit": UNITS[log_base], "log_base": log_base,
        "sentences": len(sentence), "tokens": len(tokens), **(extra or {}),
    }


def _read_partial(path: str) -> List[Dict]:
    """Complete records of an interrupted run (a cut-off last line is dropped)."""
    if not os.path.exists(path):
        return []
    records = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                break
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return records


@dataclass
class CxmiOptions:
    """``contextual-mt cxmi``: the model, the references to score, and how."""

    model: ModelOptions
    source: str
    reference: str
    docids: str
    output: str  # JSONL, one record per sentence; the summary is written beside it
    log_base: str = "e"  # e: nats, 2: bits
    random_context: bool = False  # control: context from random other documents
    seed: int = 1
    shard: Optional[str] = None  # "i/n": the i-th of n parts of the documents
    batch_size: int = 64  # sentences per batch
    resume: bool = True  # continue from OUTPUT.partial
    progress: bool = True


def run_cxmi(options: CxmiOptions) -> Dict:
    """File-level entry point of ``contextual-mt cxmi``; returns the summary."""
    o = options
    sources, references = read_lines(o.source), read_lines(o.reference)
    if len(sources) != len(references):
        raise ContextualMTError(f"{o.reference}: has {len(references)} lines but {o.source} has {len(sources)}")
    ids = read_docids(o.docids)
    check_line_count(ids, o.docids, len(sources), o.source)
    shard_i, shard_n = parse_shard(o.shard)
    starts = document_starts(ids)
    doc_index = np.cumsum(starts == np.arange(len(starts))) - 1
    n_docs = int(doc_index[-1]) + 1
    mine = [i for i in range(len(ids)) if doc_index[i] * shard_n // n_docs == shard_i]
    partial = o.output + ".partial"
    done = _read_partial(partial) if o.resume else []
    atomic_write_lines(partial, [json.dumps(r, ensure_ascii=False) for r in done])  # drop a cut-off line
    finished = {r["line"] - 1 for r in done}
    todo = [i for i in mine if i not in finished]
    if done:
        logger.warning("%s: resuming, %d of %d sentences already scored", partial, len(finished), len(mine))
    scorer = PCXMIScorer.from_checkpoint(o.model, batch_size=o.batch_size)
    with open(partial, "a", encoding="utf-8") as f:
        for records in scorer.score(sources, references, ids, todo, o.random_context, o.seed, o.log_base,
                                    o.progress):
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
            f.flush()
    records = sorted(_read_partial(partial), key=lambda r: r["line"])
    summary = summarize(records, o.log_base, {
        "checkpoint": o.model.path, "source_context_size": scorer.n_src, "target_context_size": scorer.n_tgt,
        "random_context": o.random_context, "seed": o.seed, "shard": f"{shard_i}/{shard_n}",
        "records": o.output,
    })
    atomic_write_lines(o.output, [json.dumps(r, ensure_ascii=False) for r in records])
    atomic_write_text(summary_path(o.output), json.dumps(summary, indent=2) + "\n")
    os.unlink(partial)
    return summary


def summary_path(output: str) -> str:
    return (output[:-6] if output.endswith(".jsonl") else output) + ".summary.json"


def merge_shards(shards: Sequence[str], output: str) -> Dict:
    """Merge the JSONL outputs of ``--shard i/n`` runs into one file and one summary."""
    records, seen, base, extra = [], set(), None, {}
    for path in shards:
        meta_path = summary_path(path)
        if not os.path.exists(meta_path):
            raise ContextualMTError(f"{meta_path}: summary missing; is {path} a finished shard?")
        meta = json.loads(open(meta_path, encoding="utf-8").read())
        if base is None:
            base = meta["log_base"]
            extra = {k: meta[k] for k in ("checkpoint", "source_context_size", "target_context_size",
                                          "random_context", "seed")}
        elif meta["log_base"] != base:
            raise ContextualMTError(f"{meta_path}: log base {meta['log_base']} differs from {base}")
        for lineno, line in enumerate(read_lines(path), start=1):
            r = json.loads(line)
            if r["line"] in seen:
                raise ContextualMTError(f"{path}:{lineno}: sentence {r['line']} appears in two shards")
            seen.add(r["line"])
            records.append(r)
    records.sort(key=lambda r: r["line"])
    summary = summarize(records, base or "e", {**extra, "merged_from": list(shards), "records": output})
    atomic_write_lines(output, [json.dumps(r, ensure_ascii=False) for r in records])
    atomic_write_text(summary_path(output), json.dumps(summary, indent=2) + "\n")
    return summary
