"""Bad-input cases: contextual-mt attribute."""

from __future__ import annotations

from tests.bad_input.core import (
    CONFLICT,
    EMPTY,
    LINES,
    MODEL,
    MUST,
    NOT_FOUND,
    Ctx,
    add,
    at_line,
    blank_line,
    do,
    drop_last,
    edited,
    file_cases,
    opt,
    option_cases,
    output_cases,
    write_big_input,
)
from tests.bad_input.cxmi import cxmi_command


def attribute_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = [
        "attribute",
        "--path",
        w.ckpt,
        "--source",
        w.src,
        "--reference",
        w.ref,
        "--docids",
        w.ids,
        "--output",
        c.o("a.jsonl"),
        "--cpu",
        "--quiet",
    ]
    c.absent = [c.o("a.jsonl"), c.o("a.summary.json"), c.o("a.jsonl.partial")]


file_cases("attribute", attribute_command, "--source", lambda w: w.src, kinds=("missing", "dir", "latin1"), ext=".en")
file_cases("attribute", attribute_command, "--reference", lambda w: w.ref, ext=".fr")
file_cases("attribute", attribute_command, "--docids", lambda w: w.ids, kinds=("missing", "empty"), ext=".docids")
add(
    "attribute-reference-fewer-lines",
    attribute_command,
    lambda c: [edited(c, "--reference", "short.fr", drop_last), LINES],
)
add(
    "attribute-reference-blank-line",
    attribute_command,
    lambda c: [edited(c, "--reference", "blank.fr", blank_line(3)), at_line("blank.fr", 3), EMPTY],
)
# a blank source was scored (and attributed) as the translation of nothing: refused as cxmi's is
add(
    "attribute-source-blank-line",
    attribute_command,
    lambda c: [edited(c, "--source", "blank.en", blank_line(3)), at_line("blank.en", 3), "empty source", EMPTY],
)


def translate_blank_source(c):
    c.drop("--reference")
    c.argv.append("--translate")
    return [edited(c, "--source", "blank.en", blank_line(3)), at_line("blank.en", 3), "empty source", EMPTY]


add("attribute-translate-source-blank-line", attribute_command, translate_blank_source)
add(
    "attribute-path-missing",
    attribute_command,
    opt("--path", lambda c: c.missing("nothere.pt"), ("nothere.pt", "--path"), NOT_FOUND),
)
add(
    "attribute-path-sentence-level-checkpoint",
    attribute_command,
    opt("--path", lambda c: c.w.ckpt_sent, ("sentence_level.pt", "--path"), "context", MODEL),
)
add(
    "attribute-context-larger-than-trained",
    attribute_command,
    opt("--target-context-size", "9", "exceed those trained", MODEL),
)
add(
    "attribute-reference-and-hypotheses",
    attribute_command,
    do(lambda c: c.set("--hypotheses", c.w.ref), ("not allowed with", "exactly one")),
    status=2,
)
add("attribute-beam-without-translate", attribute_command, opt("--beam", "3", "--beam", "--translate", CONFLICT))
option_cases(
    "attribute",
    attribute_command,
    [("--batch-size", "0"), ("--cue-top-k", "0"), ("--cti-top-k", "-1"), ("--cti-std", "nan"), ("--max-tokens", "0")],
)
for shard, word in (("3/2", "3of2"), ("x", "x")):
    add(f"attribute-shard-{word}", attribute_command, opt("--shard", shard, "--shard", MUST.also("i/n")))
output_cases("attribute", attribute_command, "--output", "a.jsonl")


def cxmi_interrupted(c):
    """Ctrl-C while scoring a large input: one line, exit 130, no output (the .partial may stay
    for resuming)."""
    src, ref, ids = write_big_input(c.w.raw, c.inp)
    c.set("--source", str(src))
    c.set("--reference", str(ref))
    c.set("--docids", str(ids))
    c.argv += ["--batch-size", "1"]
    c.command = "interrupt"
    c.wait_for = c.o("p.jsonl.partial")
    c.allow_new = ["p.jsonl.partial"]
    c.absent = [c.o("p.jsonl"), c.o("p.summary.json")]
    return ["interrupt"]


add("cxmi-interrupted-by-ctrl-c", cxmi_command, cxmi_interrupted, status=130)
