"""Bad-input cases: contextual-mt report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, List

from tests.bad_input.core import (
    CONFLICT,
    DIRECTORY,
    EMPTY,
    FORMAT,
    LINES,
    MISMATCH,
    MODEL_MISSING,
    NOT_FOUND,
    UTF8,
    Ctx,
    Fragment,
    add,
    at_line,
    do,
    edited,
    lines_of,
    opt,
    option_cases,
    output_cases,
)


def report_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = ["report", w.pcxmi, "--output-dir", c.o("report")]
    c.absent = [c.o("report")]


def pcxmi_file(c, name, content):
    path = c.write(name, content)
    c.argv[1] = path
    return name


add(
    "report-pcxmi-missing",
    report_command,
    do(lambda c: c.argv.__setitem__(1, c.missing("nothere.jsonl")), "nothere.jsonl", NOT_FOUND),
)
add(
    "report-pcxmi-directory",
    report_command,
    do(lambda c: c.argv.__setitem__(1, c.mkdir("dir.jsonl")), "dir.jsonl", DIRECTORY),
)
add("report-pcxmi-empty", report_command, lambda c: [pcxmi_file(c, "empty.jsonl", ""), EMPTY])
add(
    "report-pcxmi-latin1",
    report_command,
    lambda c: [
        pcxmi_file(
            c, "latin1.jsonl", Path(c.w.pcxmi).read_bytes().replace(b'"reference": "', b'"reference": "caf\xe9 ', 1)
        ),
        UTF8,
    ],
)
add(
    "report-pcxmi-not-json",
    report_command,
    lambda c: [
        pcxmi_file(c, "garbage.jsonl", lines_of(c.w.pcxmi)[0] + "\nnot json at all\n"),
        at_line("garbage.jsonl", 2),
        FORMAT,
    ],
)
add(
    "report-pcxmi-not-pcxmi-records",
    report_command,
    lambda c: [pcxmi_file(c, "other.jsonl", '{"a": 1}\n{"b": 2}\n'), ("record", "p-cxmi", "pcxmi"), FORMAT],
)


def pcxmi_records_edited(name: str, edit: Callable[[List[str]], List[str]]):
    def mutate(c: Ctx) -> List[Fragment]:
        lines = Path(c.w.pcxmi).read_text(encoding="utf-8").splitlines()
        return [f"{pcxmi_file(c, name, ''.join(x + chr(10) for x in edit(lines)))}:"]

    return mutate


def nan_value(lines: List[str]) -> List[str]:
    r = json.loads(lines[1])
    r["token_pcxmi"][0] = float("nan")
    return [lines[0], json.dumps(r), *lines[2:]]


add(
    "report-pcxmi-duplicated-record",
    report_command,
    lambda c: [*pcxmi_records_edited("dup.jsonl", lambda ls: [*ls, ls[0]])(c), "again", FORMAT],
)
add(
    "report-pcxmi-nan-value",
    report_command,
    lambda c: [*pcxmi_records_edited("nan.jsonl", nan_value)(c), "finite", FORMAT],
)
add(
    "report-conllu-missing",
    report_command,
    opt("--conllu", lambda c: c.missing("nothere.conllu"), "nothere.conllu", NOT_FOUND),
)


def report_conllu(c, name, edit):
    c.set("--conllu", c.w.ref_conllu)
    return edited(c, "--conllu", name, edit)


def change_form(sentence: int, new: str = "Zzz"):
    def edit(lines):
        out, k = [], 0
        for line in lines:
            if line.startswith("# sent_id"):
                k += 1
            cols = line.split("\t")
            if k == sentence and len(cols) == 10 and cols[0] == "1":
                cols[1] = new
                line = "\t".join(cols)
            out.append(line)
        return out

    return edit


def drop_last_sentence(lines):
    blocks, block = [], []
    for line in lines:
        if line.strip():
            block.append(line)
        elif block:
            blocks.append(block)
            block = []
    if block:
        blocks.append(block)
    return [line for b in blocks[:-1] for line in [*b, ""]]


def nine_columns(lines):
    lines = list(lines)
    k = next(i for i, line in enumerate(lines) if line.count("\t") == 9)
    lines[k] = "\t".join(lines[k].split("\t")[:9])
    return lines


add(
    "report-conllu-does-not-match",
    report_command,
    lambda c: [
        report_conllu(c, "mismatch.conllu", change_form(3)),
        ("match", "differ"),
        ("line 3", "sentence 3", ":3"),
        MISMATCH,
    ],
)
add(
    "report-conllu-fewer-sentences",
    report_command,
    lambda c: [report_conllu(c, "fewer.conllu", drop_last_sentence), LINES.also("no annotation")],
)
add(
    "report-conllu-malformed",
    report_command,
    lambda c: [report_conllu(c, "malformed.conllu", nine_columns), at_line("malformed.conllu", 3), FORMAT],
)
add(
    "report-conllu-latin1",
    report_command,
    opt(
        "--conllu",
        lambda c: c.latin1("latin1.conllu", c.w.ref_conllu, 3),
        "latin1.conllu",
        UTF8,
        at_line("latin1.conllu", 3),
    ),
)
add(
    "report-conllu-with-stanza-lang",
    report_command,
    do(
        lambda c: (c.set("--conllu", c.w.ref_conllu), c.set("--stanza-lang", "fr")),
        "--conllu",
        "--stanza-lang",
        CONFLICT,
    ),
)
add(
    "report-stanza-model-missing",
    report_command,
    do(
        lambda c: (c.set("--stanza-lang", "fr"), c.set("--stanza-dir", c.mkdir("no_stanza"))),
        "stanza",
        MODEL_MISSING,
    ),
)
add(
    "report-tags-of-another-reference",
    report_command,
    opt("--tags", lambda c: c.w.d_tags, "reference.tags.json", ("match", "reference", "differ", "another"), MISMATCH),
)
add(
    "report-tags-not-json",
    report_command,
    opt("--tags", lambda c: c.write("garbage.tags.json", "[[[{"), "garbage.tags.json", "json", FORMAT),
)
add(
    "report-tags-wrong-layout",
    report_command,
    opt(
        "--tags",
        lambda c: c.write("layout.tags.json", '{"documents": 3}'),
        "layout.tags.json",
        ("layout", "format", "token", "list"),
        FORMAT,
    ),
)
add(
    "report-tags-missing",
    report_command,
    opt("--tags", lambda c: c.missing("nothere.tags.json"), "nothere.tags.json", NOT_FOUND),
)
add(
    "report-tags-latin1",
    report_command,
    opt(
        "--tags",
        lambda c: c.write(
            "latin1.tags.json", Path(c.w.ref_tags).read_bytes().replace(b'"token": "', b'"token": "caf\xe9', 1)
        ),
        "latin1.tags.json",
        UTF8,
    ),
)
option_cases("report", report_command, [("--top", "-1"), ("--min-count", "0"), ("--min-count", "-2")])
output_cases("report", report_command, "--output-dir", "report", directory_output=True)
