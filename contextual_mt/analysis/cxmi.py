"""``contextual-mt cxmi``: CXMI and token-level P-CXMI with one shared model (Fernandes et al. 2021;
Fernandes et al. 2023).

One ``document_translation`` model trained with dynamic context size is both q_MT_A (no
context) and q_MT_C (with context); each reference sentence is scored twice, in batches
(pcxmi_scorer). Corpus CXMI is the mean of sentence values (cxmi_summary). Records stream to
``OUTPUT.partial`` as batches finish; a rerun resumes from it; the sorted JSONL and a summary
are written atomically at the end. ``--shard i/n`` splits the documents over jobs and
``cxmi-merge`` joins them (cxmi_shards). This module holds the run: its options, fingerprint,
resume and outputs; the names of the other three are importable from here as well.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from commandkit.errors import check_number
from commandkit.options import check_required, group, option
from commandkit.outputs import outputs
from commandkit.text import file_sha256
from contextual_mt.analysis.cxmi_summary import summarize
from contextual_mt.analysis.pcxmi_scorer import PCXMIScorer, check_random_context
from contextual_mt.inference.batching import check_batching
from contextual_mt.inference.interface import ModelSpec
from contextual_mt.inference.model_args import RESUME_HELP, ModelArgs, max_tokens_option, progress_option, resume_option
from contextual_mt.inference.registry import model_fingerprint, model_summary
from contextual_mt.scored_corpus import (
    check_log_base,
    no_context_error,
    parse_shard,
    read_scored_corpus,
    shard_lines,
    summary_path,
    write_records,
)
from contextual_mt.stage_record import PartialFile, SummaryRecord, partial_path, remove_partial, resumable_records

logger = logging.getLogger(__name__)


@dataclass
class CxmiOptions:
    """``contextual-mt cxmi``: the model, the references to score, and how. Validated when
    built, so a bad option fails before any file is read or model loaded."""

    # a fairseq checkpoint (FairseqModelOptions) or a Hugging Face model (HFModelOptions), made
    # from the model options (contextual_mt.api.model_spec)
    model: ModelSpec = group(ModelArgs, last=True, given=True)
    source: str = option(required=True, help="source text, one sentence per line")
    reference: str = option(required=True, help="the reference translation, line by line: what is scored")
    docids: str = option(required=True, help="document id of each line (a document: equal consecutive ids)")
    output: str = option(required=True, help="JSONL, one record per sentence (a .summary.json is written beside it)")
    log_base: str = option(choices=["e", "2"], default="e", help="e: nats (default); 2: bits")
    random_context: bool = option(
        action="store_true", default=False, help="control: take the context from random other documents"
    )
    seed: int = option(default=1)
    shard: Optional[str] = option(empty_ok=True, help="i/n: score the i-th of n parts of the documents")
    batch_size: int = option(default=64, help="sentences per batch")
    # padded tokens (with context) per batch; --hf-model: 1024 CPU, 8192 GPU
    max_tokens: Optional[int] = max_tokens_option()
    resume: bool = resume_option(RESUME_HELP, "--no-resume")  # continue from OUTPUT.partial
    skip_up_to_date: bool = option(
        action="store_true",
        default=False,
        help="do nothing when OUTPUT and its summary were made from these inputs and "
        "options (same content hashes); what `make pcxmi` uses",
    )
    progress: bool = progress_option()

    def __post_init__(self) -> None:
        check_required(self)
        check_log_base(self.log_base)
        check_batching(self.batch_size, self.max_tokens)
        check_number("--seed", self.seed, minimum=0, integer=True)  # numpy's generators take no negative seed
        parse_shard(self.shard)
        if self.model.source_context_size == 0 and self.model.target_context_size == 0:
            raise no_context_error(self.model.path, None)


def cxmi_run_fingerprint(options: CxmiOptions) -> Dict:
    """Everything the records depend on, by content: a partial run resumes, and shards merge,
    only when these agree. Computed without loading the model."""
    shard_i, shard_n = parse_shard(options.shard)
    return {
        "source": file_sha256(options.source),
        "reference": file_sha256(options.reference),
        "docids": file_sha256(options.docids),
        **model_fingerprint(options.model),
        "log_base": options.log_base,
        "random_context": options.random_context,
        "seed": options.seed if options.random_context else None,  # the seed only draws the random context
        "shard": f"{shard_i}/{shard_n}",
    }


def read_cxmi_inputs(options: CxmiOptions) -> Tuple[List[str], List[str], List[str]]:
    """Sources, references and docids, checked against each other."""
    sources, references, ids = read_scored_corpus(options.source, options.reference, options.docids)
    if options.random_context:
        check_random_context(ids, options.docids)
    return sources, references, ids


def run_cxmi(options: CxmiOptions) -> Dict:
    """File-level entry point of ``contextual-mt cxmi``; returns the summary. The records and
    the summary appear together at the end (nothing on failure)."""
    with outputs(options.output, summary_path(options.output)):
        summary = _run_cxmi(options)
    remove_partial(options.output)
    return summary


def up_to_date(options: CxmiOptions, fp: Dict) -> Optional[Dict]:
    """The existing summary when OUTPUT and its summary were made from exactly these inputs and
    options (same fingerprint, same number of records); else None."""
    return SummaryRecord(options.output, summary_path(options.output), "sentences").current(fp)


def _run_cxmi(options: CxmiOptions) -> Dict:
    sources, references, ids = read_cxmi_inputs(options)
    mine = shard_lines(ids, options.shard, options.docids)
    partial = partial_path(options.output)
    fp = cxmi_run_fingerprint(options)  # before the model is loaded: a stale partial fails fast
    if options.skip_up_to_date:
        summary = up_to_date(options, fp)
        if summary is not None:
            logger.warning("%s: up to date (made from these inputs and options); nothing to do", options.output)
            return summary
    done = resumable_records(partial, fp, (i + 1 for i in mine)) if options.resume else []
    finished = {r["line"] - 1 for r in done}
    todo = [i for i in mine if i not in finished]
    if done:
        logger.warning("%s: resuming, %d of %d sentences already scored", partial, len(finished), len(mine))
    scorer = PCXMIScorer.from_checkpoint(options.model, batch_size=options.batch_size, max_tokens=options.max_tokens)
    writer, new = PartialFile(partial, fp, done), []
    try:
        for records in scorer.score(
            sources,
            references,
            ids,
            todo,
            options.random_context,
            options.seed,
            options.log_base,
            options.progress,
            names=(options.source, options.reference, options.docids),
        ):
            writer.write(records)
            new.extend(records)
    finally:
        writer.close()
    records = sorted(done + new, key=lambda r: r["line"])
    summary = summarize(
        records,
        options.log_base,
        {
            **model_summary(options.model),
            "source_context_size": scorer.n_src,
            "target_context_size": scorer.n_tgt,
            "random_context": options.random_context,
            "seed": options.seed,
            "shard": fp["shard"],
            "records": options.output,
            "fingerprint": fp,
        },
    )
    write_records(options.output, records, summary)
    return summary
