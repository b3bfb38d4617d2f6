"""``contextual-mt translate --unit document``: each document, or each chunk of whole consecutive
sentences that fits a token budget, translated in one generation (as LLMs translate documents),
by any model whose family opens a ``ChunkTranslator`` (``--hf-model``).

* Chunks (``pack``): the non-empty source lines of a document, in order, packed greedily while
  the source text (the lines joined with a space) has at most ``--max-source-tokens`` tokens of
  the model's tokenizer (default: what fits the model's positions with room for the translation,
  ``ChunkTranslator.default_budget``). A line longer than the budget by itself is an error
  naming it.
* Context: the previous chunk of the document, its source and its translation (with
  ``--gold-target-context``, the references of its lines), where the model's positions allow.
* Waves: chunk k of every document is translated after chunk k-1 (its context), so the k-th
  chunks of all documents form one wave, batched together (``--batch-size``, ``--max-tokens``);
  with references as context no chunk waits for another and all go in one pass.
* Records (``inference.document_output``) stream to ``OUTPUT.partial`` behind the run's
  fingerprint as documents finish, batch by batch (keyed by the document's first line): an
  interruption keeps every document whose last chunk was decoded; a rerun with the same
  fingerprint translates only the documents not there, and the output is written at the end.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Optional, Sequence

from tqdm import tqdm

from commandkit.documents import document_spans
from commandkit.text import file_sha256
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.document_output import Chunk, DocumentRecord, write_records
from contextual_mt.inference.interface import ChunkRequest, ChunkTranslator
from contextual_mt.inference.model_health import warn_if_degenerate
from contextual_mt.inference.registry import family, model_fingerprint
from contextual_mt.stage_record import PartialFile, partial_path, resumable_records

logger = logging.getLogger(__name__)

NEEDS_HF = (
    "--unit document needs --hf-model: the fairseq concatenation models are trained on sentences "
    "(with a few sentences of context), not on whole documents; translate them with --unit sentence"
)


def check_document_unit(unit: str, max_source_tokens: Optional[int], model, decoding, resume: bool) -> None:
    """The options of ``--unit``, before anything is read or loaded."""
    from commandkit.errors import check_number
    from contextual_mt.inference.decoding import UNITS, DecodingOptions

    if unit not in UNITS:
        raise InputError(f"--unit {unit}: expected one of {', '.join(UNITS)}", code=Code.OPTION_VALUE)
    check_number("--max-source-tokens", max_source_tokens, minimum=1, integer=True, optional=True)
    if unit == "sentence":
        if max_source_tokens is not None:
            raise InputError(
                "--max-source-tokens goes with --unit document (a sentence is translated whole)",
                code=Code.OPTIONS_CONFLICT,
            )
        if not resume:
            raise InputError(
                "--overwrite goes with --unit document (the translate output that resumes from OUTPUT.partial)",
                code=Code.OPTIONS_CONFLICT,
            )
        return
    if not family(model).translates_documents:
        raise InputError(NEEDS_HF, code=Code.OPTION_MISSING)
    if decoding.decoding == "parallel" or decoding.window != DecodingOptions.window:
        raise InputError(
            "--decoding parallel and --parallel-window are for --unit sentence: with --unit document "
            "chunk k of a document is translated after chunk k-1, its context",
            code=Code.OPTIONS_CONFLICT,
        )


@dataclass
class DocumentPlan:
    doc: str
    first_line: int  # 1-based: the document's key in OUTPUT.partial
    chunks: List[List[int]]  # per chunk, its non-empty lines (0-based)


def pack(lines: Sequence[int], count: Callable[[Sequence[int]], int], budget: int) -> List[List[int]]:
    """``lines`` cut into runs whose text has at most ``budget`` tokens (``count`` of a run of
    lines: the tokens of their joined text). Each run is grown by the sum of its lines' tokens,
    then checked as one text (a tokenizer may count a joined text differently: byte-level BPE
    counts a word after a space apart) and, when over, cut to the longest run that fits by
    bisection: a few tokenizations per chunk, not one per line. Every single line must fit
    (checked before)."""
    single = [count([i]) for i in lines]
    out: List[List[int]] = []
    k = 0
    while k < len(lines):
        j, used = k, 0
        while j < len(lines) and (j == k or used + single[j] <= budget):
            used += single[j]
            j += 1
        if j - k > 1 and count(lines[k:j]) > budget:  # the longest run from k that fits (one line does)
            lo, hi = k + 1, j - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                lo, hi = (mid, hi) if count(lines[k:mid]) <= budget else (lo, mid - 1)
            j = lo
        out.append(list(lines[k:j]))
        k = j
    return out


def plan_documents(
    sources: Sequence[str],
    ids: Sequence[str],
    spans: Sequence[tuple],
    count: Callable[[str], int],
    budget: int,
    budget_name: str,
    source_name: str,
) -> List[DocumentPlan]:
    """The chunks of the documents at ``spans``; a line over the budget is an error naming it."""
    plans = []
    for a, b in spans:
        lines = [i for i in range(a, b) if sources[i].strip()]
        for i in lines:
            n = count(sources[i])
            if n > budget:
                raise InputError(
                    f"{source_name}:{i + 1}: {n} tokens, more than {budget_name} ({budget}); a chunk holds whole "
                    "sentences: split the line or give a larger --max-source-tokens",
                    code=Code.TOO_LONG,
                )
        chunks = pack(lines, lambda run: count(joined(sources, run)), budget)
        plans.append(DocumentPlan(ids[a], a + 1, chunks))
    return plans


def joined(lines: Sequence[str], run: Sequence[int]) -> str:
    """The source text of a chunk: its lines joined with a space."""
    return " ".join(lines[i].strip() for i in run)


def check_budget(options) -> None:
    """``--max-source-tokens`` within the model's positions, from its config alone: before its
    weights load (``TranslateOptions`` ``options``)."""
    positions = family(options.model).positions(options.model) if options.max_source_tokens is not None else None
    if positions is not None and options.max_source_tokens > positions:
        raise InputError(
            f"--max-source-tokens {options.max_source_tokens}: more than the {positions} positions of "
            f"{options.model.path}; "
            "a chunk's source text and its translation must fit in them (leave the option out: the chunks "
            "then take what fits)",
            code=Code.OPTION_VALUE,
        )


def document_fingerprint(options) -> Dict:
    """What the records depend on (``TranslateOptions`` ``options``), by content, without loading the model."""
    d = options.decoding
    return {
        "unit": "document",
        "source": file_sha256(options.source),
        "docids": file_sha256(options.docids),
        "gold_target_context": file_sha256(options.gold_target_context) if options.gold_target_context else None,
        **model_fingerprint(options.model),
        "max_source_tokens": options.max_source_tokens,
        "beam": d.beam,
        "lenpen": d.lenpen,
        "max_len_a": d.max_len_a,
        "max_len_b": d.max_len_b,
    }


def translate_documents(options, sources: Sequence[str], ids: Sequence[str], gold: Optional[Sequence[str]]) -> int:
    """Translate the documents of ``TranslateOptions`` ``options`` chunk by chunk (resuming from
    OUTPUT.partial), write the output (inside the running output transaction); the count of
    documents."""
    partial = partial_path(options.output)
    fp = document_fingerprint(options)  # before the model is loaded: a stale partial fails fast
    spans = document_spans(ids)
    done = resumable_records(partial, fp, (a + 1 for a, _ in spans), command="translate") if options.resume else []
    finished = {r["line"] for r in done}
    todo = [(a, b) for a, b in spans if a + 1 not in finished]
    if done:
        logger.warning("%s: resuming, %d of %d documents already translated", partial, len(finished), len(spans))
    new: List[Dict] = []
    if todo:
        translator = family(options.model).open_chunk_translator(options.model, options.decoding)
        if options.max_source_tokens is not None and options.max_source_tokens > translator.largest_source():
            raise InputError(
                f"--max-source-tokens {options.max_source_tokens}: a source text of more than "
                f"{translator.largest_source()} tokens does not fit in the positions of {options.model.path} with "
                "its prompt and translation; lower it (or leave it out: the chunks then take what fits)",
                code=Code.OPTION_VALUE,
            )
        budget = options.max_source_tokens or translator.default_budget()
        name = (
            "--max-source-tokens"
            if options.max_source_tokens
            else "what fits the model's positions with room for the translation"
        )
        plans = plan_documents(sources, ids, todo, translator.source_tokens, budget, name, options.source)
        _warn_if_cut(plans, sources, translator, options.decoding)
        writer = PartialFile(partial, fp, done)
        try:
            for record in _waves(plans, sources, gold, translator, options.source, options.progress):
                writer.write([record])
                new.append(record)
        finally:
            writer.close()
    records = sorted(done + new, key=lambda r: r["line"])
    documents = [DocumentRecord.from_json(r) for r in records]
    write_records(options.output, documents)
    chunks = [c for d in documents for c in d.chunks]  # each chunk one generation, as a sentence is
    warn_if_degenerate(options.output, [c.text for c in chunks], [c.source for c in chunks])
    return len(records)


def _warn_if_cut(plans: List[DocumentPlan], sources: Sequence[str], translator: ChunkTranslator, d) -> None:
    longest = max((translator.source_tokens(joined(sources, c)) for p in plans for c in p.chunks), default=0)
    allowed = int(d.max_len_a * longest + d.max_len_b)
    if allowed < longest:
        logger.warning(
            "--unit document: the longest chunk has %d source tokens, but its translation may have at most "
            "--max-len-a %g x %d + --max-len-b %d = %d tokens; give --max-len-a (e.g. 1.5) so as not to cut it",
            longest,
            d.max_len_a,
            longest,
            d.max_len_b,
            allowed,
        )


def _waves(
    plans: List[DocumentPlan],
    sources: Sequence[str],
    gold: Optional[Sequence[str]],
    translator: ChunkTranslator,
    source_name: str,
    progress: bool,
) -> Iterator[Dict]:
    """The partial records of the documents (``{"line": first line, **record}``) as they finish."""
    texts: List[List[Optional[str]]] = [[None] * len(p.chunks) for p in plans]

    def record(d: int) -> Dict:
        p = plans[d]
        chunks = [
            Chunk((c[0] + 1, c[-1] + 1), joined(sources, c), t or "") for c, t in zip(p.chunks, texts[d], strict=True)
        ]
        text = " ".join(c.text for c in chunks if c.text)
        return {"line": p.first_line, **DocumentRecord(p.doc, text, tuple(chunks)).to_json()}

    for d, p in enumerate(plans):
        if not p.chunks:
            yield record(d)
    longest = max((len(p.chunks) for p in plans), default=0)
    if gold is not None:  # the context is known: one pass
        waves = [[(d, k) for d, p in enumerate(plans) for k in range(len(p.chunks))]]
    else:
        waves = [[(d, k) for d, p in enumerate(plans) if k < len(p.chunks)] for k in range(longest)]
    bar = tqdm(total=sum(len(w) for w in waves), unit="chunk", desc="translate", disable=not progress)
    try:
        for wave in waves:
            requests = []
            for d, k in wave:
                chunk, before = plans[d].chunks[k], plans[d].chunks[k - 1] if k else None
                context_target = None
                if before is not None:
                    context_target = joined(gold, before) if gold is not None else texts[d][k - 1]
                requests.append(
                    ChunkRequest(
                        joined(sources, chunk),
                        joined(sources, before) if before is not None else None,
                        context_target,
                        f"{source_name}:{chunk[0] + 1}",
                    )
                )
            for r, text in translator.translate_chunks(requests):  # as batches are decoded
                d, k = wave[r]
                texts[d][k] = text
                bar.update(1)
                if all(t is not None for t in texts[d]):
                    yield record(d)
    finally:
        bar.close()
