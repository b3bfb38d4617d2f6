"""testset build --counterfactual and testset cues: the edits on the demo corpus (whose cues are
known by construction), the measures on decisions made by hand, and the whole path (build,
contrastive or translate + testset evaluate, cues) with tiny fairseq and Hugging Face models."""

import json
from pathlib import Path

import numpy as np
import pytest

from contextual_mt.demo.corpus import NOUNS
from contextual_mt.testsets.build import BuildOptions, run_build
from contextual_mt.testsets.counterfactual import EDITS
from contextual_mt.testsets.cues import Decisions, Edited, measure
from tests.helpers import NOUNS as TINY_NOUNS
from tests.helpers import contextual_mt_cli, run_in_process

GENDER_EN = {en: g for en, (_, g) in NOUNS.items()}


def noun_genders(*conllu: Path):
    """French noun -> gender, as the demo corpus's annotations give it."""
    from muda.formats.conllu import read_conllu

    return {
        w.form: w.feats["Gender"]
        for path in conllu
        for s in read_conllu(str(path))
        for w in s.words
        if w.upos == "NOUN" and "Gender" in w.feats
    }


def tag_demo(data: Path, out: Path) -> Path:
    from muda.cli import main

    tags = out / "test.tags.json"
    proc = run_in_process(
        main,
        [
            "tag",
            "--src",
            data / "test.en",
            "--tgt",
            data / "test.fr",
            "--docids",
            data / "test.docids",
            "--tgt-lang",
            "fr",
            "--dump-tags",
            tags,
            "--src-conllu",
            data / "test.en.conllu",
            "--tgt-conllu",
            data / "test.fr.conllu",
            "--alignments",
            data / "test.align",
        ],
    )
    assert proc.returncode == 0, proc.stderr
    return tags


def build_from(folder, tags, out, names=("test.en", "test.fr", "test.docids"), **options):
    """``testset build --counterfactual`` (unless ``counterfactual=False``) of FOLDER's files."""
    source, reference, docids = (str(folder / n) for n in names)
    options = {"counterfactual": True, **options}
    return run_build(BuildOptions(source, reference, docids, str(tags), str(out), "fr", **options))


@pytest.fixture(scope="module")
def demo_suite(demo_corpus, tmp_path_factory):
    data = demo_corpus(train_docs=20, valid_docs=2, test_docs=30, seed=5)
    out = tmp_path_factory.mktemp("cf43-demo-suite")
    tags = tag_demo(data, out)
    summary = build_from(data, tags, out / "suite", lexicon=(str(data / "train.fr.conllu"),))
    folder = out / "suite" / "counterfactual"
    records = [json.loads(x) for x in (folder / "manifest.jsonl").read_text().splitlines()]
    return summary, folder, records, data


@pytest.fixture(scope="module")
def genders(demo_suite):
    data = demo_suite[3]
    return noun_genders(data / "train.fr.conllu", data / "test.fr.conllu")


def lines(path: Path):
    return path.read_text(encoding="utf-8").splitlines()


def test_every_edit_is_a_document_and_a_group_with_its_expected_form(demo_suite):
    summary, folder, records, _ = demo_suite
    counts = summary["counterfactual"]["phenomena"]
    assert all(counts["pronouns"].get(kind, 0) > 0 for kind in EDITS), counts["pronouns"]
    assert all(counts["formality"].get(kind, 0) > 0 for kind in ("original", "cue_flip", "control", "distance"))
    source, reference, docids = lines(folder / "source.en"), lines(folder / "reference.fr"), lines(folder / "docids")
    voita = json.loads((folder / "voita.json").read_text())
    assert len(source) == len(reference) == len(docids) == summary["counterfactual"]["lines"]
    assert len(voita) == len(records) == summary["counterfactual"]["groups"]
    for r, entry in zip(records, voita, strict=True):
        # the document of the edit: its context, then the current sentence, whose reference is the expected one
        assert reference[r["line"] - 1] == r["expected"] and docids[r["line"] - 1] == r["doc"]
        context = [k for k, d in enumerate(docids) if d == r["doc"]]
        assert context[-1] == r["line"] - 1 and len(context) == r["distance"] + 1  # the cue opens the document
        assert entry["dst"][entry["true_ind"]].endswith(r["expected"]) and entry["edit"] == r["edit"]
        assert r["word"].lower() in r["expected"].lower().split() and r["alternatives"][0].lower() not in (
            r["expected"].lower().split()
        )


