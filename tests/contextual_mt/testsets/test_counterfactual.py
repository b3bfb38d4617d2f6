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


@pytest.fixture(scope="module")
def demo_suite(demo_corpus, tmp_path_factory):
    data = demo_corpus(train_docs=20, valid_docs=2, test_docs=30, seed=5)
    out = tmp_path_factory.mktemp("cf43-demo-suite")
    tags = tag_demo(data, out)
    summary = run_build(
        BuildOptions(
            str(data / "test.en"),
            str(data / "test.fr"),
            str(data / "test.docids"),
            str(tags),
            str(out / "suite"),
            "fr",
            lexicon=(str(data / "train.fr.conllu"),),
            counterfactual=True,
        )
    )
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
