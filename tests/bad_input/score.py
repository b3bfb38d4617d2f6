"""Bad-input cases: contextual-mt score."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

from tests.bad_input.core import (
    CONFLICT,
    EMPTY,
    LINES,
    MISMATCH,
    MODEL,
    MUST,
    NOT_FOUND,
    NOT_GIVEN,
    Ctx,
    Fragment,
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
)


def score_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = ["score", "--hyp", w.hyp, "--ref", w.ref, "--docids", w.ids, "--output", c.o("scores.json")]
    c.absent = [c.o("scores.json")]


file_cases("score", score_command, "--hyp", lambda w: w.hyp, ext=".fr")
file_cases("score", score_command, "--ref", lambda w: w.ref, kinds=("missing", "dir", "latin1"), ext=".fr")
file_cases("score", score_command, "--docids", lambda w: w.ids, ext=".docids")
file_cases("score", score_command, "--source", lambda w: w.src, kinds=("missing", "latin1"), ext=".en")


def score_both_empty(c):
    c.drop("--docids")
    c.set("--hyp", c.write("empty_hyp.fr", ""))
    c.set("--ref", c.write("empty_ref.fr", ""))
    return [("empty_hyp.fr", "empty_ref.fr"), ("empty", "no lines", "0 lines", "nothing"), EMPTY]


add("score-hyp-and-ref-empty", score_command, score_both_empty)
option_cases("score", score_command, [("--doc-comet-context", "0")])
add("score-hyp-fewer-lines", score_command, lambda c: [edited(c, "--hyp", "short.fr", drop_last), LINES])
add("score-hyp-more-lines", score_command, lambda c: [edited(c, "--hyp", "long.fr", add_line), LINES])
add("score-docids-fewer-lines", score_command, lambda c: [edited(c, "--docids", "short.docids", drop_last), LINES])
add(
    "score-docids-blank-line",
    score_command,
    lambda c: [edited(c, "--docids", "blank.docids", blank_line(2)), at_line("blank.docids", 2), EMPTY],
)
add(
    "score-source-fewer-lines",
    score_command,
    lambda c: [edited(c, "--source", "short.en", drop_last, start=c.w.src), LINES],
)
add(
    "score-comet-model-without-source",
    score_command,
    opt("--comet-model", "Unbabel/wmt22-comet-da", "--source", NOT_GIVEN),
)


def with_comet(model="Unbabel/wmt22-comet-da"):
    def action(c):
        c.set("--comet-model", model(c) if callable(model) else model)
        c.set("--source", c.w.src)

    return action


add(
    "score-comet-batch-size-0",
    score_command,
    do(lambda c: (with_comet()(c), c.set("--comet-batch-size", "0")), "--comet-batch-size", MUST),
)
add(
    "score-comet-batch-size-neg",
    score_command,
    do(lambda c: (with_comet()(c), c.set("--comet-batch-size", "-4")), "--comet-batch-size", MUST),
)
# a local COMET model that is not there fails before unbabel-comet is imported or the network tried
add(
    "score-comet-model-missing-path",
    score_command,
    do(with_comet(lambda c: c.missing("nothere.ckpt")), "nothere.ckpt", NOT_FOUND),
)
add(
    "score-comet-model-missing-folder",
    score_command,
    do(with_comet(lambda c: c.missing("models/nothere")), "nothere", NOT_FOUND),
)
add(
    "score-comet-model-folder-without-checkpoint",
    score_command,
    do(with_comet(lambda c: c.mkdir("empty_model")), "empty_model", "checkpoints/model.ckpt", MODEL),
)


def corrupt_comet_model(c: Ctx) -> str:
    """A COMET model folder whose checkpoint is not one (torch's error runs over several lines)."""
    c.write("bad_model/hparams.yaml", "class_identifier: regression_metric\n")
    c.write("bad_model/checkpoints/model.ckpt", b"PK\x03\x04 not a checkpoint" * 8)
    return str(c.inp / "bad_model")


add(
    "score-comet-model-corrupt-checkpoint",
    score_command,
    do(with_comet(corrupt_comet_model), "model.ckpt", ("cannot load", "checkpoint"), MODEL),
)


def truncated_comet_model(c: Ctx) -> str:
    """A COMET model folder whose checkpoint, a real torch archive, was cut short (a download or
    copy interrupted): torch says "[Errno 22] Invalid argument", which tells a user nothing."""
    import io

    import torch

    buffer = io.BytesIO()
    torch.save({"state_dict": {"w": torch.arange(4096.0)}, "hyper_parameters": {}}, buffer)
    c.write("cut_model/hparams.yaml", "class_identifier: regression_metric\n")
    c.write("cut_model/checkpoints/model.ckpt", buffer.getvalue()[: len(buffer.getvalue()) // 2])
    return str(c.inp / "cut_model")


add(
    "score-comet-model-checkpoint-cut-short",
    score_command,
    do(with_comet(truncated_comet_model), "model.ckpt", "damaged", "fetch the model again", MODEL),
)
output_cases("score", score_command, "--output", "scores.json")


# ---- a document-level --hyp (contextual_mt.system_outputs, docalign): checked before any model loads
def document_output(c: Ctx, name: str, lines_path: str, ids_path: str, jsonl: bool = True) -> str:
    """``lines_path`` joined per document of ``ids_path``: JSONL records, or one document per line."""
    from commandkit.documents import document_spans

    lines, ids = lines_of(lines_path), lines_of(ids_path)
    texts = [(ids[a], " ".join(lines[a:b])) for a, b in document_spans(ids)]
    rows = [json.dumps({"doc": d, "text": t}, ensure_ascii=False) if jsonl else t for d, t in texts]
    return c.write_lines(name, rows)


def documents_hyp(c: Ctx, name: str = "docs.jsonl", jsonl: bool = True) -> str:
    """--hyp: a document-level output of the command's own line-aligned --hyp."""
    flag = "--hyp"
    c.set(flag, document_output(c, name, c.value(flag), c.value("--docids"), jsonl))
    return name


add(
    "score-hyp-documents-without-docids",
    score_command,
    lambda c: [documents_hyp(c), c.drop("--docids"), "--docids"][::2],
)
add(
    "score-hyp-document-per-line-without-docids",
    score_command,
    lambda c: [documents_hyp(c, "docs.fr", jsonl=False), c.drop("--docids"), "--docids"][::2],
)


def unknown_document(c: Ctx) -> List[Fragment]:
    name = documents_hyp(c)
    path = Path(c.value("--hyp"))
    rows = path.read_text(encoding="utf-8").splitlines()
    rows[1] = json.dumps({"doc": "no such doc", "text": "Bonjour."})
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return [f"{name}:2", "no such doc", "not in", MISMATCH]


add("score-hyp-documents-unknown-document", score_command, unknown_document)
add(
    "score-comet-model-missing-checked-before-a-document-hyp-is-aligned",
    score_command,  # the hyp is wrong too: the option is the first thing checked
    lambda c: [
        documents_hyp(c, "docs.fr", jsonl=False),
        edited(c, "--hyp", "docs.fr", drop_last, start=c.value("--hyp")),
        with_comet(lambda c: c.missing("nothere.ckpt"))(c),
        "nothere.ckpt",
        NOT_FOUND,
    ][3:],
)


def json_objects(c: Ctx, flag: str, name: str) -> str:
    """``flag``'s line-aligned file as JSON objects, one per line, without "doc" (an API's
    records): a document-level output with bad records, never lines of text to score."""
    rows = [{"id": k, "translation": t} for k, t in enumerate(lines_of(c.value(flag)))]
    c.set(flag, c.write_lines(name, [json.dumps(r, ensure_ascii=False) for r in rows]))
    return name


add(
    "score-hyp-json-objects-without-doc",
    score_command,
    lambda c: [json_objects(c, "--hyp", "objects.jsonl"), at_line("objects.jsonl", 1), '"doc"'][1:],
)
add(
    "score-hyp-json-objects-without-doc-or-docids",
    score_command,
    lambda c: [json_objects(c, "--hyp", "objects.jsonl"), c.drop("--docids"), "objects.jsonl", "--docids"][2:],
)
add(
    "score-pivot-fewer-lines",
    score_command,
    lambda c: [documents_hyp(c), edited(c, "--pivot", "short_pivot.fr", drop_last, start=c.w.ref), "--pivot", LINES][
        1:
    ],
)
option_cases("score", score_command, [("--band", "0"), ("--band", "-3")])


def first_record_cut_off(c: Ctx, flag: str = "--hyp", name: str = "cut.jsonl") -> str:
    """``flag``'s file as JSONL document records, the first cut off at its start (a copy that lost
    its first bytes): JSONL all the same, never one document per line (issue 50)."""
    from commandkit.documents import document_spans

    lines, ids = lines_of(c.value(flag)), lines_of(c.value("--docids"))
    rows = [
        json.dumps({"doc": ids[a], "text": " ".join(lines[a:b])}, ensure_ascii=False) for a, b in document_spans(ids)
    ]
    rows[0] = rows[0][len('{"doc": ') :]
    c.set(flag, c.write_lines(name, rows))
    return name


def cut_to_the_documents(c: Ctx, flag: str = "--hyp", name: str = "short.fr") -> str:
    """``flag``'s line-aligned file cut to as many lines as there are documents (issue 50: scored
    as one document per line, BLEU 0.24 and exit 0)."""
    from commandkit.documents import document_spans

    count = len(document_spans(lines_of(c.value("--docids"))))
    return edited(c, flag, name, lambda lines: lines[:count])


def control_character(c: Ctx, flag: str = "--hyp", name: str = "nul.jsonl") -> str:
    """The second JSONL record's text with a NUL written as a JSON escape (\\u0000)."""
    from commandkit.documents import document_spans

    lines, ids = lines_of(c.value(flag)), lines_of(c.value("--docids"))
    rows = [{"doc": ids[a], "text": " ".join(lines[a:b])} for a, b in document_spans(ids)]
    rows[1]["text"] = "\u0000" + rows[1]["text"]
    c.set(flag, c.write_lines(name, [json.dumps(r) for r in rows]))
    return name


add(
    "score-hyp-jsonl-first-record-cut-off",
    score_command,
    lambda c: [first_record_cut_off(c), at_line("cut.jsonl", 1), "JSON record"][1:],
)
add(
    "score-hyp-line-aligned-cut-to-the-number-of-documents",
    score_command,
    lambda c: [cut_to_the_documents(c), "short.fr", "lines but", "one document per line", "--hyp-format"][1:],
)
add(
    "score-hyp-jsonl-text-with-a-nul-escape",
    score_command,
    lambda c: [control_character(c), at_line("nul.jsonl", 2), "control character"][1:],
)
add("score-hyp-format-unknown", score_command, opt("--hyp-format", "xml", "--hyp-format xml", "expected one of", MUST))
add(
    "score-hyp-format-lines-of-a-truncated-file",
    score_command,
    lambda c: [cut_to_the_documents(c), c.set("--hyp-format", "lines"), "short.fr", "lines but"][2:],
)
add(
    "score-hyp-format-lines-of-jsonl-records",
    score_command,
    lambda c: [documents_hyp(c), c.set("--hyp-format", "lines"), at_line("docs.jsonl", 1), "JSON record"][2:],
)
add(
    "score-hyp-format-documents-without-docids",
    score_command,
    lambda c: [c.drop("--docids"), c.set("--hyp-format", "documents"), "--hyp-format documents", "--docids"][2:],
)
add(
    "score-segmenter-not-installed",
    score_command,
    lambda c: [documents_hyp(c), c.set("--segmenter", "xx_nothere_sm"), "xx_nothere_sm", "spacy download"][2:],
)
add(
    "score-alignment-output-of-a-line-aligned-hyp",
    score_command,
    opt("--alignment-output", lambda c: c.o("align.jsonl"), "--alignment-output", "line-aligned", CONFLICT),
)
output_cases("score", score_command, "--alignment-output", "align.jsonl")