def test_cue_flips_change_the_cue_and_the_expected_form_together(demo_suite, genders):
    _, folder, records, _ = demo_suite
    original = {r["base"]: r for r in records if r["edit"] == "original"}
    source = lines(folder / "source.en")
    flips = [r for r in records if r["edit"] == "cue_flip"]
    assert flips
    for r in flips:
        base = original[r["base"]]
        assert r["word"].lower() != base["word"].lower() and r["expected"] != base["expected"]
        if r["phenomenon"] == "pronouns":
            (src,) = [c for c in r["changed"] if c["side"] == "source"]
            noun = next(c for c in r["changed"] if c["side"] == "target" and c["from"] in genders)
            assert genders[noun["from"]] != genders[noun["to"]]  # the antecedent of the other gender
            assert GENDER_EN[src["from"]] == genders[noun["from"]]
            assert GENDER_EN.get(src["to"], genders[noun["to"]]) == genders[noun["to"]]
            assert r["word"].lower() == ("il" if genders[noun["to"]] == "Masc" else "elle")
            # the source side of the cue sentence holds the new noun (the cue is the context's first sentence)
            start = r["line"] - 1 - r["distance"]
            assert src["to"] in source[start].split() and src["from"] not in source[start].split()
        elif r["phenomenon"] == "formality":
            cue = r["changed"][0]
            assert {cue["from"].lower(), cue["to"].lower()} == {"tu", "vous"}
            assert cue["to"].lower() == r["word"].lower()


def test_controls_distances_and_distractors_keep_the_expected_form(demo_suite, genders):
    _, _, records, data = demo_suite
    original = {r["base"]: r for r in records if r["edit"] == "original"}
    corpus = set(lines(data / "test.fr"))
    for r in records:
        base = original[r["base"]]
        if r["edit"] == "control":
            assert r["expected"] == base["expected"] and r["distance"] == base["distance"]
            assert {c["side"] for c in r["changed"]} == {"source", "target"}
            assert all(c["from"] != c["to"] for c in r["changed"])
            assert not any(c["from"] in genders for c in r["changed"] if r["phenomenon"] == "pronouns")
        elif r["edit"] == "distance":
            assert r["expected"] == base["expected"] and r["distance"] == base["distance"] + r["shift"]
            assert len(r["inserted"]) == r["shift"] and all(s in corpus for s in r["inserted"])
            assert not any(w in genders for s in r["inserted"] for w in s.split())  # no noun: neutral
        elif r["edit"] == "distractor":
            (sentence,) = r["inserted"]
            nouns = [w for w in sentence.split() if w in genders]
            assert r["expected"] == base["expected"] and r["distance"] == base["distance"] + 1
            expected_gender = "Masc" if base["word"].lower() == "il" else "Fem"
            assert nouns and all(genders[n] != expected_gender for n in nouns)


def test_shifts_go_up_to_max_shift_and_the_build_summary_counts_skips(demo_suite):
    summary, _, records, _ = demo_suite
    assert max(r["shift"] for r in records) == BuildOptions.context_size + 2  # the default: context size + 2
    cf = summary["counterfactual"]["phenomena"]
    assert (
        cf["formality"][
            "distractor skipped: "
            + next(k[len("distractor skipped: ") :] for k in cf["formality"] if k.startswith("distractor skipped"))
        ]
        == cf["formality"]["groups with a cue"]
    )


def test_the_build_records_the_content_hash_of_each_file_of_the_suite(demo_suite, tmp_path):
    """Issue 50: the suite is one unit; summary.json holds the sha256 of each of its files, and a
    reader refuses a file that is not the one the build wrote (here voita.json, one byte added)."""
    import shutil

    from commandkit.text import file_sha256
    from contextual_mt.errors import InputError
    from contextual_mt.testsets.cues import CueOptions, read_suite

    _, folder, _, _ = demo_suite
    summary = json.loads((folder / "summary.json").read_text())
    names = ["manifest.jsonl", "voita.json", "source.en", "reference.fr", "docids"]
    assert summary["files"] == {n: file_sha256(str(folder / n)) for n in names}
    copy = tmp_path / "counterfactual"
    shutil.copytree(folder, copy)
    read_suite(CueOptions(str(copy), evaluation="unused.json"))  # as built: read
    with open(copy / "voita.json", "a", encoding="utf-8") as f:
        f.write(" ")
    with pytest.raises(InputError, match=r"voita\.json: changed since the suite was built"):
        read_suite(CueOptions(str(copy), evaluation="unused.json"))


# ----------------------------------------------------------------------------- the measures
def edited_set():
    """Two groups: each an original, a cue flip, a control, two distance edits (the second beyond
    a context of 2) and, for the first, a distractor."""
    edits = []
    for base, doc in ((0, "a"), (1, "b")):
        edits += [
            Edited(base, doc, "pronouns", "original", 1),
            Edited(base, doc, "pronouns", "cue_flip", 1),
            Edited(base, doc, "pronouns", "control", 1),
            Edited(base, doc, "pronouns", "distance", 2),
            Edited(base, doc, "pronouns", "distance", 3),
        ]
    edits.append(Edited(0, "a", "pronouns", "distractor", 2))
    return edits


def run_measure(right):
    edits = edited_set()
    docs = np.array([0 if e.doc == "a" else 1 for e in edits])
    return measure(edits, Decisions("m", np.array(right, dtype=bool)), docs, None)["all"]


