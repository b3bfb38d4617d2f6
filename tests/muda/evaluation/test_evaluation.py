"""muda eval: P/R/F by hand, bootstrap, fairseq-generate output, bad input, and the demo systems."""

import json
import random
import subprocess

import numpy as np
import pytest

from commandkit.errors import InputError
from muda.evaluation.significance import bootstrap_samples, paired_bootstrap
from muda.evaluation.words import NO_TAG, document_counts, match, prf, scores, sentence_counts
from muda.formats.hypotheses import parse_fairseq_output, read_hypotheses
from tests.muda.helpers import MUDA_SCRIPT


def toks(spec):
    """'il/pronouns mange la/x pomme' -> tag dump tokens."""
    out = []
    for item in spec.split():
        word, _, tags = item.partition("/")
        out.append({"token": word, "tags": tags.split(",") if tags else []})
    return out


def test_kth_occurrence_matching():
    ref_ok, hyp_ok = match(["a", "b", "a", "a"], ["a", "a", "c"])
    assert ref_ok == [True, False, True, False] and hyp_ok == [True, True, False]


def test_prf_by_hand_with_repeated_words_and_one_sided_tags():
    ref = toks("il/pronouns voit il/pronouns et elle/pronouns tu/formality")
    hyp = toks("il/pronouns voit elle/pronouns et il vous/formality")
    c = sentence_counts(ref, hyp)
    # ref pronouns: il(1st) matched, il(2nd) matched (hyp has two 'il'), elle matched -> 3/3
    # hyp pronouns: il matched, elle matched -> 2/2; ref formality 'tu' unmatched; hyp 'vous' unmatched
    assert list(c["pronouns"]) == [3, 3, 2, 2]
    assert list(c["formality"]) == [1, 0, 1, 0]
    assert list(c[NO_TAG]) == [2, 2, 3, 3]
    only_hyp = sentence_counts(toks("a b"), toks("a/formality b"))
    p, r, f = prf(only_hyp["formality"])
    assert (p, r, f) == (1.0, 0.0, 0.0)  # tag only in the hypothesis: recall undefined -> 0
    only_ref = sentence_counts(toks("a/formality b"), toks("b c"))
    assert tuple(prf(only_ref["formality"])) == (0.0, 0.0, 0.0)
    empty = sentence_counts(toks("il/pronouns mange"), [])
    assert list(empty["pronouns"]) == [1, 0, 0, 0] and list(empty[NO_TAG]) == [1, 0, 0, 0]
    # P = 3/4, R = 3/5 -> F = 2/3
    p, r, f = prf(np.array([5, 3, 4, 3]))
    assert (p, r) == (0.75, 0.6) and f == pytest.approx(2 / 3)


def test_document_counts_and_scores():
    ref = [[toks("il/pronouns mange"), toks("tu/formality viens")], [toks("elle/pronouns dort")]]
    hyp = [[toks("il/pronouns mange"), toks("vous/formality venez")], [toks("il dort")]]
    tags = ["formality", "pronouns", NO_TAG]
    counts = document_counts(ref, hyp, tags)
    assert counts.shape == (2, 3, 4)
    s = scores(counts, tags)
    assert s["pronouns"].recall == 0.5 and s["pronouns"].precision == 1.0
    assert s["formality"].f == 0.0 and s[NO_TAG].ref_words == 3


def test_bootstrap_is_deterministic_and_sensible():
    rng = np.random.default_rng(0)
    good = np.zeros((40, 1, 4), dtype=np.int64)
    bad = np.zeros((40, 1, 4), dtype=np.int64)
    good[:, 0] = [10, 9, 10, 9]
    bad[:, 0] = [10, 5, 10, 5]
    bad[:, 0, 1] = rng.integers(3, 7, 40)
    s1, s2 = bootstrap_samples(40, 200, seed=3), bootstrap_samples(40, 200, seed=3)
    assert (s1 == s2).all() and not (s1 == bootstrap_samples(40, 200, seed=4)).all()
    p = paired_bootstrap(good, bad, s1)
    assert p.tolist() == paired_bootstrap(good, bad, s2).tolist() and p[0] < 0.01
    assert paired_bootstrap(good, good, s1)[0] == 1.0  # no difference: never significant


FAIRSEQ = """S-2\tit is red .
T-2\til est rouge .
H-2\t-0.3\til est rouge .
D-2\t-0.3\til est rouge .
P-2\t-0.1 -0.2
S-0\thello .
H-0\t-0.1\tbonjour .
D-0\t-0.1\tbonjour .
H-1\t-0.2\t
D-1\t-0.2\t
Generate test with beam=4: BLEU4 = 50.0
"""


def test_fairseq_output_in_any_order(tmp_path):
    lines = FAIRSEQ.splitlines()
    random.Random(0).shuffle(lines)
    (tmp_path / "gen.out").write_text("\n".join(lines) + "\n")
    assert read_hypotheses(str(tmp_path / "gen.out"), 3) == ["bonjour .", "", "il est rouge ."]
    no_d = [text for text in lines if not text.startswith("D-")]
    assert parse_fairseq_output(no_d, "x", 3) == ["bonjour .", "", "il est rouge ."]


