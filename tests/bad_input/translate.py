"""Bad-input cases: contextual-mt translate."""

from __future__ import annotations

from tests.bad_input.core import (
    CONFLICT,
    DIRECTORY,
    EMPTY,
    LINES,
    MISMATCH,
    MODEL,
    MUST,
    NOT_FOUND,
    NOT_GIVEN,
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
    opt,
    option_cases,
    output_cases,
    overlong_line,
)


def translate_command(c: Ctx) -> None:
    translate_command_with(c, c.w.ckpt)


def translate_command_with(c: Ctx, checkpoint: str) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = [
        "translate",
        "--path",
        checkpoint,
        "--source",
        w.src,
        "--docids",
        w.ids,
        "--output",
        c.o("hyp.fr"),
        "--cpu",
        "--quiet",
        "--beam",
        "2",
    ]
    c.absent = [c.o("hyp.fr")]


file_cases("translate", translate_command, "--source", lambda w: w.src, ext=".en")
file_cases("translate", translate_command, "--docids", lambda w: w.ids, ext=".docids")
file_cases(
    "translate",
    translate_command,
    "--gold-target-context",
    lambda w: w.ref,
    kinds=("missing", "dir", "latin1"),
    ext=".fr",
)
add(
    "translate-docids-blank-line",
    translate_command,
    lambda c: [edited(c, "--docids", "blank.docids", blank_line(3)), at_line("blank.docids", 3), EMPTY],
)
add(
    "translate-docids-fewer-lines",
    translate_command,
    lambda c: [edited(c, "--docids", "short.docids", drop_last), LINES],
)
add("translate-docids-more-lines", translate_command, lambda c: [edited(c, "--docids", "long.docids", add_line), LINES])
add(
    "translate-gold-target-context-fewer-lines",
    translate_command,
    lambda c: [edited(c, "--gold-target-context", "short.fr", drop_last, start=c.w.ref), LINES],
)
add(
    "translate-source-overlong-line",
    translate_command,
    lambda c: [edited(c, "--source", "long_line.en", overlong_line(3, "cat")), at_line("long_line.en", 3), TOO_LONG],
)
add(
    "translate-path-missing",
    translate_command,
    opt("--path", lambda c: c.missing("nothere.pt"), ("nothere.pt", "--path"), NOT_FOUND),
)
add(
    "translate-path-directory",
    translate_command,
    opt("--path", lambda c: c.mkdir("ckdir.pt"), ("ckdir.pt", "--path"), DIRECTORY),
)
add(
    "translate-path-text-file",
    translate_command,
    opt("--path", lambda c: c.write("notackpt.pt", "hello\n"), ("notackpt.pt", "--path"), "checkpoint", MODEL),
)
add(
    "translate-path-empty-file",
    translate_command,
    opt("--path", lambda c: c.write("emptyckpt.pt", ""), ("emptyckpt.pt", "--path"), ("checkpoint", "empty"), MODEL),
)
add(
    "translate-path-stock-translation-checkpoint",
    translate_command,
    opt(
        "--path", lambda c: c.w.ckpt_stock, ("stock_translation.pt", "--path"), ("document_translation", "task"), MODEL
    ),
)
add(
    "translate-spm-not-a-model",
    translate_command,
    opt("--spm", lambda c: c.write("fake.model", "not a model\n"), ("fake.model", "--spm"), "sentencepiece", MODEL),
)
add(
    "translate-spm-missing",
    translate_command,
    opt("--spm", lambda c: c.missing("nothere.model"), ("nothere.model", "--spm"), NOT_FOUND),
)
add(
    "translate-spm-other-dictionary",
    translate_command,
    opt("--spm", lambda c: c.w.other_spm, ("other_spm.model", "--spm"), ("dictionary", "match"), MISMATCH),
)
add(
    "translate-data-missing",
    translate_command,
    opt("--data", lambda c: c.missing("nodata"), ("nodata", "--data"), NOT_FOUND),
)
add(
    "translate-data-without-dictionaries",
    translate_command,
    opt("--data", lambda c: c.mkdir("nodicts"), "dict", NOT_FOUND),
)
option_cases(
    "translate",
    translate_command,
    [
        ("--beam", "0"),
        ("--beam", "-1"),
        ("--lenpen", "nan"),
        ("--lenpen", "inf"),
        ("--max-len-a", "nan"),
        ("--max-len-a", "inf"),
        ("--max-len-a", "-1"),
        ("--max-len-b", "-1"),
        ("--batch-size", "0"),
        ("--batch-size", "-2"),
        ("--max-tokens", "0"),
        ("--max-tokens", "-5"),
        ("--source-context-size", "-1"),
        ("--target-context-size", "-1"),
    ],
)
output_cases("translate", translate_command, "--output", "hyp.fr")

# --unit document (a document, or chunk of whole sentences, in one generation): --hf-model only
add(
    "translate-unit-document-with-path",
    translate_command,
    opt("--unit", "document", "--unit document", "--hf-model", "trained on sentences", NOT_GIVEN),
)
add(
    "translate-unit-unknown",
    translate_command,
    opt("--unit", "paragraph", "--unit paragraph", "sentence, document", MUST),
)
add(
    "translate-max-source-tokens-without-unit-document",
    translate_command,
    opt("--max-source-tokens", "50", "--max-source-tokens", "--unit document", CONFLICT),
)
add(
    "translate-overwrite-without-unit-document",
    translate_command,
    do(lambda c: c.argv.append("--overwrite"), "--overwrite", "--unit document", CONFLICT),
)


def translate_documents_command(c: Ctx) -> None:
    """translate --unit document with the tiny Hugging Face Marian."""
    translate_command(c)
    c.set("--hf-model", c.w.marian)
    c.drop("--path")
    c.set("--unit", "document")
    c.set("--max-len-b", "6")
    c.set("--output", c.o("docs.jsonl"))
    c.absent = [c.o("docs.jsonl"), c.o("docs.jsonl.partial")]


add(
    "translate-unit-document-sentence-over-budget",
    translate_documents_command,
    lambda c: [
        edited(c, "--source", "long_line.en", overlong_line(3, "cat"), start=c.w.src),
        at_line("long_line.en", 3),
        "--max-source-tokens",
        TOO_LONG,
    ],
)
add(
    "translate-unit-document-sentence-over-max-source-tokens",
    translate_documents_command,
    opt("--max-source-tokens", "2", at_line("test.en", 1), "more than --max-source-tokens (2)", TOO_LONG),
)
add(
    "translate-unit-document-decoding-parallel",
    translate_documents_command,
    opt("--decoding", "parallel", "--decoding parallel", "--unit sentence", CONFLICT),
)
add(
    "translate-unit-document-no-room-for-a-source",
    translate_documents_command,
    opt("--max-len-b", "200", "--max-len-b 200", "positions", MUST),
)
option_cases("translate", translate_documents_command, [("--max-source-tokens", "0")])


def translate_untrained_command(c: Ctx) -> None:
    """translate with a checkpoint that is not there: an option that is wrong fails before it is looked for."""
    translate_command_with(c, c.missing("model.pt"))


# past torch's C int (it raised ValueError "Overflow when unpacking long"), and past any machine
option_cases("translate", translate_untrained_command, [("--threads", "99999999999"), ("--threads", "3000000000")])