def test_a_model_that_follows_cues_within_its_context():
    r = run_measure([1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0])
    assert r["cue_following"]["value"] == 1.0 and r["control_stability"]["value"] == 1.0
    assert r["cue_score"]["value"] == 1.0
    assert {d: c["value"] for d, c in r["distance"].items()} == {"1": 1.0, "2": 1.0, "3": 0.0}
    assert r["distractor"]["value"] == 0.0 and r["distractor_original"]["value"] == 1.0


def test_a_model_blind_to_context_follows_no_cue():
    # the same preferred candidate whatever the context: right on the original, wrong on the flip
    r = run_measure([1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1])
    assert r["cue_following"]["value"] == 0.0 and r["control_stability"]["value"] == 1.0
    assert r["cue_score"]["value"] == 0.0 and r["original"]["value"] == 0.5


def test_control_flips_are_taken_off_the_cue_score():
    r = run_measure([1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1])  # follows both flips, but group 0 moves with its control
    assert r["cue_following"]["value"] == 1.0 and r["control_stability"]["value"] == 0.5
    assert r["cue_score"]["value"] == 0.5


# ----------------------------------------------------------------------------- with models
def _conllu(rows, doc_start):
    """rows: (form, lemma, upos, feats, head, deprel, misc)."""
    out = ["# newdoc id = x"] if doc_start else []
    out.append(f"# text = {' '.join(r[0] for r in rows)}")
    for k, r in enumerate(rows, start=1):
        out.append("\t".join([str(k), r[0], r[1], r[2], "_", r[3], str(r[4]), r[5], "_", r[6]]))
    return "\n".join(out) + "\n\n"


def annotate_tiny(src, tgt, ids, folder: Path) -> Path:
    """Gold annotations of the tiny corpus's two sentence shapes ('i see the ADJ NOUN .' /
    'it is ADJ .', and the neutral 'they work .'): CoNLL-U with the noun and the next "it" as one
    CorefUD entity, alignments, and the tags of il/elle. Returns the tags file."""
    fr_gender = {fr: ("Masc" if p == "il" else "Fem") for fr, p in TINY_NOUNS.values()}
    src_conllu, tgt_conllu, align, dump = [], [], [], []
    entity = 0
    for n, (s, t) in enumerate(zip(src, tgt, strict=True)):
        first = n == 0 or ids[n] != ids[n - 1]
        if first:
            dump.append([])
        sw, tw = s.split(), t.split()
        if sw[:2] == ["i", "see"]:
            entity += 1
            src_rows = [
                ("i", "i", "PRON", "Number=Sing|Person=1|PronType=Prs", 2, "nsubj", "_"),
                ("see", "see", "VERB", "Tense=Pres|VerbForm=Fin", 0, "root", "_"),
                ("the", "the", "DET", "Definite=Def|PronType=Art", 5, "det", "_"),
                (sw[3], sw[3], "ADJ", "Degree=Pos", 5, "amod", "_"),
                (sw[4], sw[4], "NOUN", "Number=Sing", 2, "obj", f"Entity=(e{entity}-object)"),
                (".", ".", "PUNCT", "_", 2, "punct", "_"),
            ]
            noun = tw[3]
            tgt_rows = [
                ("je", "je", "PRON", "Number=Sing|Person=1|PronType=Prs", 2, "nsubj", "_"),
                ("vois", "voir", "VERB", "Mood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin", 0, "root", "_"),
                ("le", "le", "DET", "Definite=Def|PronType=Art", 4, "det", "_"),
                (noun, noun, "NOUN", f"Gender={fr_gender[noun]}|Number=Sing", 2, "obj", "_"),
                (tw[4], tw[4], "ADJ", "_", 4, "amod", "_"),
                (".", ".", "PUNCT", "_", 2, "punct", "_"),
            ]
            pairs, tags = "0-0 1-1 2-2 3-4 4-3 5-5", []
        elif sw[0] == "it":
            src_rows = [
                ("it", "it", "PRON", "Number=Sing|Person=3|PronType=Prs", 3, "nsubj", f"Entity=(e{entity}-object)"),
                ("is", "be", "AUX", "Mood=Ind|Tense=Pres|VerbForm=Fin", 3, "cop", "_"),
                (sw[2], sw[2], "ADJ", "Degree=Pos", 0, "root", "_"),
                (".", ".", "PUNCT", "_", 3, "punct", "_"),
            ]
            gender = "Masc" if tw[0] == "il" else "Fem"
            tgt_rows = [
                (tw[0], "il", "PRON", f"Gender={gender}|Number=Sing|Person=3|PronType=Prs", 3, "nsubj", "_"),
                ("est", "être", "AUX", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", 3, "cop", "_"),
                (tw[2], tw[2], "ADJ", "_", 0, "root", "_"),
                (".", ".", "PUNCT", "_", 3, "punct", "_"),
            ]
            pairs, tags = "0-0 1-1 2-2 3-3", [0]
        else:  # they work . / ils travaillent .
            src_rows = [
                ("they", "they", "PRON", "Number=Plur|Person=3|PronType=Prs", 2, "nsubj", "_"),
                ("work", "work", "VERB", "Tense=Pres|VerbForm=Fin", 0, "root", "_"),
                (".", ".", "PUNCT", "_", 2, "punct", "_"),
            ]
            tgt_rows = [
                ("ils", "il", "PRON", "Gender=Masc|Number=Plur|Person=3|PronType=Prs", 2, "nsubj", "_"),
                (
                    "travaillent",
                    "travailler",
                    "VERB",
                    "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin",
                    0,
                    "root",
                    "_",
                ),
                (".", ".", "PUNCT", "_", 2, "punct", "_"),
            ]
            pairs, tags = "0-0 1-1 2-2", []
        assert [r[0] for r in tgt_rows] == tw
        src_conllu.append(_conllu(src_rows, first))
        tgt_conllu.append(_conllu(tgt_rows, first))
        align.append(pairs)
        dump[-1].append([{"token": w, "tags": ["pronouns"] if k in tags else []} for k, w in enumerate(tw)])
    tagsfile = folder / "tiny.tags.json"
    tagsfile.write_text(json.dumps(dump))
    (folder / "tiny.tags.src.conllu").write_text("".join(src_conllu))
    (folder / "tiny.tags.tgt.conllu").write_text("".join(tgt_conllu))
    (folder / "tiny.tags.align").write_text("\n".join(align) + "\n")
    return tagsfile


@pytest.fixture(scope="module")
def tiny_suite(raw_corpus, tmp_path_factory):
    """The counterfactual suite of the tiny corpus's test and valid splits (with a document of
    neutral sentences), built through the command line."""
    folder = tmp_path_factory.mktemp("cf43-tiny")
    src, tgt, ids = [], [], []
    for split in ("test", "valid"):
        src += lines(raw_corpus / f"{split}.en")
        tgt += lines(raw_corpus / f"{split}.fr")
        ids += lines(raw_corpus / f"{split}.docids")
    src += ["they work ."] * 3
    tgt += ["ils travaillent ."] * 3
    ids += ["neutral"] * 3
    for name, text in (("src.en", src), ("ref.fr", tgt), ("docids", ids)):
        (folder / name).write_text("\n".join(text) + "\n")
    tags = annotate_tiny(src, tgt, ids, folder)
    proc = contextual_mt_cli(
        "testset",
        "build",
        "--source",
        folder / "src.en",
        "--reference",
        folder / "ref.fr",
        "--docids",
        folder / "docids",
        "--lang",
        "fr",
        "--tags",
        tags,
        "--output-dir",
        folder / "suite",
        "--counterfactual",
        "--max-shift",
        "3",
    )
    assert proc.returncode == 0, proc.stderr
    assert "counterfactual suite:" in proc.stdout
    return folder / "suite" / "counterfactual"


def score(suite: Path, name: str, *model) -> Path:
    proc = contextual_mt_cli(
        "contrastive",
        "--format",
        "voita",
        "--input",
        suite / "voita.json",
        *model,
        "--output",
        suite / f"{name}.scores",
        "--summary",
        suite / f"{name}.summary.json",
        "--cpu",
        "--quiet",
        "--batch-size",
        "16",
    )
    assert proc.returncode == 0, proc.stderr
    return suite / f"{name}.summary.json"


def cues(suite: Path, *args):
    out = suite / "cues.json"
    proc = contextual_mt_cli("testset", "cues", "--suite", suite, *args, "--output", out, "--bootstrap", "100")
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text()), proc.stdout