def test_fairseq_output_with_missing_ids_is_an_error(tmp_path):
    lines = [text for text in FAIRSEQ.splitlines() if not text.startswith(("H-0", "D-0"))]
    with pytest.raises(InputError, match=r"gen.out: hypotheses missing for 1 sample ids \(0\) of 3"):
        parse_fairseq_output(lines, "gen.out", 3)
    with pytest.raises(InputError, match="sample id 2 but the reference has only 2 lines"):
        parse_fairseq_output(FAIRSEQ.splitlines(), "gen.out", 2)
    (tmp_path / "plain").write_text("a\nb\n")
    with pytest.raises(InputError, match="plain: has 2 lines but the reference has 3"):
        read_hypotheses(str(tmp_path / "plain"), 3)


def eval_args(d, *extra):
    return [
        "eval",
        "--src",
        str(d / "test.en"),
        "--ref",
        str(d / "test.fr"),
        "--docids",
        str(d / "test.docids"),
        "--tgt-lang",
        "fr",
        "--src-conllu",
        str(d / "test.en.conllu"),
        "--ref-conllu",
        str(d / "test.fr.conllu"),
        "--ref-alignments",
        str(d / "test.align"),
        "--lexicon",
        str(d / "train.en.conllu"),
        str(d / "train.fr.conllu"),
        str(d / "train.align"),
        *extra,
    ]


