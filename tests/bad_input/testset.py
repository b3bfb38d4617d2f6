"""Bad-input cases: contextual-mt testset build and evaluate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

from tests.bad_input.attribute import attribute_command
from tests.bad_input.core import (
    EMPTY,
    FORMAT,
    LINES,
    MISMATCH,
    MODEL,
    NOT_GIVEN,
    Ctx,
    Fragment,
    add,
    at_line,
    blank_line,
    do,
    drop_last,
    edited,
    lines_of,
    opt,
    option_cases,
    output_cases,
)
from tests.bad_input.muda_tag import tag_command
from tests.bad_input.score import documents_hyp
from tests.bad_input.translate import translate_command


# ---- testset build / evaluate (the probe, issue 38)
def testset_build_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = [
        "testset",
        "build",
        "--source",
        w.d_src,
        "--reference",
        w.d_ref,
        "--docids",
        w.d_ids,
        "--lang",
        "fr",
        "--tags",
        w.d_tags,
        "--output-dir",
        c.o("suite"),
    ]
    c.absent = [c.o("suite")]


output_cases("testset-build", testset_build_command, "--output-dir", "suite", directory_output=True)
add(
    "testset-build-phenomena-without-groups",
    testset_build_command,
    opt("--phenomena", "verb_form", "reference.tags.json", "no test group", "verb_form", "nothing written", EMPTY),
)


def earlier_build_that_tagged_there(c: Ctx) -> List[Fragment]:
    """--output-dir holds an earlier build made without --tags (its reference tags beside its
    suites): this build, from other tags, would leave them passing for its own."""
    folder = c.out / "suite"
    folder.mkdir()
    earlier = {"language": "fr", "tags": str(folder / "reference.tags.json"), "groups": 1}
    (folder / "summary.json").write_text(json.dumps(earlier) + "\n")
    for name in ("reference.tags.json", "reference.tags.summary.json", "reference.tags.tgt.conllu"):
        (folder / name).write_text("earlier\n")
    c.absent = []
    return ["--output-dir", "reference.tags.json", "earlier build", "--overwrite", MISMATCH]


add(
    "testset-build-output-dir-of-an-earlier-build-with-its-tags", testset_build_command, earlier_build_that_tagged_there
)


def testset_evaluate_command(c: Ctx) -> None:
    """The demo's test suites, built here (in/suite), and a system's translations of them."""
    from contextual_mt.testsets.build import BuildOptions, run_build

    w = c.w
    suite = c.inp / "suite"
    run_build(BuildOptions(w.d_src, w.d_ref, w.d_ids, w.d_tags, str(suite), "fr"))
    c.command = "contextual-mt"
    c.argv = [
        "testset",
        "evaluate",
        "--manifest",
        str(suite / "manifest.jsonl"),
        "--hyp",
        w.sys_a,
        "--docids",
        w.d_ids,
        "--output",
        c.o("eval.json"),
        "--bootstrap",
        "100",
    ]
    c.absent = [c.o("eval.json")]


def docids_of_one_document(c: Ctx) -> List[Fragment]:
    """Document ids that disagree with the manifest's (all one document): the intervals were
    zero-wide and every p 0.000, with exit 0."""
    c.set("--docids", c.write_lines("one_doc.docids", ["d1"] * len(lines_of(c.w.d_ids))))
    return ["one_doc.docids", "document", "manifest", MISMATCH]


def manifest_phenomenon(c: Ctx) -> List[Fragment]:
    manifest = Path(c.value("--manifest"))
    rows = manifest.read_text(encoding="utf-8").splitlines()
    first = json.loads(rows[0])
    first["phenomenon"] = "sarcasm"
    rows[0] = json.dumps(first, ensure_ascii=False)
    manifest.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return ["manifest.jsonl:1", "sarcasm", "phenomenon", FORMAT]


add("testset-evaluate-docids-of-one-document", testset_evaluate_command, docids_of_one_document)
add("testset-evaluate-manifest-unknown-phenomenon", testset_evaluate_command, manifest_phenomenon)
add(
    "testset-evaluate-hyp-documents-without-pivot",
    testset_evaluate_command,
    lambda c: [documents_hyp(c), "docs.jsonl", "--pivot", NOT_GIVEN][1:],
)
add(
    "testset-evaluate-hyp-documents-without-docids",
    testset_evaluate_command,
    lambda c: [documents_hyp(c), c.set("--pivot", c.w.d_ref), c.drop("--docids"), "docs.jsonl", "--docids", NOT_GIVEN][
        3:
    ],
)
add(
    "testset-evaluate-pivot-fewer-lines",
    testset_evaluate_command,
    lambda c: [documents_hyp(c), edited(c, "--pivot", "short_pivot.fr", drop_last, start=c.w.d_ref), "--pivot", LINES][
        1:
    ],
)
add(  # json's message ends in "starting at", its position apart: never "starting at at line 2"
    "testset-evaluate-summary-with-an-unterminated-string",
    testset_evaluate_command,
    opt(
        "--summary",
        lambda c: c.write("cut.summary.json", '{\n  "language": "fr'),
        "cut.summary.json",
        "unterminated string starting at line 2, column 15",
        FORMAT,
    ),
)
option_cases("testset-evaluate", testset_evaluate_command, [("--band", "0")])
add(
    "testset-evaluate-segmenter-not-installed",
    testset_evaluate_command,
    lambda c: [
        documents_hyp(c),
        c.set("--pivot", c.w.d_ref),
        c.set("--segmenter", "xx_nothere_sm"),
        "xx_nothere_sm",
        "spacy download",
        MODEL,
    ][3:],
)
add(
    "attribute-hypotheses-blank-line",
    attribute_command,  # a guard: it says "hypothesis", not "reference"
    lambda c: [
        c.drop("--reference"),
        edited(c, "--hypotheses", "blank_hyp.fr", blank_line(3), start=c.w.ref),
        at_line("blank_hyp.fr", 3),
        "hypothesis",
        EMPTY,
    ][1:],
)

# ---- an empty value given to an input's option: one line naming the option
add("attribute-source-empty-path", attribute_command, opt("--source", "", "--source", "empty value", NOT_GIVEN))
add(
    "translate-path-empty-with-hf-model",
    translate_command,
    do(
        lambda c: (c.set("--path", ""), c.set("--hf-model", "Helsinki-NLP/opus-mt-en-fr")),
        "--path",
        "empty value",
        NOT_GIVEN,
    ),
)
add("tag-tgt-lang-empty", tag_command, opt("--tgt-lang", "", "--tgt-lang", "empty value", NOT_GIVEN))
