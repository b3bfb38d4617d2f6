"""The corpus that ``cxmi`` and ``attribute`` score, read and checked once for both: sources, the
targets to score (references or hypotheses) and docids, line-aligned; ``--shard i/n``, which
sentences a shard scores (whole documents); and what both share around their scores: the log
base, the error for a model given no context, the records written with their summary beside."""

from __future__ import annotations

import json
import math
from typing import Dict, List, Optional, Sequence, Tuple

from commandkit.documents import check_line_count, document_spans, read_docids
from commandkit.outputs import atomic_write_lines, atomic_write_text
from commandkit.text import read_lines
from contextual_mt.errors import Code, InputError

LOG_BASES = {"e": 1.0, "2": math.log(2)}
UNITS = {"e": "nats", "2": "bits"}


def check_references(references: Sequence[str], name: str = "reference", what: str = "reference") -> None:
    """A blank reference (or hypothesis) would be scored as a lone </s> and counted in the results;
    a blank source, as the translation of nothing (contrastive refuses an empty source too)."""
    for lineno, line in enumerate(references, start=1):
        if not line.strip():
            raise InputError(
                f"{name}:{lineno}: empty {what} line; every sentence needs a {what} to "
                "score (remove the line from all input files)",
                code=Code.EMPTY,
            )


def read_scored_corpus(
    source: str, target: str, docids: str, what: str = "reference"
) -> Tuple[List[str], List[str], List[str]]:
    """Sources, the targets to score (references or hypotheses) and docids, checked against each
    other: what cxmi and attribute read."""
    sources, targets = read_lines(source), read_lines(target)
    if len(sources) != len(targets):
        raise InputError(f"{target}: has {len(targets)} lines but {source} has {len(sources)}", code=Code.LINE_COUNT)
    ids = read_docids(docids)
    check_line_count(ids, docids, len(sources), source)
    check_references(sources, source, "source")
    check_references(targets, target, what)
    return sources, targets, ids


def parse_shard(shard: Optional[str]) -> Tuple[int, int]:
    """``"i/n"`` as ``(i, n)``; no shard is ``(0, 1)``."""
    if shard is None:
        return 0, 1
    try:
        i, n = (int(x) for x in str(shard).split("/"))
    except ValueError:
        raise InputError(f"--shard must look like 'i/n' (got {shard!r})", code=Code.OPTION_VALUE) from None
    if not (n >= 1 and 0 <= i < n):
        raise InputError(f"--shard {shard}: need 0 <= i < n", code=Code.OPTION_VALUE)
    return i, n


def shard_lines(ids: Sequence[str], shard: Optional[str], docids_name: str = "docids") -> List[int]:
    """The 0-based sentences of the shard: whole documents, in n parts of about equal count."""
    shard_i, shard_n = parse_shard(shard)
    spans = document_spans(ids)
    if shard_n > len(spans):
        raise InputError(
            f"--shard {shard}: {docids_name} has only {len(spans)} documents, fewer than {shard_n} shards",
            code=Code.OPTION_VALUE,
        )
    return [i for d, (a, b) in enumerate(spans) if d * shard_n // len(spans) == shard_i for i in range(a, b)]


def check_log_base(log_base: str) -> None:
    if log_base not in LOG_BASES:
        raise InputError(f"--log-base must be 'e' or '2' (got {log_base!r})", code=Code.OPTION_VALUE)


NO_CONTEXT = {  # what a model given no context makes of each command's measure
    "cxmi": "its CXMI is 0 by construction; CXMI needs context",
    "attribute": "no token can depend on context and there is none to attribute to; attribution needs context",
}


def no_context_error(name: str, trained: Optional[Dict], command: str = "cxmi") -> InputError:
    if trained is not None and not trained["source_context_size"] and not trained["target_context_size"]:
        why = f"{name} was trained without context (source and target context size 0)"
    else:
        why = "context sizes 0/0 (source/target) give the model no context"
    return InputError(
        f"{why}, so {NO_CONTEXT[command]}: a model trained with context and "
        "--sample-context-size (e.g. --target-context-size 3 --sample-context-size), and "
        "context sizes > 0",
        code=Code.MODEL,
    )


def summary_path(output: str) -> str:
    return (output[:-6] if output.endswith(".jsonl") else output) + ".summary.json"


def write_records(output: str, records: Sequence[Dict], summary: Dict) -> None:
    """The records (one JSON line each) and the summary, each written atomically."""
    atomic_write_lines(output, [json.dumps(r, ensure_ascii=False) for r in records])
    atomic_write_text(summary_path(output), json.dumps(summary, indent=2) + "\n")
