"""Bad-input cases: contextual-mt cxmi."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.bad_input.core import (
    DIRECTORY,
    EMPTY,
    LINES,
    MISMATCH,
    MODEL,
    MUST,
    NOT_FOUND,
    TOO_LONG,
    Ctx,
    add,
    add_line,
    at_line,
    blank_line,
    do,
    drop_last,
    edited,
    file_cases,
    lines_of,
    opt,
    option_cases,
    output_cases,
    overlong_line,
)


def cxmi_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = [
        "cxmi",
        "--path",
        w.ckpt,
        "--source",
        w.src,
        "--reference",
        w.ref,
        "--docids",
        w.ids,
        "--output",
        c.o("p.jsonl"),
        "--cpu",
        "--quiet",
    ]
    c.absent = [c.o("p.jsonl"), c.o("p.summary.json"), c.o("p.jsonl.partial")]


file_cases("cxmi", cxmi_command, "--source", lambda w: w.src, kinds=("missing", "dir", "latin1"), ext=".en")
file_cases("cxmi", cxmi_command, "--reference", lambda w: w.ref, ext=".fr")
file_cases("cxmi", cxmi_command, "--docids", lambda w: w.ids, kinds=("missing", "empty", "latin1"), ext=".docids")
add("cxmi-reference-fewer-lines", cxmi_command, lambda c: [edited(c, "--reference", "short.fr", drop_last), LINES])
add("cxmi-reference-more-lines", cxmi_command, lambda c: [edited(c, "--reference", "long.fr", add_line), LINES])
add("cxmi-docids-fewer-lines", cxmi_command, lambda c: [edited(c, "--docids", "short.docids", drop_last), LINES])
add(
    "cxmi-docids-blank-line",
    cxmi_command,
    lambda c: [edited(c, "--docids", "blank.docids", blank_line(2)), at_line("blank.docids", 2), EMPTY],
)
add(
    "cxmi-reference-blank-line",
    cxmi_command,
    lambda c: [edited(c, "--reference", "blank.fr", blank_line(3)), at_line("blank.fr", 3), EMPTY],
)
add(
    "cxmi-source-blank-line",
    cxmi_command,
    lambda c: [edited(c, "--source", "blank.en", blank_line(3)), at_line("blank.en", 3), "empty source", EMPTY],
)
add(
    "cxmi-source-overlong-line",
    cxmi_command,
    lambda c: [edited(c, "--source", "long_line.en", overlong_line(2, "cat")), at_line("long_line.en", 2), TOO_LONG],
)
add(
    "cxmi-path-missing",
    cxmi_command,
    opt("--path", lambda c: c.missing("nothere.pt"), ("nothere.pt", "--path"), NOT_FOUND),
)
add(
    "cxmi-path-text-file",
    cxmi_command,
    opt("--path", lambda c: c.write("notackpt.pt", "hello\n"), ("notackpt.pt", "--path"), "checkpoint", MODEL),
)
add(
    "cxmi-path-stock-translation-checkpoint",
    cxmi_command,
    opt(
        "--path", lambda c: c.w.ckpt_stock, ("stock_translation.pt", "--path"), ("document_translation", "task"), MODEL
    ),
)
add(
    "cxmi-path-sentence-level-checkpoint",
    cxmi_command,
    opt("--path", lambda c: c.w.ckpt_sent, ("sentence_level.pt", "--path"), "context", MODEL),
)
add(
    "cxmi-spm-not-a-model",
    cxmi_command,
    opt("--spm", lambda c: c.write("fake.model", "not a model\n"), ("fake.model", "--spm"), "sentencepiece", MODEL),
)
add(
    "cxmi-spm-other-dictionary",
    cxmi_command,
    opt("--spm", lambda c: c.w.other_spm, ("other_spm.model", "--spm"), ("dictionary", "match"), MISMATCH),
)
add("cxmi-data-without-dictionaries", cxmi_command, opt("--data", lambda c: c.mkdir("nodicts"), "dict", NOT_FOUND))
option_cases(
    "cxmi",
    cxmi_command,
    [("--batch-size", "0"), ("--batch-size", "-1"), ("--source-context-size", "-1"), ("--target-context-size", "-1")],
)
for shard, word in (
    ("3/2", "3of2"),
    ("2/2", "2of2"),
    ("x", "x"),
    ("1/0", "1of0"),
    ("1/2/3", "three-parts"),
    ("", "empty"),
):
    add(f"cxmi-shard-{word}", cxmi_command, opt("--shard", shard, "--shard", MUST.also("i/n")))
add("cxmi-shard-negative", cxmi_command, do(lambda c: c.argv.append("--shard=-1/2"), "--shard", MUST.also("i/n")))


def single_document(c):
    c.set("--docids", c.write_lines("one_doc.docids", ["d1"] * len(lines_of(c.w.src))))
    c.argv.append("--random-context")
    return ["--random-context", "document", EMPTY]


add("cxmi-random-context-single-document", cxmi_command, single_document)


def resume_from(c, records):
    partial = c.o("p.jsonl.partial")
    Path(partial).write_text("".join(json.dumps(r) + "\n" for r in records))
    c.unchanged = [partial]
    c.absent = [c.o("p.jsonl"), c.o("p.summary.json")]
    return ["--overwrite", MISMATCH]


add(
    "cxmi-resume-partial-of-finished-run-in-other-log-base",
    cxmi_command,
    lambda c: resume_from(c, [json.loads(x) for x in lines_of(c.w.pcxmi_bits)][:3]),
)


def resume_genuine(c, partial_key, lines=None):
    """OUTPUT.partial of an interrupted run on the large input (fixture ``mx_partials``); this
    run scores the large input (``lines`` None) or its first ``lines`` lines."""
    w = c.w
    for flag, key, ext in (
        ("--source", "big_src", "en"),
        ("--reference", "big_ref", "fr"),
        ("--docids", "big_ids", "docids"),
    ):
        path = getattr(w, key)
        if lines is not None:
            path = c.write_lines(f"prefix.{ext}", lines_of(path)[:lines])
        c.set(flag, path)
    partial = c.o("p.jsonl.partial")
    shutil.copy(getattr(w, partial_key), partial)
    c.unchanged = [partial]
    c.absent = [c.o("p.jsonl"), c.o("p.summary.json")]
    return ["--overwrite", MISMATCH]


add("cxmi-resume-interrupted-partial-of-other-log-base", cxmi_command, lambda c: resume_genuine(c, "partial_bits"))


def prefix_lines(c):
    """The first two documents of the large input."""
    ids = lines_of(c.w.big_ids)
    second = next(i for i, d in enumerate(ids) if d != ids[0])
    return next(i for i in range(second, len(ids)) if ids[i] != ids[second])


add(
    "cxmi-resume-interrupted-partial-of-larger-input",
    cxmi_command,
    lambda c: resume_genuine(c, "partial_nats", lines=prefix_lines(c)),
)


def preexisting(c, name, directory=True):
    """A secondary output path that already exists as a directory (or a file): it must stay."""
    p = c.out / name
    p.mkdir() if directory else p.write_text("a file\n")
    c.absent = [a for a in c.absent if a != str(p)]


add(
    "cxmi-summary-path-is-a-directory",
    cxmi_command,
    do(lambda c: preexisting(c, "p.summary.json"), "p.summary.json", DIRECTORY),
)
output_cases("cxmi", cxmi_command, "--output", "p.jsonl")