def blind(measures):
    """What a model that reads no context gets, exactly: no flip followed, no control moved."""
    return measures["all"]["cue_following"]["value"] == 0.0 and measures["all"]["control_stability"]["value"] == 1.0


def test_fairseq_models_scored_then_measured_with_a_plot(tiny_suite, zoo):
    records = [json.loads(x) for x in lines(tiny_suite / "manifest.jsonl")]
    assert {r["edit"] for r in records} == set(EDITS)
    context = score(tiny_suite, "dynamic", "--path", zoo.checkpoint("dynamic"))
    sentence = score(tiny_suite, "sentence", "--path", zoo.checkpoint("sentence"))
    assert set(json.loads(context.read_text())["by"]["edit"]) == set(EDITS)  # contrastive's accuracy by edit
    plot = tiny_suite / "cues.png"
    result, stdout = cues(tiny_suite, "--contrastive", context, "--contrastive", sentence, "--plot", plot)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "cue score" in stdout
    assert set(result["systems"]) == {"dynamic", "sentence"}
    assert blind(result["systems"]["sentence"]) and result["systems"]["sentence"]["context"] == [0, 0]
    m = result["systems"]["dynamic"]["all"]
    assert m["cue_score"]["value"] == pytest.approx(m["cue_following"]["value"] + m["control_stability"]["value"] - 1)
    lo, hi = m["cue_following"]["ci"]
    assert lo <= m["cue_following"]["value"] <= hi
    assert set(m["distance"]) == {"1", "2", "3", "4"}  # the originals (1) and the cue moved 1..3 back