def test_eval_end_to_end_on_demo_systems(demo, tmp_path):
    out = tmp_path / "eval.json"
    proc = subprocess.run(
        [
            str(MUDA_SCRIPT),
            *eval_args(
                demo,
                "--hyps",
                str(demo / "sentence.txt"),
                str(demo / "context.txt"),
                "--names",
                "sentence",
                "context",
                "--output",
                str(out),
                "--plot",
                str(tmp_path / "eval.png"),
                "--bootstrap",
                "200",
                "--seed",
                "5",
            ),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(out.read_text())
    ctx, sent = r["systems"]["context"], r["systems"]["sentence"]
    assert (
        ctx["tags"]["pronouns"]["f"] == 1.0
        and ctx["tags"]["formality"]["f"] == 1.0
        and ctx["bleu"] == pytest.approx(100)
    )
    assert sent["tags"]["pronouns"]["recall"] == 0.0  # every tagged pronoun was replaced
    [cmp] = r["comparisons"]
    assert cmp["tags"]["pronouns"]["f"] < 0.05 and cmp["bleu_p"] < 0.05
    assert "sentence vs context" in proc.stdout and "pronouns" in proc.stdout
    assert (tmp_path / "eval.png").stat().st_size > 1000
    # the same seed gives the same p-values
    again = subprocess.run(
        [
            str(MUDA_SCRIPT),
            *eval_args(
                demo,
                "--hyps",
                str(demo / "sentence.txt"),
                str(demo / "context.txt"),
                "--names",
                "sentence",
                "context",
                "--output",
                str(tmp_path / "again.json"),
                "--bootstrap",
                "200",
                "--seed",
                "5",
            ),
        ],
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads((tmp_path / "again.json").read_text())["comparisons"] == r["comparisons"]


def test_eval_bad_input(demo, tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("\n".join((demo / "context.txt").read_text().splitlines()[:-1]) + "\n")
    proc = subprocess.run([str(MUDA_SCRIPT), *eval_args(demo, "--hyps", str(short))], capture_output=True, text=True)
    assert proc.returncode == 1 and "short.txt: has" in proc.stderr and "Traceback" not in proc.stderr
    # reference tags made from another reference: detected by the content hash in its summary
    other = tmp_path / "other.fr"
    other.write_text((demo / "test.fr").read_text().replace("maison", "demeure"))
    tagged = tmp_path / "other.tags.json"
    proc = subprocess.run(
        [
            str(MUDA_SCRIPT),
            "tag",
            "--src",
            str(demo / "test.en"),
            "--tgt",
            str(demo / "test.fr"),
            "--docids",
            str(demo / "test.docids"),
            "--tgt-lang",
            "fr",
            "--dump-tags",
            str(tagged),
            "--src-conllu",
            str(demo / "test.en.conllu"),
            "--tgt-conllu",
            str(demo / "test.fr.conllu"),
            "--alignments",
            str(demo / "test.align"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    args = eval_args(demo, "--hyps", str(demo / "context.txt"), "--ref-tags", str(tagged))
    args[args.index("--ref") + 1] = str(other)
    proc = subprocess.run([str(MUDA_SCRIPT), *args], capture_output=True, text=True)
    assert proc.returncode == 1 and "made from a different reference" in proc.stderr, proc.stderr[-2000:]


def test_eval_lexicon_without_source_annotations_is_one_clear_error(demo, tmp_path):
    """The lexicon has no parser and no coreference: without --src-conllu (or --ref-tags) the
    English source cannot be annotated. One 'error:' line naming --src-conllu, nothing written."""
    args = eval_args(
        demo,
        "--hyps",
        str(demo / "context.txt"),
        "--output",
        str(tmp_path / "out" / "eval.json"),
        "--plot",
        str(tmp_path / "out" / "eval.png"),
        "--table",
        str(tmp_path / "out" / "eval.txt"),
    )
    k = args.index("--src-conllu")
    del args[k : k + 2]
    proc = subprocess.run([str(MUDA_SCRIPT), *args], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "--src-conllu" in lines[0], proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "AttributeError" not in proc.stderr
    assert not (tmp_path / "out").exists() and not list(tmp_path.iterdir())


def test_make_muda_eval_on_the_documented_layout(demo, tmp_path):
    import shutil
    from pathlib import Path

    repo = Path(__file__).resolve().parents[3]
    data = tmp_path / "data" / "fr"
    data.mkdir(parents=True)
    for f in ("test.en", "test.fr", "test.docids", "test.en.conllu", "test.fr.conllu", "test.align"):
        shutil.copy(demo / f, data / f)
    lexicon = " ".join(str(demo / f) for f in ("train.en.conllu", "train.fr.conllu", "train.align"))
    make = [
        "make",
        "--no-print-directory",
        "-f",
        str(repo / "Makefile"),
        f"VENV={MUDA_SCRIPT.parent.parent}",
        "muda-eval",
        "LANG=fr",
        f"HYPS={demo / 'sentence.txt'} {demo / 'context.txt'}",
        f"MUDA_ARGS=--lexicon {lexicon}",
    ]
    proc = subprocess.run(make, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = tmp_path / "results" / "fr" / "muda"
    assert {p.name for p in out.iterdir()} >= {"reference.tags.json", "eval.json", "eval.txt", "eval.png"}
    assert json.loads((out / "eval.json").read_text())["systems"]["context.txt"]["tags"]["pronouns"]["f"] == 1.0
    again = subprocess.run(make, cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0 and "(cached)" in again.stdout
    missing = subprocess.run([*make[:-2], "HYPS=nope.txt"], cwd=tmp_path, capture_output=True, text=True)
    assert missing.returncode != 0 and "nope.txt not found" in missing.stderr


def test_eval_comet_loads_the_model_once_and_bootstraps(demo, tmp_path, monkeypatch):
    """COMET cannot be downloaded here: a stand-in module scores a segment 1.0 when the
    hypothesis equals the reference, else 0.0, and counts model loads."""
    import sys
    import types

    from muda.annotators.lexicon import LexiconAnnotator
    from muda.evaluation.evaluate import EvalOptions, run_eval
    from muda.evaluation.table import format_muda_table

    loads = []

    class Model:
        def predict(self, data, batch_size, gpus, progress_bar):
            scores = [float(d["mt"] == d["ref"]) for d in data]
            return types.SimpleNamespace(scores=scores, system_score=sum(scores) / len(scores))

    monkeypatch.setitem(
        sys.modules,
        "comet",
        types.SimpleNamespace(
            download_model=lambda name: "/models/x.ckpt", load_from_checkpoint=lambda p: loads.append(p) or Model()
        ),
    )
    d = demo
    options = EvalOptions(
        str(d / "test.en"),
        str(d / "test.fr"),
        str(d / "test.docids"),
        "fr",
        [str(d / "sentence.txt"), str(d / "context.txt")],
        names=["sentence", "context"],
        src_conllu=str(d / "test.en.conllu"),
        ref_conllu=str(d / "test.fr.conllu"),
        ref_alignments=str(d / "test.align"),
        bootstrap=100,
        seed=2,
        comet_model="Unbabel/wmt22-comet-da",
        work_dir=str(tmp_path / "w"),
    )
    r = run_eval(
        options, LexiconAnnotator(str(d / "train.en.conllu"), str(d / "train.fr.conllu"), str(d / "train.align"))
    )
    assert loads == ["/models/x.ckpt"]
    assert r["systems"]["context"]["comet"] == 1.0 and r["systems"]["sentence"]["comet"] < 1.0
    assert r["comparisons"][0]["comet_p"] < 0.05 and "COMET" in format_muda_table(r)


def test_comet_progress_bars_go_to_standard_error(capsys):
    """Issue 50.4: Lightning's own progress bars write to sys.stdout (a tqdm made with
    ``file=sys.stdout`` while the prediction runs); `score > file` must hold only the command's
    own lines, so every bar goes to standard error."""
    import sys
    import types

    from tqdm import tqdm

    from muda.evaluation.metrics import comet_predict

    class Model:
        def predict(self, data, batch_size, gpus, progress_bar):
            for _ in tqdm(data, desc="Predicting DataLoader 0", file=sys.stdout):  # as Lightning makes its bars
                pass
            return types.SimpleNamespace(scores=[0.5] * len(data), system_score=0.5)

    capsys.readouterr()
    out = comet_predict(Model(), ["a", "b"], ["x", "y"], ["x", "z"], "m", gpus=0)
    captured = capsys.readouterr()
    assert out["score"] == 0.5
    assert captured.out == "" and "Predicting DataLoader 0" in captured.err
