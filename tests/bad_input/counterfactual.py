"""Bad-input cases: counterfactual suites (testset build --counterfactual) and testset cues."""

from __future__ import annotations

import json
import os
from typing import Callable, List

from tests.bad_input.core import (
    CONFLICT,
    EMPTY,
    FORMAT,
    IS_INPUT,
    MISMATCH,
    MUST,
    NOT_GIVEN,
    Ctx,
    Fragment,
    add,
    at_line,
    do,
    lines_of,
    opt,
    option_cases,
    output_cases,
)
from tests.bad_input.testset import testset_build_command


# ---- counterfactual suites (`testset build --counterfactual`) and their measures (`testset cues`), issue 43
def counterfactual_build_command(c: Ctx) -> None:
    testset_build_command(c)
    c.argv.append("--counterfactual")


def _conllu_edited(c: Ctx, flag: str, original: str, name: str, edit: Callable[[List[str]], List[str]]) -> str:
    """A copy of a CoNLL-U file with each token row's columns edited; given as ``flag``."""
    rows = []
    for line in lines_of(original):
        cols = line.split("\t")
        rows.append("\t".join(edit(cols)) if len(cols) == 10 else line)
    c.set(flag, c.write_lines(name, rows))
    return name


def _no_coreference(cols: List[str]) -> List[str]:
    return [*cols[:9], "_"]


def _every_noun_masculine(cols: List[str]) -> List[str]:
    if cols[3] == "NOUN":
        cols[5] = cols[5].replace("Gender=Fem", "Gender=Masc")
    return cols


add(
    "testset-build-counterfactual-suite-without-cues",
    counterfactual_build_command,
    lambda c: [
        _conllu_edited(c, "--src-conllu", c.w.d_src_conllu, "nocoref.en.conllu", _no_coreference),
        c.set("--phenomena", "pronouns"),
        "reference.tags.json",
        "no group has a known cue",
        EMPTY,
    ][2:],
)
add(
    "testset-build-counterfactual-lexicon-without-a-noun-of-the-other-gender",
    counterfactual_build_command,
    lambda c: [
        _conllu_edited(c, "--tgt-conllu", c.w.d_ref_conllu, "masculine.fr.conllu", _every_noun_masculine),
        c.set("--phenomena", "pronouns"),
        "no cue could be flipped",
        "no noun of the other gender",
        EMPTY,
    ][2:],
)
add(
    "testset-build-counterfactual-shift-beyond-the-longest-document",
    counterfactual_build_command,
    opt("--max-shift", "60", "--max-shift 60", "longest document", MUST),
)
add(
    "testset-build-max-shift-without-counterfactual",
    testset_build_command,
    opt("--max-shift", "2", "--max-shift", "--counterfactual", CONFLICT),
)
option_cases("testset-build-counterfactual", counterfactual_build_command, [("--max-shift", "-1")])


def testset_cues_command(c: Ctx) -> None:
    """A counterfactual suite of the demo, built here (in/suite), and the generative evaluation of
    its reference (the expected translations) to measure."""
    from contextual_mt.testsets.build import BuildOptions, run_build
    from contextual_mt.testsets.evaluate import EvaluateOptions, evaluate_testset

    w = c.w
    suite = c.inp / "suite"
    run_build(BuildOptions(w.d_src, w.d_ref, w.d_ids, w.d_tags, str(suite), "fr", counterfactual=True))
    cf = suite / "counterfactual"
    evaluation = c.inp / "eval.json"
    evaluate_testset(
        EvaluateOptions(str(cf / "manifest.jsonl"), (str(cf / "reference.fr"),), output=str(evaluation), bootstrap=0)
    )
    c.command = "contextual-mt"
    c.argv = ["testset", "cues", "--suite", str(cf), "--evaluation", str(evaluation)]
    c.argv += ["--output", c.o("cues.json"), "--plot", c.o("cues.png"), "--bootstrap", "100"]
    c.absent = [c.o("cues.json"), c.o("cues.png")]


