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

from contextual_mt.analysis.join import read_pcxmi
from contextual_mt.errors import ContextualMTError, check_option
from contextual_mt.inference.fairseq_scoring import FairseqScoringBackend  # noqa: F401  (tests patch it here)
from contextual_mt.inference.interface import ScoringBackend
from contextual_mt.inference.model_spec import ModelSpec, model_fingerprint, model_name, model_summary, open_backend
from contextual_mt.inference.batching import length_batches
from contextual_mt.stage_record import (PartialFile, differences, remove_partial, resumable_records,
                                        summary_if_current)
from muda.io import (atomic_write_lines, atomic_write_text, check_input_file, check_line_count, document_spans,
                     document_starts, file_sha256, outputs, read_docids, read_lines)

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
    """``"i/n"`` as ``(i, n)``; no shard is ``(0, 1)``."""
    if shard is None:
        return 0, 1
    try:
        i, n = (int(x) for x in str(shard).split("/"))
    except ValueError:
        raise ContextualMTError(f"--shard must look like 'i/n' (got {shard!r})") from None
    if not (n >= 1 and 0 <= i < n):
        raise ContextualMTError(f"--shard {shard}: need 0 <= i < n")
    return i, n


def check_log_base(log_base: str) -> None:
    if log_base not in LOG_BASES:
        raise ContextualMTError(f"--log-base must be 'e' or '2' (got {log_base!r})")


def check_references(references: Sequence[str], name: str = "reference") -> None:
    """A blank reference would be scored as a lone </s> and counted in the corpus CXMI."""
    for lineno, line in enumerate(references, start=1):
        if not line.strip():
            raise ContextualMTError(f"{name}:{lineno}: empty reference line; CXMI needs a reference "
                                    "for every sentence (remove the line from all input files)")


def check_random_context(docids: Sequence[str], name: str = "docids") -> None:
    """The control takes context from other documents: with one document there are none, and
    the 'random' context would silently be the real one."""
    n_docs = len(document_spans(docids))
    if n_docs < 2:
        raise ContextualMTError(f"{name}: --random-context needs at least two documents (found {n_docs})")


def no_context_error(name: str, trained: Optional[Dict]) -> ContextualMTError:
    if trained is not None and not trained["source_context_size"] and not trained["target_context_size"]:
        why = f"{name} was trained without context (source and target context size 0)"
    else:
        why = "context sizes 0/0 (source/target) give the model no context"
    return ContextualMTError(f"{why}, so its CXMI is 0 by construction; CXMI needs context: a model trained "
                             "with context and --sample-context-size (e.g. --target-context-size 3 "
                             "--sample-context-size), and context sizes > 0")


class PCXMIScorer:
    """Scores references with and without context using one model (a ScoringBackend)."""

    def __init__(self, backend: ScoringBackend, batch_size: int = 64, name: str = "the model",
                 max_tokens: Optional[int] = None):
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
                logger.info("%s is CADec: without context it reads only the base translation of the sentence, "
                            "as it was trained on the first sentences of documents", name)
            elif not trained["sample_context_size"] and (n_src or n_tgt):
                logger.warning(
                    "%s was trained with a fixed context size, not --sample-context-size: it never "
                    "saw sentences without context, so CXMI from it is not meaningful", name)
            if self.n_src > n_src or self.n_tgt > n_tgt:
                logger.warning("context sizes %d/%d (source/target) exceed those trained (%d/%d)",
                               self.n_src, self.n_tgt, n_src, n_tgt)

    @classmethod
    def from_checkpoint(cls, model: ModelSpec, batch_size: int = 64, max_tokens: Optional[int] = None) -> "PCXMIScorer":
        """The scorer of a fairseq checkpoint or a Hugging Face model (``--hf-model``)."""
        return cls(open_backend(model, max_tokens), batch_size, name=model_name(model), max_tokens=max_tokens)

    def score(self, sources: Sequence[str], references: Sequence[str], docids: Sequence[str],
              todo: Optional[Iterable[int]] = None, random_context: bool = False, seed: int = 1,
              log_base: str = "e", progress: bool = True,
              names: Tuple[str, str, str] = ("source", "reference", "docids")) -> Iterable[List[Dict]]:
        """Yield lists of per-sentence records, one list per batch, for sentences ``todo``.
        ``names`` (the files of sources, references and docids) are what errors name."""
        check_log_base(log_base)
        if not (len(sources) == len(references) == len(docids)):
            raise ContextualMTError(f"{len(sources)} sources, {len(references)} references, {len(docids)} docids")
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