def test_generative_evaluation_of_translations_of_the_edited_documents(tiny_suite, zoo):
    evaluation = tiny_suite / "evaluate.json"
    hyps = []
    for name in ("dynamic", "sentence"):
        hyp = tiny_suite / f"{name}.hyp.fr"
        proc = contextual_mt_cli(
            "translate",
            "--path",
            zoo.checkpoint(name),
            "--source",
            tiny_suite / "source.en",
            "--docids",
            tiny_suite / "docids",
            "--gold-target-context",
            tiny_suite / "reference.fr",
            "--output",
            hyp,
            "--cpu",
            "--quiet",
            "--beam",
            "1",
        )
        assert proc.returncode == 0, proc.stderr
        hyps += ["--hyp", hyp]
    proc = contextual_mt_cli(
        "testset", "evaluate", "--manifest", tiny_suite / "manifest.jsonl", *hyps, "--output", evaluation
    )
    assert proc.returncode == 0, proc.stderr
    result, _ = cues(tiny_suite, "--evaluation", evaluation)
    assert set(result["systems"]) == {"dynamic.hyp.fr", "sentence.hyp.fr"}
    assert blind(result["systems"]["sentence.hyp.fr"])  # the same translation whatever the context


@pytest.mark.parametrize("model", ["marian", "gpt2"])
def test_hugging_face_models(tiny_suite, model, request):
    """A seq2seq model and a decoder-only one (plain prompt template), scored like any other;
    without context they follow no cue."""
    folder = request.getfixturevalue(model)
    extra = ["--prompt-template", "plain", "--src-lang", "English", "--tgt-lang", "French"] if model == "gpt2" else []
    with_context = score(tiny_suite, f"{model}-1", "--hf-model", folder, *extra)
    without = score(
        tiny_suite,
        f"{model}-0",
        "--hf-model",
        folder,
        *extra,
        "--source-context-size",
        "0",
        "--target-context-size",
        "0",
    )
    result, _ = cues(tiny_suite, "--contrastive", with_context, "--contrastive", without)
    assert blind(result["systems"][f"{model}-0"])
    assert result["systems"][f"{model}-1"]["context"] == [1, 1]


def test_a_cadec_checkpoint(tiny_suite, zoo, data_bin, tmp_path):
    """CADec (a frozen sentence-level base and a context-aware decoder) scores the suite through
    the same `contrastive` path; its measures are made as any model's."""
    from tests.contextual_mt.models.test_cadec import train_cadec

    train_cadec(data_bin, tmp_path / "cadec", zoo.checkpoint("sentence_2_epochs"), "--no-epoch-checkpoints")
    summary = score(tiny_suite, "cadec", "--path", tmp_path / "cadec" / "checkpoint_last.pt")
    result, _ = cues(tiny_suite, "--contrastive", summary)
    m = result["systems"]["cadec"]
    assert m["context"] == [2, 2] and set(m["all"]["distance"]) == {"1", "2", "3", "4"}
    assert 0.0 <= m["all"]["cue_following"]["value"] <= 1.0


# ----------------------------------------------------------------------------- probed (issue 43)
def test_an_evaluation_made_elsewhere_with_a_relative_manifest_is_of_this_suite(demo_suite, tmp_path, monkeypatch):
    """`testset evaluate --manifest rel/manifest.jsonl` run in one folder and `testset cues` run in
    another: the result is told by the manifest's content, not by a path relative to where it ran."""
    from contextual_mt.testsets.cues import CueOptions, measure_cues
    from contextual_mt.testsets.evaluate import EvaluateOptions, evaluate_testset

    folder = demo_suite[1]
    monkeypatch.chdir(folder.parent)
    evaluate_testset(
        EvaluateOptions(
            "counterfactual/manifest.jsonl",
            ("counterfactual/reference.fr",),
            output=str(tmp_path / "eval.json"),
            bootstrap=0,
        )
    )
    monkeypatch.chdir(tmp_path)
    result = measure_cues(CueOptions(str(folder), evaluation=str(tmp_path / "eval.json"), bootstrap=0))
    assert result["systems"]["reference.fr"]["all"]["cue_following"]["value"] == 1.0


def test_no_cue_reasons_are_summed_over_phenomena(monkeypatch):
    """The error of a build where no group has a cue counts each reason over every phenomenon (on
    the demo with one-sentence documents: formality's 131 and lexical cohesion's 9 "no earlier cue"
    are 140), not the last phenomenon's count alone."""
    from types import SimpleNamespace

    from contextual_mt.errors import InputError
    from contextual_mt.testsets import counterfactual

    class NoCue:
        def __init__(self, *args):
            pass

        def edits(self, g, counts):
            counts["no cue: no earlier cue in the document"] += 1
            return []

    monkeypatch.setattr(counterfactual, "SuiteBuilder", NoCue)
    groups = [{"phenomenon": p} for p in ("formality", "formality", "formality", "lexical_cohesion")]
    o = SimpleNamespace(tags="t.json", seed=1)
    with pytest.raises(InputError, match=r"\(no earlier cue in the document 4\)"):
        counterfactual.build_suite(o, [None] * 7, None, None, None, groups)


