"""Bad-input cases: contextual-mt align."""

from __future__ import annotations

import json

from tests.bad_input.core import (
    CONFLICT,
    FORMAT,
    IS_INPUT,
    LINES,
    MODEL,
    NOT_GIVEN,
    Ctx,
    Fragment,
    add,
    at_line,
    do,
    documents_jsonl,
    drop_last,
    edited,
    file_cases,
    lines_of,
    opt,
    option_cases,
    output_cases,
    renamed_second,
)
from tests.bad_input.score import documents_hyp, score_command
from tests.bad_input.testset import testset_evaluate_command


def align_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = ["align", "--hyp-documents", documents_jsonl(c), "--docids", w.ids, "--pivot", w.hyp]
    c.argv += ["--output", c.o("aligned.fr"), "--alignment", c.o("alignment.jsonl")]
    c.absent = [c.o("aligned.fr"), c.o("alignment.jsonl")]


file_cases("align", align_command, "--hyp-documents", lambda w: w.ref, kinds=("missing", "dir", "latin1"))
file_cases("align", align_command, "--pivot", lambda w: w.hyp, kinds=("missing", "dir", "latin1"))


def _documents_edited(name: str, edit, *fragments: Fragment):
    """A mutation: --hyp-documents replaced by the JSONL records edited by ``edit``."""
    return do(lambda c: c.set("--hyp-documents", documents_jsonl(c, name, edit)), *fragments)


for _cid, _name, _edit, _fragments in (
    ("not-in-docids", "renamed.jsonl", renamed_second, (at_line("renamed.jsonl", 2), "no-such-document")),
    ("missing", "fewer.jsonl", lambda r: r[:-1], ("fewer.jsonl", "no record")),
):
    add(f"align-document-{_cid}", align_command, _documents_edited(_name, _edit, *_fragments))
add(
    "align-output-unknown-format",
    align_command,
    lambda c: [edited(c, "--hyp-documents", "odd.txt", drop_last, start=c.w.ref), "odd.txt", "unknown format", LINES],
)
add(
    "align-output-line-aligned",
    align_command,
    do(lambda c: c.set("--hyp-documents", c.w.hyp), "line-aligned", FORMAT),
)
add("align-without-pivot", align_command, do(lambda c: c.drop("--pivot"), "--pivot", NOT_GIVEN))
add("align-pivot-fewer-lines", align_command, lambda c: [edited(c, "--pivot", "short.fr", drop_last), LINES])
add(
    "align-segmenter-not-installed",
    align_command,
    opt("--segmenter", "xx_no_such_pipeline", "xx_no_such_pipeline", "spacy download", MODEL),
)
add(  # a folder is no package name: never "spacy download /the/folder" (issue 50 item 4)
    "align-segmenter-folder-without-a-pipeline",
    align_command,
    opt("--segmenter", lambda c: c.mkdir("pipeline"), "pipeline", "does not hold a spaCy pipeline", MODEL),
)
add("align-pivot-none-without-source", align_command, opt("--pivot", "none", "--pivot none", "--source", NOT_GIVEN))
add(
    "align-pivot-none-without-lexical-train",
    align_command,
    do(lambda c: (c.set("--pivot", "none"), c.set("--source", c.w.src)), "--lexical-train", NOT_GIVEN),
)
add(
    "align-lexical-train-without-pivot-none",
    align_command,
    do(lambda c: c.set("--lexical-train", c.w.src, c.w.ref), "--lexical-train", "--pivot none", CONFLICT),
)
add(
    "align-lexical-train-not-parallel",
    align_command,
    lambda c: [
        c.set("--pivot", "none"),
        c.set("--source", c.w.src),
        c.set("--lexical-train", c.w.src, c.write_lines("short_train.fr", lines_of(c.w.ref)[:-1])),
        "short_train.fr",
        "not a parallel corpus",
    ][3:],
)
add(
    "score-pivot-none",
    score_command,
    lambda c: [documents_hyp(c), c.set("--pivot", "none"), "--pivot none", "contextual-mt align"][2:],
)
option_cases("align", align_command, [("--band", "0")])
output_cases("align", align_command, "--output", "aligned.fr")
add(
    "align-output-and-alignment-the-same-file",
    align_command,
    opt("--alignment", lambda c: c.o("aligned.fr"), "aligned.fr", "same file", IS_INPUT),
)
add(
    "score-output-and-alignment-output-the-same-file",
    score_command,
    lambda c: [documents_hyp(c), c.set("--alignment-output", c.o("scores.json")), "scores.json", "same file"][2:],
)
output_cases("align", align_command, "--alignment", "alignment.jsonl")


def _one_record_per_line(c: Ctx, ids: str, texts: str) -> str:
    """JSONL document records, one per line of ``texts``: as many lines as a line-aligned output."""
    records = [{"doc": d, "text": t} for d, t in zip(lines_of(ids), lines_of(texts), strict=True)]
    return c.write_lines("records.jsonl", [json.dumps(r, ensure_ascii=False) for r in records])


add(
    "score-jsonl-as-many-records-as-lines-without-docids",
    score_command,
    do(
        lambda c: (c.drop("--docids"), c.set("--hyp", _one_record_per_line(c, c.w.ids, c.w.ref))),
        "records.jsonl",
        "--docids",
        NOT_GIVEN,
    ),
)
add(
    "testset-evaluate-jsonl-as-many-records-as-lines-without-docids",
    testset_evaluate_command,
    do(
        lambda c: (c.drop("--docids"), c.set("--hyp", _one_record_per_line(c, c.w.d_ids, c.w.d_ref))),
        "records.jsonl",
        "--docids",
        NOT_GIVEN,
    ),
)
add(
    "align-pivot-jsonl",
    align_command,
    do(lambda c: c.set("--pivot", documents_jsonl(c, "pivot.jsonl")), "pivot.jsonl", "JSONL", FORMAT),
)
add(
    "score-pivot-jsonl",
    score_command,
    do(
        lambda c: (
            c.set("--hyp", documents_jsonl(c, "docs.jsonl")),
            c.set("--pivot", _one_record_per_line(c, c.w.ids, c.w.ref)),
        ),
        "records.jsonl",
        "JSONL",
        FORMAT,
    ),
)