@dataclass
class CxmiOptions:
    """``contextual-mt cxmi``: the model, the references to score, and how. Validated when
    built, so a bad option fails before any file is read or model loaded."""

    model: ModelSpec  # a fairseq checkpoint (ModelOptions) or a Hugging Face model (HFModelOptions)
    source: str
    reference: str
    docids: str
    output: str  # JSONL, one record per sentence; the summary is written beside it
    log_base: str = "e"  # e: nats, 2: bits
    random_context: bool = False  # control: context from random other documents
    seed: int = 1
    shard: Optional[str] = None  # "i/n": the i-th of n parts of the documents
    batch_size: int = 64  # sentences per batch
    max_tokens: Optional[int] = None  # padded tokens (with context) per batch; --hf-model: 1024 CPU, 8192 GPU
    resume: bool = True  # continue from OUTPUT.partial (False: --overwrite, discard it)
    progress: bool = True
    skip_up_to_date: bool = False  # outputs already made from these inputs and options: keep them

    def __post_init__(self) -> None:
        check_log_base(self.log_base)
        check_option("--batch-size", self.batch_size, minimum=1, integer=True)
        check_option("--max-tokens", self.max_tokens, minimum=1, integer=True, optional=True)
        check_option("--seed", self.seed, integer=True)
        parse_shard(self.shard)
        if self.model.source_context_size == 0 and self.model.target_context_size == 0:
            raise no_context_error(self.model.path, None)


def fingerprint(options: CxmiOptions) -> Dict:
    """Everything the records depend on, by content: a partial run resumes, and shards merge,
    only when these agree. Computed without loading the model."""
    o = options
    shard_i, shard_n = parse_shard(o.shard)
    return {
        "source": file_sha256(o.source), "reference": file_sha256(o.reference), "docids": file_sha256(o.docids),
        **model_fingerprint(o.model),
        "log_base": o.log_base, "random_context": o.random_context,
        "seed": o.seed if o.random_context else None,  # the seed only draws the random context
        "shard": f"{shard_i}/{shard_n}",
    }


def read_cxmi_inputs(o: CxmiOptions) -> Tuple[List[str], List[str], List[str]]:
    """Sources, references and docids, checked against each other."""
    sources, references = read_lines(o.source), read_lines(o.reference)
    if len(sources) != len(references):
        raise ContextualMTError(f"{o.reference}: has {len(references)} lines but {o.source} has {len(sources)}")
    ids = read_docids(o.docids)
    check_line_count(ids, o.docids, len(sources), o.source)
    check_references(references, o.reference)
    if o.random_context:
        check_random_context(ids, o.docids)
    return sources, references, ids