def test_a_build_without_counterfactual_over_one_with_leaves_no_suite_folder(demo_suite, tmp_path):
    """--overwrite removes the earlier build's counterfactual suite, and its emptied folder (which
    `testset cues --suite` would otherwise be pointed at)."""
    data, tags = demo_suite[3], demo_suite[1].parent.parent / "test.tags.json"

    def build(**kw):
        build_from(
            data, tags, tmp_path / "suite", lexicon=(str(data / "train.fr.conllu"),), **{"counterfactual": False, **kw}
        )

    build(counterfactual=True, max_shift=1)
    assert (tmp_path / "suite" / "counterfactual" / "voita.json").is_file()
    build(overwrite=True)
    assert not (tmp_path / "suite" / "counterfactual").exists()
    assert (tmp_path / "suite" / "voita.json").is_file()


def test_a_cue_beside_another_t_v_word_is_not_flipped(demo_suite, tmp_path):
    """Tu vois ta table: flipping Tu alone (Vous voyez ta table) would leave a T word in the
    context beside the V one, and the flipped context would prefer neither form: the flip is
    skipped, counted by its reason; every flip made leaves the context one T-V level."""
    import shutil

    from muda.languages import get_language

    _, _, records, data = demo_suite
    flip = next(r for r in records if r["phenomenon"] == "formality" and r["edit"] == "cue_flip")
    cue_line = flip["source_line"] - flip["distance"]  # 1-based, the cue's sentence
    folder = tmp_path / "data"
    shutil.copytree(data, folder)
    blocks = (folder / "test.fr.conllu").read_text(encoding="utf-8").split("\n\n")
    rows = blocks[cue_line - 1].split("\n")
    level = "T" if flip["changed"][0]["from"].lower() in ("tu", "te", "toi") else "V"
    for n, row in enumerate(rows):
        cols = row.split("\t")
        if len(cols) == 10 and cols[3] == "DET":
            owned = "votre" if level == "V" else ("ta" if "Gender=Fem" in cols[5] else "ton")
            old, cols[1], cols[2] = cols[1], owned, "ton" if level == "T" else "votre"
            cols[5] = "Number=Sing|Person=2|Poss=Yes|PronType=Prs"
            rows[n] = "\t".join(cols)
            break
    else:
        pytest.skip("the cue's sentence has no determiner to make possessive")
    text = lines(folder / "test.fr")
    text[cue_line - 1] = " ".join(owned if w == old else w for w in text[cue_line - 1].split())
    rows = [f"# text = {text[cue_line - 1]}" if r.startswith("# text = ") else r for r in rows]
    blocks[cue_line - 1] = "\n".join(rows)
    (folder / "test.fr.conllu").write_text("\n\n".join(blocks), encoding="utf-8")
    (folder / "test.fr").write_text("".join(x + "\n" for x in text), encoding="utf-8")
    tags = tag_demo(folder, tmp_path)
    summary = build_from(folder, tags, tmp_path / "suite", lexicon=(str(folder / "train.fr.conllu"),), max_shift=1)
    counts = summary["counterfactual"]["phenomena"]["formality"]
    assert counts.get("cue_flip skipped: another T-V word in the context (it would keep the old level)", 0) >= 1
    cf = tmp_path / "suite" / "counterfactual"
    made = [json.loads(x) for x in lines(cf / "manifest.jsonl")]
    assert not any(
        r["edit"] == "cue_flip" and r["phenomenon"] == "formality" and r["source_line"] == flip["source_line"]
        for r in made
    )
    formality = get_language("fr").formality
    for r, entry in zip(made, json.loads((cf / "voita.json").read_text()), strict=True):
        if r["edit"] == "cue_flip" and r["phenomenon"] == "formality":
            context = " _eos ".join(entry["dst"][entry["true_ind"]].split(" _eos ")[:-1])
            levels = {formality.level(w) for w in context.replace("'", "' ").split()} - {None}
            assert len(levels) == 1 and sum(bool(formality.level(w)) for w in context.split()) == 1, context