def rehashed(c: Ctx, name: str) -> None:
    """The suite's summary.json made to record the sha256 of its file ``name`` as it is now (a
    careful hand edit): what the suite's other checks see past the content hashes."""
    from commandkit.text import file_sha256

    folder = c.inp / "suite" / "counterfactual"
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    summary["files"][name] = file_sha256(str(folder / name))
    (folder / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")


def _evaluation_of_the_build(c: Ctx) -> List[Fragment]:
    """`testset evaluate` of the build's own manifest (not the counterfactual one)."""
    from contextual_mt.testsets.evaluate import EvaluateOptions, evaluate_testset

    path = c.inp / "eval_main.json"
    evaluate_testset(
        EvaluateOptions(str(c.inp / "suite" / "manifest.jsonl"), (str(c.w.d_ref),), output=str(path), bootstrap=0)
    )
    c.set("--evaluation", str(path))
    return ["eval_main.json", "another manifest", MISMATCH]


def _contrastive_of_another_set(c: Ctx) -> List[Fragment]:
    summary = {"format": "voita", "scores": "other.scores", "fingerprint": {"input": "0" * 64}}
    c.set("--contrastive", c.write("other.summary.json", json.dumps(summary)))
    return ["other.summary.json", "another test set", MISMATCH]


def _manifest_of_another_build(c: Ctx) -> List[Fragment]:
    """The suite with its manifest replaced by a shorter one (of another build)."""
    folder = c.inp / "suite" / "counterfactual"
    manifest = folder / "manifest.jsonl"
    manifest.write_text("".join(line + "\n" for line in lines_of(str(manifest))[:-1]), encoding="utf-8")
    return ["manifest.jsonl", "another build", MISMATCH]


add("testset-cues-evaluation-of-another-manifest", testset_cues_command, _evaluation_of_the_build)
add("testset-cues-contrastive-of-another-suite", testset_cues_command, _contrastive_of_another_set)
add("testset-cues-manifest-of-another-build", testset_cues_command, _manifest_of_another_build)
add(
    "testset-cues-suite-not-counterfactual",
    testset_cues_command,
    opt(
        "--suite", lambda c: str(c.inp / "suite"), "summary.json", "not the summary of a counterfactual suite", MISMATCH
    ),
)
add(
    "testset-cues-without-decisions",
    testset_cues_command,
    do(lambda c: c.drop("--evaluation"), "--contrastive", NOT_GIVEN),
)
add("testset-cues-plot-not-png", testset_cues_command, opt("--plot", lambda c: c.o("cues.jpg"), "--plot", ".png", MUST))
option_cases("testset-cues", testset_cues_command, [("--bootstrap", "5")])
output_cases("testset-cues", testset_cues_command, "--output", "cues.json")


def _bases_edited(c: Ctx, edit: Callable[[List[dict]], None], rehash: bool) -> int:
    """The suite's manifest with its records' ``base`` edited (``rehash``: and summary.json's hash
    of it made to match, as a careful hand edit would); the first line edited."""
    folder = c.inp / "suite" / "counterfactual"
    manifest = folder / "manifest.jsonl"
    records = [json.loads(line) for line in lines_of(str(manifest))]
    before = [r["base"] for r in records]
    edit(records)
    manifest.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    if rehash:
        rehashed(c, "manifest.jsonl")
    return next(n for n, (r, b) in enumerate(zip(records, before, strict=True), start=1) if r["base"] != b)


def _each_cue_flip_to_the_next_group(records: List[dict]) -> None:
    """Issue 50: each cue_flip's base moved to the next original group (a cue score of 24.0, not 0.0)."""
    originals = [r["base"] for r in records if r["edit"] == "original"]
    for r in records:
        k = originals.index(r["base"])
        if r["edit"] == "cue_flip" and k + 1 < len(originals):
            r["base"] = originals[k + 1]


def _one_base_out_of_range(records: List[dict]) -> None:
    """Issue 50: a base of 99999999 silently dropped its group (337 of 338 measured)."""
    records[1]["base"] = 99999999


add(
    "testset-cues-manifest-edited-after-the-build",
    testset_cues_command,
    lambda c: [_bases_edited(c, _each_cue_flip_to_the_next_group, False), "manifest.jsonl", "changed since", MISMATCH][
        1:
    ],
)
add(
    "testset-cues-base-moved-to-another-group",
    testset_cues_command,
    lambda c: [
        at_line("manifest.jsonl", _bases_edited(c, _each_cue_flip_to_the_next_group, True)),
        "not the original of its group",
        MISMATCH,
    ],
)
add(
    "testset-cues-base-out-of-range",
    testset_cues_command,
    lambda c: [
        at_line("manifest.jsonl", _bases_edited(c, _one_base_out_of_range, True)),
        "names no original group",
        MISMATCH,
    ],
)


def testset_evaluate_suite_command(c: Ctx) -> None:
    """testset evaluate of the counterfactual suite's manifest (the suite of testset_cues_command)."""
    testset_cues_command(c)
    cf = c.inp / "suite" / "counterfactual"
    c.argv = ["testset", "evaluate", "--manifest", str(cf / "manifest.jsonl"), "--hyp", str(cf / "reference.fr")]
    c.argv += ["--output", c.o("eval.json"), "--bootstrap", "0"]
    c.absent = [c.o("eval.json")]


add(
    "testset-evaluate-suite-manifest-edited-after-the-build",
    testset_evaluate_suite_command,
    lambda c: [_bases_edited(c, _one_base_out_of_range, False), "manifest.jsonl", "changed since", MISMATCH][1:],
)


# ---- issue 43, probed: inputs that passed for the suite's own, or an option the user never gave
def earlier_counterfactual_build(c: Ctx) -> List[Fragment]:
    """--output-dir holds an earlier --counterfactual build; this one (without) would leave its
    suite passing for its own: the error names the files with their folder (counterfactual/...),
    not as the build's own manifest.jsonl and voita.json."""
    folder = c.out / "suite"
    (folder / "counterfactual").mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps({"language": "fr", "groups": 1}) + "\n")
    for name in ("voita.json", "manifest.jsonl", "summary.json", "source.en", "reference.fr", "docids"):
        (folder / "counterfactual" / name).write_text("earlier\n")
    c.absent = []
    return [os.path.join("counterfactual", "manifest.jsonl"), "earlier build", "--overwrite", MISMATCH]