def shard_lines(ids: Sequence[str], shard: Optional[str], docids_name: str = "docids") -> List[int]:
    """The 0-based sentences of the shard: whole documents, in n parts of about equal count."""
    shard_i, shard_n = parse_shard(shard)
    spans = document_spans(ids)
    if shard_n > len(spans):
        raise ContextualMTError(f"--shard {shard}: {docids_name} has only {len(spans)} documents, fewer than "
                                f"{shard_n} shards")
    return [i for d, (a, b) in enumerate(spans) if d * shard_n // len(spans) == shard_i for i in range(a, b)]


def run_cxmi(options: CxmiOptions) -> Dict:
    """File-level entry point of ``contextual-mt cxmi``; returns the summary. The records and
    the summary appear together at the end (nothing on failure)."""
    with outputs(options.output, summary_path(options.output)):
        summary = _run_cxmi(options)
    remove_partial(options.output)
    return summary


def up_to_date(o: CxmiOptions, fp: Dict) -> Optional[Dict]:
    """The existing summary when OUTPUT and its summary were made from exactly these inputs and
    options (same fingerprint, same number of records); else None."""
    return summary_if_current(o.output, summary_path(o.output), fp, "sentences")


def _run_cxmi(o: CxmiOptions) -> Dict:
    sources, references, ids = read_cxmi_inputs(o)
    mine = shard_lines(ids, o.shard, o.docids)
    partial = o.output + ".partial"
    fp = fingerprint(o)  # before the model is loaded: a stale partial fails fast
    if o.skip_up_to_date:
        summary = up_to_date(o, fp)
        if summary is not None:
            logger.warning("%s: up to date (made from these inputs and options); nothing to do", o.output)
            return summary
    done = resumable_records(partial, fp, (i + 1 for i in mine)) if o.resume else []
    finished = {r["line"] - 1 for r in done}
    todo = [i for i in mine if i not in finished]
    if done:
        logger.warning("%s: resuming, %d of %d sentences already scored", partial, len(finished), len(mine))
    scorer = PCXMIScorer.from_checkpoint(o.model, batch_size=o.batch_size, max_tokens=o.max_tokens)
    writer, new = PartialFile(partial, fp, done), []
    try:
        for records in scorer.score(sources, references, ids, todo, o.random_context, o.seed, o.log_base,
                                    o.progress, names=(o.source, o.reference, o.docids)):
            writer.write(records)
            new.extend(records)
    finally:
        writer.close()
    records = sorted(done + new, key=lambda r: r["line"])
    summary = summarize(records, o.log_base, {
        **model_summary(o.model), "source_context_size": scorer.n_src, "target_context_size": scorer.n_tgt,
        "random_context": o.random_context, "seed": o.seed, "shard": fp["shard"],
        "records": o.output, "fingerprint": fp,
    })
    atomic_write_lines(o.output, [json.dumps(r, ensure_ascii=False) for r in records])
    atomic_write_text(summary_path(o.output), json.dumps(summary, indent=2) + "\n")
    return summary


def summary_path(output: str) -> str:
    return (output[:-6] if output.endswith(".jsonl") else output) + ".summary.json"


def read_summary(path: str) -> Dict:
    """A ``.summary.json``: one line naming the file (and line) if it is not JSON."""
    check_input_file(path, "summary")
    text = "\n".join(read_lines(path))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ContextualMTError(f"{path}:{e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(value, dict):
        raise ContextualMTError(f"{path}: not a CXMI summary (expected a JSON object)")
    return value


def _shard_summary(path: str) -> Dict:
    meta_path = summary_path(path)
    if not os.path.exists(meta_path):
        raise ContextualMTError(f"{meta_path}: summary missing; is {path} a finished shard?")
    meta = read_summary(meta_path)
    if not isinstance(meta.get("fingerprint"), dict) or not isinstance(meta.get("sentences"), int):
        raise ContextualMTError(f"{meta_path}: has no fingerprint (written by an older version); "
                                "score that shard again")
    return meta


def check_shards(shards: Sequence[str], metas: Sequence[Dict]) -> None:
    """Shards merge only if they are parts of one computation (same fingerprint but for the
    shard) and are all its parts 0..n-1, once each."""
    first, first_path = metas[0]["fingerprint"], summary_path(shards[0])
    for path, meta in zip(shards[1:], metas[1:]):
        differ = differences(first, meta["fingerprint"], ("there", "here"), ignore=("shard",))
        if differ:
            raise ContextualMTError(f"{summary_path(path)}: not a shard of the same computation as {first_path} "
                                    f"(differs in: {', '.join(differ)})")
    parts: Dict[int, str] = {}
    n = None
    for path, meta in zip(shards, metas):
        try:
            i, n_here = parse_shard(meta["fingerprint"].get("shard"))
        except ContextualMTError as e:
            raise ContextualMTError(f"{summary_path(path)}: bad shard ({e})") from None
        if n is not None and n_here != n:
            raise ContextualMTError(f"{summary_path(path)}: shard {i}/{n_here}, but {first_path} is one of {n} shards")
        n = n_here
        if i in parts:
            raise ContextualMTError(f"shard {i}/{n} given twice: {parts[i]} and {path}")
        parts[i] = path
    missing = [f"{i}/{n}" for i in range(n) if i not in parts]
    if missing:
        raise ContextualMTError(f"shard(s) {', '.join(missing)} missing: merge all {n} shards")


def merge_shards(shards: Sequence[str], output: str) -> Dict:
    """Merge the JSONL outputs of ``--shard i/n`` runs into one file and one summary."""
    with outputs(output, summary_path(output)):
        return _merge_shards(shards, output)


def _merge_shards(shards: Sequence[str], output: str) -> Dict:
    metas = [_shard_summary(path) for path in shards]
    check_shards(shards, metas)
    records, seen = [], set()
    for path, meta in zip(shards, metas):
        shard_records = read_pcxmi(path)
        if len(shard_records) != meta["sentences"]:
            raise ContextualMTError(f"{path}: has {len(shard_records)} records but {summary_path(path)} counts "
                                    f"{meta['sentences']}; the file is incomplete or not this shard's")
        for lineno, r in enumerate(shard_records, start=1):
            if r["line"] in seen:
                raise ContextualMTError(f"{path}:{lineno}: sentence {r['line']} appears in two shards")
            seen.add(r["line"])
            records.append(r)
    records.sort(key=lambda r: r["line"])
    first = metas[0]
    extra = {k: first.get(k) for k in ("checkpoint", "hf_model", "hf_settings", "source_context_size",
                                       "target_context_size", "random_context", "seed") if k in first}
    fp = {**first["fingerprint"], "shard": None}  # the merged whole
    log_base = fp.get("log_base", first.get("log_base", "e"))
    summary = summarize(records, log_base, {**extra, "fingerprint": fp, "merged_from": list(shards),
                                            "records": output})
    atomic_write_lines(output, [json.dumps(r, ensure_ascii=False) for r in records])
    atomic_write_text(summary_path(output), json.dumps(summary, indent=2) + "\n")
    return summary