def test_a_plural_earlier_mention_is_not_flipped_to_a_singular_form(tmp_path):
    """Lexical cohesion: the cue "banques" (plural) of a later "banque"; its flip would put the
    group's other translation, singular, in its place (les rive sont fermées): skipped and counted,
    while the singular cue of another document is flipped."""

    def rows(det, det_feats, noun, lemma, feats, verb, verb_feats, adj, adj_lemma, adj_feats):
        return [
            (det, "le", "DET", det_feats, 2, "det", "_"),
            (noun, lemma, "NOUN", feats, 4, "nsubj", "_"),
            (verb, "être", "AUX", verb_feats, 4, "cop", "_"),
            (adj, adj_lemma, "ADJ", adj_feats, 0, "root", "_"),
            (".", ".", "PUNCT", "_", 4, "punct", "_"),
        ]

    sing = ("la", "Definite=Def|Gender=Fem|Number=Sing|PronType=Art")
    is_ = ("est", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin")
    corpus = [  # (doc, source, target rows, tagged token)
        (
            "a",
            "the banks are closed .",
            rows(
                "les",
                "Definite=Def|Number=Plur|PronType=Art",
                "banques",
                "banque",
                "Gender=Fem|Number=Plur",
                "sont",
                "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin",
                "fermées",
                "fermé",
                "Gender=Fem|Number=Plur",
            ),
            None,
        ),
        (
            "a",
            "the bank is solid .",
            rows(*sing, "banque", "banque", "Gender=Fem|Number=Sing", *is_, "solide", "solide", "Number=Sing"),
            1,
        ),
        (
            "c",
            "the bank is old .",
            rows(
                *sing, "banque", "banque", "Gender=Fem|Number=Sing", *is_, "vieille", "vieux", "Gender=Fem|Number=Sing"
            ),
            None,
        ),
        (
            "c",
            "the bank is solid .",
            rows(*sing, "banque", "banque", "Gender=Fem|Number=Sing", *is_, "solide", "solide", "Number=Sing"),
            1,
        ),
        (
            "d",
            "the bank is wide .",
            rows(*sing, "rive", "rive", "Gender=Fem|Number=Sing", *is_, "large", "large", "Number=Sing"),
            None,
        ),
        (
            "d",
            "the bank is wide .",
            rows(*sing, "rive", "rive", "Gender=Fem|Number=Sing", *is_, "large", "large", "Number=Sing"),
            None,
        ),
    ]
    dump, conllu = [], []
    for n, (doc, _, tgt_rows, tagged) in enumerate(corpus):
        first = n == 0 or corpus[n - 1][0] != doc
        if first:
            dump.append([])
        dump[-1].append(
            [{"token": r[0], "tags": ["lexical_cohesion"] if k == tagged else []} for k, r in enumerate(tgt_rows)]
        )
        conllu.append(_conllu(tgt_rows, first))
    (tmp_path / "src.en").write_text("".join(c[1] + "\n" for c in corpus))
    (tmp_path / "ref.fr").write_text("".join(" ".join(r[0] for r in c[2]) + "\n" for c in corpus))
    (tmp_path / "docids").write_text("".join(c[0] + "\n" for c in corpus))
    (tmp_path / "t.json").write_text(json.dumps(dump))
    (tmp_path / "t.tgt.conllu").write_text("".join(conllu))
    (tmp_path / "t.align").write_text("0-0 1-1 2-2 3-3 4-4\n" * len(corpus))
    summary = build_from(
        tmp_path,
        tmp_path / "t.json",
        tmp_path / "suite",
        names=("src.en", "ref.fr", "docids"),
        phenomena=("lexical_cohesion",),
        max_shift=1,
    )
    counts = summary["counterfactual"]["phenomena"]["lexical_cohesion"]
    assert counts["groups with a cue"] == 2 and counts["cue_flip"] == 1, counts
    assert any(k.startswith("cue_flip skipped: the earlier mention") for k in counts), counts
    flips = [json.loads(x) for x in lines(tmp_path / "suite" / "counterfactual" / "manifest.jsonl")]
    (flip,) = [r for r in flips if r["edit"] == "cue_flip"]
    assert flip["source_doc"] == "c" and flip["changed"][0]["from"] == "banque" and flip["word"] == "rive"


def test_a_predicate_adjective_of_the_antecedent_follows_its_new_gender(tmp_path):
    """La maison est grande . Elle est belle . : the antecedent flipped to jardin takes its
    predicate adjective along (le jardin est grand), or the context would keep a feminine cue; and
    the new source noun fits the source's article (an apple, never an garden)."""
    pron = "Number=Sing|Person=3|PronType=Prs"
    aux = ("est", "être", "AUX", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin")
    art = {
        "Fem": ("la", "Definite=Def|Gender=Fem|Number=Sing|PronType=Art"),
        "Masc": ("le", "Definite=Def|Gender=Masc|Number=Sing|PronType=Art"),
    }

    def copula(en_noun, noun, gender, adj, adj_lemma, entity=""):
        det, det_feats = art[gender]
        src = [
            ("the", "the", "DET", "Definite=Def|PronType=Art", 2, "det", "_"),
            (en_noun, en_noun, "NOUN", "Number=Sing", 4, "nsubj", entity or "_"),
            ("is", "be", "AUX", "Mood=Ind|Tense=Pres|VerbForm=Fin", 4, "cop", "_"),
            ("big", "big", "ADJ", "Degree=Pos", 0, "root", "_"),
            (".", ".", "PUNCT", "_", 4, "punct", "_"),
        ]
        tgt = [
            (det, "le", "DET", det_feats, 2, "det", "_"),
            (noun, noun, "NOUN", f"Gender={gender}|Number=Sing", 4, "nsubj", "_"),
            (*aux, 4, "cop", "_"),
            (adj, adj_lemma, "ADJ", f"Gender={gender}|Number=Sing", 0, "root", "_"),
            (".", ".", "PUNCT", "_", 4, "punct", "_"),
        ]
        return src, tgt, None

    def like(en_noun, noun, gender, entity="", article="the"):
        det, det_feats = art[gender]
        src = [
            ("we", "we", "PRON", "Number=Plur|Person=1|PronType=Prs", 2, "nsubj", "_"),
            ("like", "like", "VERB", "Tense=Pres|VerbForm=Fin", 0, "root", "_"),
            (article, article, "DET", "Definite=Def|PronType=Art", 4, "det", "_"),
            (en_noun, en_noun, "NOUN", "Number=Sing", 2, "obj", entity or "_"),
            (".", ".", "PUNCT", "_", 2, "punct", "_"),
        ]
        tgt = [
            ("nous", "nous", "PRON", "Number=Plur|Person=1|PronType=Prs", 2, "nsubj", "_"),
            ("aimons", "aimer", "VERB", "Mood=Ind|Number=Plur|Person=1|Tense=Pres|VerbForm=Fin", 0, "root", "_"),
            (det, "le", "DET", det_feats, 4, "det", "_"),
            (noun, noun, "NOUN", f"Gender={gender}|Number=Sing", 2, "obj", "_"),
            (".", ".", "PUNCT", "_", 2, "punct", "_"),
        ]
        return src, tgt, None

    def it_is(entity):
        src = [
            ("it", "it", "PRON", pron, 3, "nsubj", entity),
            ("is", "be", "AUX", "Mood=Ind|Tense=Pres|VerbForm=Fin", 3, "cop", "_"),
            ("beautiful", "beautiful", "ADJ", "Degree=Pos", 0, "root", "_"),
            (".", ".", "PUNCT", "_", 3, "punct", "_"),
        ]
        tgt = [
            ("elle", "il", "PRON", f"Gender=Fem|{pron}", 3, "nsubj", "_"),
            (*aux, 3, "cop", "_"),
            ("belle", "belle", "ADJ", "_", 0, "root", "_"),
            (".", ".", "PUNCT", "_", 3, "punct", "_"),
        ]
        return src, tgt, 0

    corpus = [
        ("a", *copula("house", "maison", "Fem", "grande", "grand", "Entity=(e1-object)")),
        ("a", *it_is("Entity=(e1-object)")),
        ("b", *like("house", "maison", "Fem", "Entity=(e2-object)")),
        ("b", *it_is("Entity=(e2-object)")),
        ("c", *like("garden", "jardin", "Masc")),
        ("d", *copula("garden", "jardin", "Masc", "grand", "grand")),
        # an apple: the only noun of the other gender, garden, does not fit "an" (never "an garden")
        ("e", *like("apple", "pomme", "Fem", "Entity=(e3-object)", article="an")),
        ("e", *it_is("Entity=(e3-object)")),
    ]
    dump, src_conllu, tgt_conllu = [], [], []
    for n, (doc, src, tgt, tagged) in enumerate(corpus):
        first = n == 0 or corpus[n - 1][0] != doc
        if first:
            dump.append([])
        dump[-1].append([{"token": r[0], "tags": ["pronouns"] if k == tagged else []} for k, r in enumerate(tgt)])
        src_conllu.append(_conllu(src, first))
        tgt_conllu.append(_conllu(tgt, first))
    (tmp_path / "src.en").write_text("".join(" ".join(r[0] for r in c[1]) + "\n" for c in corpus))
    (tmp_path / "ref.fr").write_text("".join(" ".join(r[0] for r in c[2]) + "\n" for c in corpus))
    (tmp_path / "docids").write_text("".join(c[0] + "\n" for c in corpus))
    (tmp_path / "t.json").write_text(json.dumps(dump))
    (tmp_path / "t.src.conllu").write_text("".join(src_conllu))
    (tmp_path / "t.tgt.conllu").write_text("".join(tgt_conllu))
    (tmp_path / "t.align").write_text("".join(" ".join(f"{k}-{k}" for k in range(len(c[1]))) + "\n" for c in corpus))
    summary = build_from(
        tmp_path,
        tmp_path / "t.json",
        tmp_path / "suite",
        names=("src.en", "ref.fr", "docids"),
        phenomena=("pronouns",),
        max_shift=1,
    )
    voita = json.loads((tmp_path / "suite" / "counterfactual" / "voita.json").read_text())
    flips = [e for e in voita if e["edit"] == "cue_flip"]
    assert {e["dst"][e["true_ind"]].split(" _eos ")[0] for e in flips} == {
        "le jardin est grand .",
        "nous aimons le jardin .",
    }
    assert not any("an garden" in e["src"] for e in flips) and len(flips) == 2
    counts = summary["counterfactual"]["phenomena"]["pronouns"]
    assert counts["cue_flip skipped: no noun of the other gender after 'an' in the source"] == 1, counts
