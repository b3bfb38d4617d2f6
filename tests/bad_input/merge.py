"""Bad-input cases: contextual-mt cxmi-merge."""

from __future__ import annotations

from pathlib import Path

from tests.bad_input.core import (
    DIRECTORY,
    EMPTY,
    FORMAT,
    LINES,
    MISMATCH,
    NOT_FOUND,
    UTF8,
    Ctx,
    add,
    do,
    lines_of,
    output_cases,
)
from tests.bad_input.cxmi import preexisting


def merge_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = ["cxmi-merge", w.s0, w.s1, "--output", c.o("all.jsonl")]
    c.absent = [c.o("all.jsonl"), c.o("all.summary.json")]


def copy_shard(c, shard, name, records=None, summary=None, with_summary=True):
    """Shard ``shard`` (a path) copied into in/ as ``name``.jsonl; its records and summary
    replaced when given (records as text)."""
    text = Path(shard).read_text(encoding="utf-8") if records is None else records
    path = c.write(f"{name}.jsonl", text)
    if with_summary:
        meta = Path(shard[:-6] + ".summary.json").read_text() if summary is None else summary
        c.write(f"{name}.summary.json", meta)
    return path


def shards(c, *paths):
    c.argv = ["cxmi-merge", *paths, "--output", c.o("all.jsonl")]


add(
    "merge-one-shard-of-two",
    merge_command,
    do(lambda c: shards(c, c.w.s0), "shard", ("missing", "1/2", "of 2", "incomplete", "2 shards", "only"), MISMATCH),
)
add(
    "merge-same-shard-twice",
    merge_command,
    do(
        lambda c: shards(c, c.w.s0, c.w.s0),
        "s0.jsonl",
        ("twice", "two", "duplicate", "same", "again", "more than once", "already"),
        MISMATCH,
    ),
)
add(
    "merge-shards-of-different-checkpoints",
    merge_command,
    do(lambda c: shards(c, c.w.s0, c.w.s1_ck1), "s1_ck1", "checkpoint", MISMATCH),
)
add(
    "merge-shards-of-different-context-sizes",
    merge_command,
    do(lambda c: shards(c, c.w.s0, c.w.s1_ctx1), "s1_ctx1", "context", MISMATCH),
)
add(
    "merge-shards-of-different-log-bases",
    merge_command,
    do(lambda c: shards(c, c.w.s0, c.w.s1_bits), "s1_bits", ("log base", "log-base", "unit", "bits", "nats"), MISMATCH),
)


add(
    "merge-shards-of-real-and-random-context",
    merge_command,
    do(lambda c: shards(c, c.w.s0, c.w.s1_random), "s1_random", "random", MISMATCH),
)
add(
    "merge-shard-not-json",
    merge_command,
    do(
        lambda c: shards(c, c.w.s0, copy_shard(c, c.w.s1, "garbage", records="this is not json\n")),
        "garbage.jsonl",
        ("json", "record"),
        FORMAT,
    ),
)
add(
    "merge-shard-without-summary",
    merge_command,
    do(
        lambda c: shards(c, c.w.s0, copy_shard(c, c.w.s1, "lonely", with_summary=False)), "lonely", "summary", NOT_FOUND
    ),
)
add(
    "merge-shard-summary-not-json",
    merge_command,
    do(lambda c: shards(c, c.w.s0, copy_shard(c, c.w.s1, "badsum", summary="{not json")), "badsum", "json", FORMAT),
)
add(
    "merge-shard-missing",
    merge_command,
    do(lambda c: shards(c, c.w.s0, c.missing("nothere.jsonl")), "nothere", NOT_FOUND),
)


def shard_dir(c):
    d = c.mkdir("dirshard.jsonl")
    c.write("dirshard.summary.json", Path(c.w.s1[:-6] + ".summary.json").read_text())
    shards(c, c.w.s0, d)
    return ["dirshard", DIRECTORY]


add("merge-shard-directory", merge_command, shard_dir)
add(
    "merge-shard-empty",
    merge_command,
    do(
        lambda c: shards(c, c.w.s0, copy_shard(c, c.w.s1, "emptyshard", records="")),
        "emptyshard",
        ("empty", "records", "sentences", "lines", "summary"),
        EMPTY,
    ),
)
add(
    "merge-shard-truncated",
    merge_command,
    do(
        lambda c: shards(
            c, c.w.s0, copy_shard(c, c.w.s1, "truncated", records="".join(x + "\n" for x in lines_of(c.w.s1)[:-1]))
        ),
        "truncated",
        ("records", "sentences", "lines", "summary", "incomplete", "missing"),
        LINES,
    ),
)


def shard_latin1(c):
    path = copy_shard(c, c.w.s1, "latin1shard")
    data = Path(path).read_bytes().replace(b'"reference": "', b'"reference": "caf\xe9 ', 1)
    Path(path).write_bytes(data)
    shards(c, c.w.s0, path)
    return ["latin1shard", UTF8]


add("merge-shard-latin1", merge_command, shard_latin1)
output_cases("merge", merge_command, "--output", "all.jsonl")
add(
    "merge-summary-path-is-a-directory",
    merge_command,
    do(lambda c: preexisting(c, "all.summary.json"), "all.summary.json", DIRECTORY),
)
