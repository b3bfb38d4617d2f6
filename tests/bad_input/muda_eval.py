"""Bad-input cases: muda eval."""

from __future__ import annotations

from pathlib import Path

from tests.bad_input.core import (
    CONFLICT,
    DIRECTORY,
    DIRECTORY_OR_FILE,
    EMPTY,
    FORMAT,
    LINES,
    MISMATCH,
    MODEL,
    MUST,
    NOT_FOUND,
    NOT_GIVEN,
    Ctx,
    add,
    add_line,
    at_line,
    blank_line,
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
from tests.bad_input.cxmi import preexisting
from tests.bad_input.muda_tag import set_line
from tests.bad_input.report import nine_columns
from tests.bad_input.score import (
    control_character,
    corrupt_comet_model,
    cut_to_the_documents,
    first_record_cut_off,
    json_objects,
)


def eval_command(c: Ctx) -> None:
    w = c.w
    c.command = "muda"
    c.argv = [
        "eval",
        "--src",
        w.d_src,
        "--ref",
        w.d_ref,
        "--docids",
        w.d_ids,
        "--tgt-lang",
        "fr",
        "--hyps",
        w.sys_a,
        "--ref-tags",
        w.d_tags,
        "--src-conllu",
        w.d_src_conllu,
        "--lexicon",
        *w.lex,
        "--output",
        c.o("eval.json"),
        "--bootstrap",
        "10",
    ]
    c.absent = [c.o("eval.json"), c.o("eval.work")]


file_cases("eval", eval_command, "--hyps", lambda w: w.sys_a, ext=".hyp")
file_cases("eval", eval_command, "--ref", lambda w: w.d_ref, kinds=("missing", "latin1"), ext=".fr")
file_cases("eval", eval_command, "--src", lambda w: w.d_src, kinds=("latin1",), ext=".en")
file_cases("eval", eval_command, "--ref-tags", lambda w: w.d_tags, kinds=("missing", "dir"), ext=".json")
add("eval-hyps-fewer-lines", eval_command, lambda c: [edited(c, "--hyps", "short.hyp", drop_last), LINES])
add("eval-hyps-more-lines", eval_command, lambda c: [edited(c, "--hyps", "long.hyp", add_line), LINES])
add("eval-ref-fewer-lines", eval_command, lambda c: [edited(c, "--ref", "short.fr", drop_last), LINES])
add("eval-docids-fewer-lines", eval_command, lambda c: [edited(c, "--docids", "short.docids", drop_last), LINES])
add(
    "eval-docids-blank-line",
    eval_command,
    lambda c: [edited(c, "--docids", "blank.docids", blank_line(5)), at_line("blank.docids", 5), EMPTY],
)


def fairseq_output(refs, skip=(), twice=None):
    out = []
    for i, ref in enumerate(refs):
        if i in skip:
            continue
        out += [
            f"S-{i}\tsource {i}",
            f"T-{i}\t{ref}",
            f"H-{i}\t-0.25\t{ref}",
            f"D-{i}\t-0.25\t{ref}",
            f"P-{i}\t-0.1 -0.2",
        ]
    if twice is not None:  # the same id again, from another run: other source, other text
        out += [
            f"S-{twice}\tanother source",
            f"T-{twice}\tanother reference",
            f"H-{twice}\t-0.5\tautre chose .",
            f"D-{twice}\t-0.5\tautre chose .",
        ]
    return [*out, "Generate test with beam=2: BLEU4 = 50.0"]


add(
    "eval-hyps-fairseq-output-missing-ids",
    eval_command,
    opt(
        "--hyps",
        lambda c: c.write_lines("gen_missing.out", fairseq_output(lines_of(c.w.d_ref), skip=(3, 7))),
        "gen_missing.out",
        ("missing", "3"),
        FORMAT,
    ),
)
add(
    "eval-hyps-fairseq-output-id-twice-different-text",
    eval_command,
    opt(
        "--hyps",
        lambda c: c.write_lines("gen_twice.out", fairseq_output(lines_of(c.w.d_ref), twice=2)),
        "gen_twice.out",
        ("twice", "duplicate", "again", "more than once", "two", "repeated", "differ", "conflict"),
        FORMAT,
    ),
)
add(
    "eval-hyps-fairseq-output-id-beyond-reference",
    eval_command,
    opt(
        "--hyps",
        lambda c: c.write_lines("gen_beyond.out", fairseq_output([*lines_of(c.w.d_ref), "x ."])),
        "gen_beyond.out",
        ("lines", "reference", "id"),
        FORMAT,
    ),
)
add(
    "eval-comet-model-missing-path",
    eval_command,
    opt("--comet-model", lambda c: c.missing("nothere.ckpt"), "nothere.ckpt", NOT_FOUND),
)
add(
    "eval-comet-model-corrupt-checkpoint",
    eval_command,
    opt("--comet-model", corrupt_comet_model, "model.ckpt", ("cannot load", "checkpoint"), MODEL),
)
add(
    "eval-names-fewer-than-hyps",
    eval_command,
    do(lambda c: (c.set("--hyps", c.w.sys_a, c.w.sys_b), c.set("--names", "only-one")), "--names", MUST),
)
add("eval-names-more-than-hyps", eval_command, do(lambda c: c.set("--names", "a", "b"), "--names", MUST))
add(
    "eval-hyp-conllu-count-wrong",
    eval_command,
    do(
        lambda c: (c.set("--hyps", c.w.sys_a, c.w.sys_b), c.set("--hyp-conllu", c.w.d_ref_conllu)), "--hyp-conllu", MUST
    ),
)
add(
    "eval-hyp-alignments-count-wrong",
    eval_command,
    do(
        lambda c: (c.set("--hyp-conllu", c.w.d_ref_conllu), c.set("--hyp-alignments", c.w.d_align, c.w.d_align)),
        "--hyp-alignments",
        MUST,
    ),
)
add(
    "eval-hyp-conllu-of-another-text",
    eval_command,
    opt("--hyp-conllu", lambda c: c.w.d_src_conllu, "test.en.conllu", "match", MISMATCH),
)
add(
    "eval-hyp-alignments-out-of-range",
    eval_command,
    do(
        lambda c: (
            c.set("--hyp-conllu", c.w.d_ref_conllu),
            edited(c, "--hyp-alignments", "range.align", set_line(2, "0-99"), start=c.w.d_align),
        ),
        "range.align",
        at_line("range.align", 2),
        "range",
        FORMAT,
    ),
)


def lexicon_without_source(c):
    c.drop("--src-conllu")
    c.drop("--ref-tags")
    return ["--src-conllu", NOT_GIVEN]


add("eval-lexicon-without-src-conllu-and-ref-tags", eval_command, lambda c: lexicon_without_source(c))


def lexicon_file(c, k, path):
    lex = list(c.w.lex)
    lex[k] = path
    c.set("--lexicon", *lex)


add(
    "eval-lexicon-alignments-missing",
    eval_command,
    do(lambda c: lexicon_file(c, 2, c.missing("nothere.align")), "nothere.align", NOT_FOUND),
)
add(
    "eval-lexicon-alignments-garbage",
    eval_command,
    do(
        lambda c: lexicon_file(c, 2, c.write("garbage.align", "zero-one\n")),
        "garbage.align",
        at_line("garbage.align", 1),
        FORMAT,
    ),
)
add(
    "eval-lexicon-conllu-malformed",
    eval_command,
    do(
        lambda c: lexicon_file(c, 1, c.write_lines("malformed.fr.conllu", nine_columns(lines_of(c.w.lex[1])))),
        "malformed.fr.conllu:",
        FORMAT,
    ),
)
add(
    "eval-lexicon-empty",
    eval_command,
    do(
        lambda c: c.set("--lexicon", *(c.write(name, "") for name in ("empty.en.conllu", "empty.fr.conllu", "e.al"))),
        "empty.en.conllu",
        "empty",
        EMPTY,
    ),
)
add(  # an English CoNLL-U given as the French side: every hypothesis word would be unknown
    "eval-lexicon-english-as-the-french-side",
    eval_command,
    do(lambda c: lexicon_file(c, 1, c.w.lex[0]), "train.en.conllu", "not French", MISMATCH),
)
add(
    "eval-ref-tags-of-another-reference",
    eval_command,
    opt("--ref-tags", lambda c: c.w.d_tags_other, "other.tags.json", ("reference", "match"), MISMATCH),
)


def ref_tags_other_no_summary(c):
    c.set("--ref-tags", c.write("copied.tags.json", Path(c.w.d_tags_other).read_text()))
    return ["copied.tags.json", ("reference", "match"), MISMATCH]


add("eval-ref-tags-of-another-reference-without-summary", eval_command, ref_tags_other_no_summary)
add(
    "eval-ref-tags-for-another-language",
    eval_command,
    opt("--ref-tags", lambda c: c.w.d_tags_es, "spanish.tags.json", ("language", "es"), MISMATCH),
)
add(
    "eval-ref-tags-not-json",
    eval_command,
    opt("--ref-tags", lambda c: c.write("garbage.tags.json", "not json"), "garbage.tags.json", "json", FORMAT),
)
add(
    "eval-ref-tags-wrong-layout",
    eval_command,
    opt(
        "--ref-tags",
        lambda c: c.write("layout.tags.json", "[[[1, 2]]]"),
        "layout.tags.json",
        ("layout", "token"),
        FORMAT,
    ),
)
add("eval-unknown-language", eval_command, opt("--tgt-lang", "xx", "xx", ("unknown", "language"), MUST))
option_cases("eval", eval_command, [("--bootstrap", "-1"), ("--coref-window", "-1"), ("--batch-size", "0")])
output_cases("eval", eval_command, "--output", "eval.json")


def eval_dir_output(flag):
    def mutate(c):
        c.set(flag, c.existing_dir_output())
        return ["odir", DIRECTORY]

    return mutate


add("eval-table-is-a-directory", eval_command, eval_dir_output("--table"))
add(
    "eval-work-directory-is-a-file",
    eval_command,
    do(lambda c: preexisting(c, "eval.work", directory=False), "eval.work", DIRECTORY_OR_FILE),
)
add(
    "eval-names-not-distinct",
    eval_command,
    do(lambda c: (c.set("--hyps", c.w.sys_a, c.w.sys_b), c.set("--names", "same", "same")), "--names", MUST),
)
add("eval-plot-is-a-directory", eval_command, eval_dir_output("--plot"))
add(
    "eval-plot-under-a-file",
    eval_command,
    opt("--plot", lambda c: c.under_file("eval.png"), "afile", DIRECTORY_OR_FILE),
)


# muda eval of a document-level output (re-aligned to the source lines by docalign)
def eval_documents(c: Ctx, name: str = "documents.jsonl", edit=None) -> str:
    """System a's lines joined per document, as JSONL records (see ``documents_jsonl``)."""
    return documents_jsonl(c, name, edit, ids=c.w.d_ids, texts=c.w.sys_a)


add(
    "eval-pivot-fewer-lines", eval_command, lambda c: [edited(c, "--pivot", "short.pivot", drop_last, c.w.d_ref), LINES]
)
file_cases("eval", eval_command, "--pivot", lambda w: w.d_ref, kinds=("missing", "latin1"), ext=".pivot")
add(
    "eval-segmenter-pipeline-not-installed",
    eval_command,
    do(
        lambda c: (c.set("--hyps", eval_documents(c)), c.set("--segmenter", "xx_no_such_pipeline_sm")),
        "xx_no_such_pipeline_sm",
        "spacy download",
        MODEL,
    ),
)
option_cases("eval", eval_command, [("--band", "0")])
add(
    "eval-hyps-documents-unknown-id",
    eval_command,
    opt(
        "--hyps",
        lambda c: eval_documents(c, "unknown.jsonl", renamed_second),
        at_line("unknown.jsonl", 2),
        "no-such-document",
        MISMATCH,
    ),
)
add(
    "eval-hyps-json-objects-without-doc",
    eval_command,
    lambda c: [json_objects(c, "--hyps", "objects.jsonl"), at_line("objects.jsonl", 1), '"doc"', FORMAT][1:],
)
output_cases("eval", eval_command, "--alignment-dir", "alignments", directory_output=True)
add(
    "eval-alignment-dir-of-line-aligned-hyps",  # issue 50: exit 0 and an empty folder left behind
    eval_command,
    lambda c: [
        c.set("--alignment-dir", c.o("alignments")),
        c.absent.append(c.o("alignments")),
        "--alignment-dir",
        "line-aligned",
        CONFLICT,
    ][2:],
)
add(
    "eval-hyps-jsonl-first-record-cut-off",
    eval_command,
    lambda c: [first_record_cut_off(c, "--hyps"), at_line("cut.jsonl", 1), "JSON record", FORMAT][1:],
)
add(
    "eval-hyps-line-aligned-cut-to-the-number-of-documents",
    eval_command,
    lambda c: [cut_to_the_documents(c, "--hyps"), "short.fr", "lines but", "one document per line", LINES][1:],
)
add(
    "eval-hyps-jsonl-text-with-a-nul-escape",
    eval_command,
    lambda c: [control_character(c, "--hyps"), at_line("nul.jsonl", 2), "control character", FORMAT][1:],
)
