"""Bad-input cases: muda tag."""

from __future__ import annotations

from tests.bad_input.core import (
    DIRECTORY,
    EMPTY,
    FORMAT,
    LINES,
    MISMATCH,
    MODEL_MISSING,
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
)
from tests.bad_input.cxmi import preexisting
from tests.bad_input.report import drop_last_sentence, nine_columns


def tag_command(c: Ctx) -> None:
    w = c.w
    c.command = "muda"
    c.argv = [
        "tag",
        "--src",
        w.d_src,
        "--tgt",
        w.d_ref,
        "--docids",
        w.d_ids,
        "--tgt-lang",
        "fr",
        "--dump-tags",
        c.o("tags.json"),
        "--src-conllu",
        w.d_src_conllu,
        "--tgt-conllu",
        w.d_ref_conllu,
        "--alignments",
        w.d_align,
    ]
    c.absent = [c.o("tags.json"), c.o("tags.summary.json"), c.o("tags.src.conllu")]


file_cases("tag", tag_command, "--src", lambda w: w.d_src, ext=".en")
file_cases("tag", tag_command, "--tgt", lambda w: w.d_ref, kinds=("missing", "latin1"), ext=".fr")
file_cases("tag", tag_command, "--docids", lambda w: w.d_ids, kinds=("missing", "empty", "latin1"), ext=".docids")
add("tag-tgt-fewer-lines", tag_command, lambda c: [edited(c, "--tgt", "short.fr", drop_last), LINES])
add("tag-docids-fewer-lines", tag_command, lambda c: [edited(c, "--docids", "short.docids", drop_last), LINES])
add(
    "tag-docids-blank-line",
    tag_command,
    lambda c: [edited(c, "--docids", "blank.docids", blank_line(4)), at_line("blank.docids", 4), EMPTY],
)
add("tag-unknown-language", tag_command, opt("--tgt-lang", "xx", "xx", ("unknown", "language"), MUST))
add(
    "tag-unknown-phenomenon",
    tag_command,
    lambda c: (c.set("--phenomena", "sarcasm"), ["--phenomena", "sarcasm"])[1],
    status=2,
)
add(
    "tag-src-conllu-does-not-match",
    tag_command,
    lambda c: [
        edited(c, "--src-conllu", "mismatch.en.conllu", change_form_demo(2)),
        ("match",),
        ("sentence 2", "line 2", ":2"),
        MISMATCH,
    ],
)
add(
    "tag-src-conllu-fewer-sentences",
    tag_command,
    lambda c: [edited(c, "--src-conllu", "fewer.en.conllu", drop_last_sentence), LINES],
)
add(
    "tag-tgt-conllu-malformed",
    tag_command,
    lambda c: [edited(c, "--tgt-conllu", "malformed.fr.conllu", nine_columns), ("malformed.fr.conllu:",), FORMAT],
)
add(
    "tag-tgt-conllu-bad-token-id",
    tag_command,
    lambda c: [edited(c, "--tgt-conllu", "badid.fr.conllu", bad_token_id), ("badid.fr.conllu:",), FORMAT],
)
add(
    "tag-tgt-conllu-of-another-text",
    tag_command,
    opt("--tgt-conllu", lambda c: c.w.d_src_conllu, "test.en.conllu", "match", MISMATCH),
)
add(
    "tag-src-conllu-bad-coreference",
    tag_command,
    lambda c: [edited(c, "--src-conllu", "coref.en.conllu", bad_entity), ("entity", "coref"), FORMAT],
)
add(
    "tag-src-conllu-missing",
    tag_command,
    opt("--src-conllu", lambda c: c.missing("nothere.conllu"), "nothere.conllu", NOT_FOUND),
)
add(
    "tag-alignments-out-of-range",
    tag_command,
    lambda c: [
        edited(c, "--alignments", "range.align", set_line(2, "0-99")),
        at_line("range.align", 2),
        "range",
        FORMAT,
    ],
)
add(
    "tag-alignments-garbage",
    tag_command,
    lambda c: [
        edited(c, "--alignments", "garbage.align", set_line(1, "x-1 banana")),
        at_line("garbage.align", 1),
        FORMAT,
    ],
)
add(
    "tag-alignments-negative-index",
    tag_command,
    lambda c: [edited(c, "--alignments", "neg.align", set_line(3, "-1-0")), at_line("neg.align", 3), FORMAT],
)
add("tag-alignments-fewer-lines", tag_command, lambda c: [edited(c, "--alignments", "short.align", drop_last), LINES])
add(
    "tag-stanza-model-missing",
    tag_command,
    do(
        lambda c: (
            c.drop("--src-conllu"),
            c.set("--stanza-dir", c.mkdir("no_stanza")),
            c.set("--cache-dir", str(c.inp.parent / "cache")),
        ),
        "stanza",
        MODEL_MISSING,
    ),
)
option_cases(
    "tag",
    tag_command,
    [("--lexical-min-count", "0"), ("--lexical-min-count", "-1"), ("--coref-window", "-1"), ("--batch-size", "0")],
)
output_cases("tag", tag_command, "--dump-tags", "tags.json")
add(
    "tag-annotation-file-beside-tags-is-a-directory",
    tag_command,
    do(lambda c: preexisting(c, "tags.src.conllu"), "tags.src.conllu", DIRECTORY),
)


def change_form_demo(sentence: int):
    def edit(lines):
        out, k = [], 0
        for line in lines:
            cols = line.split("\t")
            if len(cols) == 10 and cols[0] == "1":
                k += 1
                if k == sentence:
                    cols[1] = "Zzz"
                    line = "\t".join(cols)
            out.append(line)
        return out

    return edit


def bad_token_id(lines):
    lines = list(lines)
    k = [i for i, line in enumerate(lines) if line.count("\t") == 9][3]
    lines[k] = "\t".join(["x", *lines[k].split("\t")[1:]])
    return lines


def bad_entity(lines):
    """An entity closed but never opened ('e9)')."""
    lines = list(lines)
    k = next(i for i, line in enumerate(lines) if "Entity=(e1-object)" in line)
    lines[k] = lines[k].replace("Entity=(e1-object)", "Entity=e9)")
    return lines


def set_line(k, text):
    def edit(lines):
        lines = list(lines)
        lines[k - 1] = text
        return lines

    return edit