add("testset-build-output-dir-of-an-earlier-counterfactual-build", testset_build_command, earlier_counterfactual_build)
add(
    "testset-build-counterfactual-default-shift-beyond-the-longest-document",
    counterfactual_build_command,
    opt("--context-size", "60", "--max-shift 62", "the default", "--context-size 60", MUST),
)


def _summary_of_scores(c: Ctx, **extra) -> str:
    """A `contrastive` summary of the suite's voita.json (by its hash), with a scores file beside it."""
    from commandkit.text import file_sha256

    voita = c.inp / "suite" / "counterfactual" / "voita.json"
    n = len(json.loads(voita.read_text(encoding="utf-8")))
    scores = c.write_lines("model.scores", [f"{k % 3}.5" for k in range(2 * n)])
    summary = {"format": "voita", "scores": scores, "fingerprint": {"input": file_sha256(str(voita))}, **extra}
    return c.write("model.summary.json", json.dumps(summary))


def _output_over_the_scores(c: Ctx) -> List[Fragment]:
    c.set("--contrastive", _summary_of_scores(c))
    c.set("--output", str(c.inp / "model.scores"))
    return ["model.scores", "--output", "would overwrite the scores", IS_INPUT]


def _scores_rewritten(c: Ctx) -> List[Fragment]:
    """The summary's scores file was since rewritten (another model's run with the same --output)."""
    c.set("--contrastive", _summary_of_scores(c, scores_sha256="0" * 64))
    return ["model.summary.json", "model.scores", "rewritten", MISMATCH]


def _voita_group_without_true_ind(c: Ctx) -> List[Fragment]:
    voita = c.inp / "suite" / "counterfactual" / "voita.json"
    entries = json.loads(voita.read_text(encoding="utf-8"))
    del entries[1]["true_ind"]
    voita.write_text(json.dumps(entries), encoding="utf-8")
    rehashed(c, "voita.json")
    return ["voita.json", "group 2", "true_ind", FORMAT]


def _manifest_lines_swapped(c: Ctx) -> List[Fragment]:
    """Two manifest lines swapped by hand (an original and its cue flip): the decisions would be
    paired with the wrong edits."""
    manifest = c.inp / "suite" / "counterfactual" / "manifest.jsonl"
    rows = lines_of(str(manifest))
    rows[0], rows[1] = rows[1], rows[0]
    manifest.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    rehashed(c, "manifest.jsonl")
    return ["manifest.jsonl:1", "voita.json", "edited by hand", MISMATCH]


def _evaluation_without_outcomes(c: Ctx) -> List[Fragment]:
    path = c.inp / "eval.json"
    result = json.loads(path.read_text(encoding="utf-8"))
    for s in result["systems"].values():
        del s["group_outcomes"]
    path.write_text(json.dumps(result), encoding="utf-8")
    return ["eval.json", "no outcome", FORMAT]


add("testset-cues-output-is-the-scores-file", testset_cues_command, _output_over_the_scores)
add("testset-cues-scores-rewritten-since-the-summary", testset_cues_command, _scores_rewritten)
add("testset-cues-voita-group-without-true-ind", testset_cues_command, _voita_group_without_true_ind)
add("testset-cues-manifest-lines-swapped", testset_cues_command, _manifest_lines_swapped)
add("testset-cues-evaluation-without-outcomes", testset_cues_command, _evaluation_without_outcomes)
add(
    "testset-cues-suite-is-a-file",
    testset_cues_command,
    opt(
        "--suite",
        lambda c: str(c.inp / "suite" / "counterfactual" / "manifest.jsonl"),
        "--suite",
        "a file, not the counterfactual folder",
        MUST,
    ),
)
add(
    "testset-cues-output-over-the-suite-documents",
    testset_cues_command,
    opt(
        "--output",
        lambda c: str(c.inp / "suite" / "counterfactual" / "source.en"),
        "source.en",
        "--output",
        "would overwrite the suite's documents",
        IS_INPUT,
    ),
)
add(
    "testset-cues-manifest-empty",
    testset_cues_command,
    do(
        lambda c: (
            (c.inp / "suite" / "counterfactual" / "manifest.jsonl").write_text(""),
            rehashed(c, "manifest.jsonl"),
        ),
        "manifest.jsonl",
        "no edited group",
        MISMATCH,
    ),
)


def _shift_beyond_without_tags(c: Ctx) -> List[Fragment]:
    """Without --tags (the reference tagged first, from these annotations): the shift is refused
    before the reference is tagged, so nothing is written, not even the tags."""
    c.drop("--tags")
    c.set("--src-conllu", str(c.w.d_src_conllu))
    c.set("--tgt-conllu", str(c.w.d_ref_conllu))
    c.set("--alignments", str(c.w.d_align))
    c.set("--max-shift", "60")
    return ["--max-shift 60", "longest document", MUST]


add(
    "testset-build-counterfactual-shift-refused-before-tagging",
    counterfactual_build_command,
    _shift_beyond_without_tags,
)
