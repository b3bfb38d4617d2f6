"""``cxmi-merge``: merging the outputs of ``--shard i/n`` runs into one file and one summary (only
all the parts of one computation; which sentences a shard scores is ``contextual_mt.scored_corpus``'s)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Sequence

from commandkit.options import check_required, option
from commandkit.outputs import outputs
from commandkit.text import check_input_file
from contextual_mt.analysis.cxmi_summary import read_summary, summarize, summary_path, write_records
from contextual_mt.analysis.join import read_pcxmi
from contextual_mt.errors import Code, ContextualMTError
from contextual_mt.scored_corpus import parse_shard
from contextual_mt.stage_record import differences


@dataclass
class CxmiMergeOptions:
    """``contextual-mt cxmi-merge``: the outputs of ``cxmi --shard i/n`` runs, joined into one
    file and one summary."""

    shards: List[str] = option(positional=True, nargs="+", default=[], help="JSONL outputs of the shards")
    output: str = option(required=True)

    def __post_init__(self) -> None:
        check_required(self)
        if isinstance(self.shards, str) or not self.shards:
            raise ContextualMTError(
                f"give the shards to merge: the JSONL files 'cxmi --shard i/n' wrote (got {self.shards!r})",
                code=Code.OPTION_MISSING,
            )
        self.shards = list(self.shards)


def _shard_summary(path: str) -> Dict:
    if not os.path.exists(path):  # the records first: a summary without them is no shard either
        raise ContextualMTError(
            f"{path}: does not exist (no such shard file: give the JSONL that 'cxmi --shard i/n' wrote)",
            code=Code.NOT_FOUND,
        )
    check_input_file(path, "shard (the JSONL of 'cxmi --shard i/n')")
    meta_path = summary_path(path)
    if not os.path.exists(meta_path):
        raise ContextualMTError(f"{meta_path}: summary missing; is {path} a finished shard?", code=Code.NOT_FOUND)
    meta = read_summary(meta_path)
    if not isinstance(meta.get("fingerprint"), dict) or not isinstance(meta.get("sentences"), int):
        raise ContextualMTError(
            f"{meta_path}: has no fingerprint (written by an older version); score that shard again",
            code=Code.FORMAT,
        )
    return meta


def check_shards(shards: Sequence[str], metas: Sequence[Dict]) -> None:
    """Shards merge only if they are parts of one computation (same fingerprint but for the
    shard) and are all its parts 0..n-1, once each."""
    first, first_path = metas[0]["fingerprint"], summary_path(shards[0])
    for path, meta in zip(shards[1:], metas[1:], strict=True):
        differ = differences(first, meta["fingerprint"], ("there", "here"), ignore=("shard",))
        if differ:
            raise ContextualMTError(
                f"{summary_path(path)}: not a shard of the same computation as {first_path} "
                f"(differs in: {', '.join(differ)})",
                code=Code.MISMATCH,
            )
    parts: Dict[int, str] = {}
    n = None
    for path, meta in zip(shards, metas, strict=True):
        try:
            i, n_here = parse_shard(meta["fingerprint"].get("shard"))
        except ContextualMTError as e:
            raise ContextualMTError(f"{summary_path(path)}: bad shard ({e})", code=e.code) from None
        if n is not None and n_here != n:
            raise ContextualMTError(
                f"{summary_path(path)}: shard {i}/{n_here}, but {first_path} is one of {n} shards", code=Code.MISMATCH
            )
        n = n_here
        if i in parts:
            raise ContextualMTError(f"shard {i}/{n} given twice: {parts[i]} and {path}", code=Code.MISMATCH)
        parts[i] = path
    if n is None:
        raise ContextualMTError("no shards to merge", code=Code.OPTION_MISSING)
    missing = [f"{i}/{n}" for i in range(n) if i not in parts]
    if missing:
        raise ContextualMTError(f"shard(s) {', '.join(missing)} missing: merge all {n} shards", code=Code.MISMATCH)


def merge_shards(shards: Sequence[str], output: str) -> Dict:
    """Merge the JSONL outputs of ``--shard i/n`` runs into one file and one summary."""
    with outputs(output, summary_path(output)):
        return _merge_shards(shards, output)


def _merge_shards(shards: Sequence[str], output: str) -> Dict:
    metas = [_shard_summary(path) for path in shards]
    check_shards(shards, metas)
    records, seen = [], set()
    for path, meta in zip(shards, metas, strict=True):
        shard_records = read_pcxmi(path)
        if len(shard_records) != meta["sentences"]:
            raise ContextualMTError(
                f"{path}: has {len(shard_records)} records but {summary_path(path)} counts "
                f"{meta['sentences']}; the file is incomplete or not this shard's",
                code=Code.LINE_COUNT,
            )
        for lineno, r in enumerate(shard_records, start=1):
            if r["line"] in seen:
                raise ContextualMTError(
                    f"{path}:{lineno}: sentence {r['line']} appears in two shards", code=Code.MISMATCH
                )
            seen.add(r["line"])
            records.append(r)
    records.sort(key=lambda r: r["line"])
    first = metas[0]
    extra = {
        k: first.get(k)
        for k in (
            "checkpoint",
            "dtype",
            "hf_model",
            "hf_settings",
            "source_context_size",
            "target_context_size",
            "random_context",
            "seed",
        )
        if k in first
    }
    fp = {**first["fingerprint"], "shard": None}  # the merged whole
    log_base = fp.get("log_base", first.get("log_base", "e"))
    summary = summarize(records, log_base, {**extra, "fingerprint": fp, "merged_from": list(shards), "records": output})
    write_records(output, records, summary)
    return summary
