"""The corpus that ``cxmi`` and ``attribute`` score, read and checked once for both: sources, the
targets to score (references or hypotheses) and docids, line-aligned; and ``--shard i/n``, which
sentences a shard scores (whole documents)."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from commandkit.documents import check_line_count, document_spans, read_docids
from commandkit.text import read_lines
from contextual_mt.errors import Code, InputError


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
