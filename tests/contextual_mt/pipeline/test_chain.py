"""The whole study on one language pair through make, on CPU (the shared chain of conftest.py): a
synthetic TED-format corpus -> make data -> make train PRESET=tiny (both models) -> make translate
-> make score -> make pcxmi -> make muda-eval -> make table -> make contrastive; then `make all`
again does nothing, and stale state is refused."""

import json
from pathlib import Path

import pytest

from tests.contextual_mt.pipeline.chain import make
from tests.helpers import BIN, run

SYSTEMS = ("sentence", "context", "context-gold")


@pytest.fixture
def study(make_chain):
    """The make chain of this run (conftest.py, chain.py), shared with the stale-state tests."""
    return make_chain


def lines(path):
    return Path(path).read_text(encoding="utf-8").splitlines()


def test_data_stage(study):
    data, demo = study["work"] / "data" / "fr", study["demo"]
    for split in ("train", "valid", "test"):
        for side in ("en", "fr", "docids"):
            assert len(lines(data / f"{split}.{side}")) == len(lines(demo / f"{split}.en")), (split, side)
    # Moses tokenization undone: the demo's 'Hi Paul , my friend .' is 'Hi Paul, my friend.'
    first = lines(demo / "test.en")[0]
    assert lines(data / "test.en")[0] == first.replace(" ,", ",").replace(" .", ".")
    assert (data / "spm.model").exists()
    vocab = lines(data / "bin" / "dict.fr.txt")
    assert any(v.startswith("<brk> ") for v in vocab) and any(v.startswith("<mask> ") for v in vocab)
    assert (data / "bin" / "test.en-fr.docids").read_text() == (data / "test.docids").read_text()
    summary = json.loads((data / "summary.json").read_text())
    assert {split: summary["splits"][split]["dropped"] for split in study["nulls"]} == study["nulls"]
    assert summary["input"]["detokenized"]["tool"].startswith("sacremoses")


def test_training_stage(study):
    import torch

    for model, size, sample in (("sentence", 0, False), ("context", 3, True)):
        save = study["work"] / "checkpoints" / "fr" / model
        done = json.loads((save / ".stage" / "train.json").read_text())
        assert done["preset"] == "tiny" and done["gpus"] == 0 and done["num_updates"] > 0 and done["epochs"] == 3
        assert "common.cpu=true" in done["command"]
        task = torch.load(save / "checkpoint_best.pt", map_location="cpu", weights_only=False)["cfg"]["task"]
        assert task["target_context_size"] == size and task["sample_context_size"] is sample
        assert task["coword_dropout"] == (0.1 if sample else 0.0)
        assert (save / "dict.fr.txt").exists()


def test_translation_and_scores(study):
    work = study["work"]
    n = len(lines(work / "data" / "fr" / "test.en"))
    for system in SYSTEMS:
        hyps = lines(work / "results" / "fr" / f"{system}.test.fr")
        assert len(hyps) == n and sum(bool(h.strip()) for h in hyps) > n // 2
    scores = json.loads((work / "results" / "fr" / "scores.json").read_text())
    assert list(scores["systems"]) == list(SYSTEMS)
    for r in scores["systems"].values():
        assert {"bleu", "chrf", "d_bleu"} <= set(r) and 0 <= r["bleu"]["score"] <= 100
    assert "BLEU" in study["logs"]["score"].stdout
    # how each was decoded: on CPU, predicted context in waves (the auto rule); others in one pass
    record = json.loads((work / "results" / "fr" / "translate.json").read_text())
    assert {s: record[s]["decoding"]["decoding"] for s in SYSTEMS} == {
        "sentence": "one pass",
        "context": "sequential",
        "context-gold": "one pass",
    }


def test_testset_stage(study):
    results = study["work"] / "results" / "fr"
    summary = json.loads((results / "testset" / "summary.json").read_text())
    assert summary["groups"] > 0 and summary["lines"] == len(lines(study["work"] / "data" / "fr" / "test.en"))
    assert "groups" in study["logs"]["testset"].stdout
    # muda-eval adds the generative evaluation of the translations on these suites
    result = json.loads((results / "muda" / "testset_eval.json").read_text())
    assert list(result["systems"])[:1] == ["sentence.test.fr"]
    assert "generative evaluation" in study["logs"]["muda-eval"].stdout
    # its record: a re-run with the same inputs builds nothing; a changed input rebuilds
    record = json.loads((results / ".stage" / "testset.json").read_text())
    assert record["stage"] == "testset" and "voita.json" in " ".join(record["outputs"])
    again = make("testset", *study["variables"])
    assert "up to date" in again.stdout and "groups" in again.stdout
    (results / "testset" / "voita.json").write_text("{}\n")  # an output changed: not up to date
    rebuilt = make("testset", *study["variables"])
    assert "up to date" not in rebuilt.stdout and json.loads((results / "testset" / "voita.json").read_text())


def test_attribute_stage(study):
    results = study["work"] / "results" / "fr"
    summary = json.loads((results / "attribution.summary.json").read_text())
    records = lines(results / "attribution.jsonl")
    assert summary["sentences"] == len(records) == len(lines(study["work"] / "data" / "fr" / "test.en"))
    assert summary["scored"] == "reference" and summary["target_context_size"] == 3
    assert "context-sensitive" in study["logs"]["attribute"].stdout
    again = make("attribute", *study["variables"])
    assert "up to date" in again.stdout


def test_pcxmi_and_muda(study):
    results = study["work"] / "results" / "fr"
    n = len(lines(study["work"] / "data" / "fr" / "test.en"))
    assert len(lines(results / "pcxmi.jsonl")) == n
    assert (results / "report" / "report.md").exists() and (results / "report" / "viewer.html").exists()
    evaluation = json.loads((results / "muda" / "eval.json").read_text())
    assert len(evaluation["systems"]) == 3
    assert (results / "muda" / "eval.png").exists()


def test_table(study):
    table = study["work"] / "results" / "table"
    text = (table / "table.md").read_text()
    assert "fr" in text and "context-gold" in text
    assert (table / "table.csv").exists() and (table / "table.png").read_bytes()[:4] == b"\x89PNG"


def test_contrastive_stage(study):
    folder = study["work"] / "results" / "fr" / "contrastive"
    entries = json.loads((study["demo"] / "test.contrastive.json").read_text())
    n = sum(len(e["dst"]) for e in entries)
    for system in ("sentence", "context", "context-0"):
        assert len(lines(folder / f"test.contrastive.{system}.scores")) == n
        summary = json.loads((folder / f"test.contrastive.{system}.json").read_text())
        assert summary["groups"] == len(entries) and summary["detokenized"] is True  # as the data stage did
    assert json.loads((folder / "test.contrastive.context-0.json").read_text())["target_context_size"] == 0
    assert json.loads((folder / "test.contrastive.context.json").read_text())["target_context_size"] == 3
    table = json.loads((folder / "summary.json").read_text())
    assert set(table["test.contrastive"]) >= {"sentence", "context", "context-0"}
    before = {p: p.stat().st_mtime_ns for p in folder.glob("*.scores")}
    proc = make("contrastive", "LANG=fr", f"WORK={study['work']}", study["sets"])
    assert "up to date" in proc.stderr and {p: p.stat().st_mtime_ns for p in folder.glob("*.scores")} == before


def test_make_all_again_does_nothing(study):
    work = study["work"]
    outputs = [
        work / "data" / "fr" / "bin" / "train.en-fr.fr.bin",
        work / "data" / "fr" / "spm.model",
        *(work / "checkpoints" / "fr" / m / "checkpoint_best.pt" for m in ("sentence", "context")),
        *(work / "results" / "fr" / f"{s}.test.fr" for s in SYSTEMS),
        work / "results" / "fr" / "scores.json",
        work / "results" / "fr" / "pcxmi.jsonl",
        work / "results" / "fr" / "muda" / "eval.json",
    ]
    before = {p: p.stat().st_mtime_ns for p in outputs}
    proc = make("all", *study["variables"])
    log = proc.stdout + proc.stderr
    assert {p: p.stat().st_mtime_ns for p in outputs} == before
    assert "already trained" in log and "up to date" in log
    assert f"{work / 'data' / 'fr'}: up to date" in proc.stdout and "wrote " not in proc.stdout  # the data stage


def test_stale_state_is_refused(study):
    work = study["work"]
    # other settings than the checkpoints were trained with: refused before any training
    proc = run(
        [
            str(BIN / "contextual-mt"),
            "pipeline",
            "train",
            "--lang",
            "fr",
            "--root",
            str(work),
            "--preset",
            "small",
            "--model",
            "sentence",
        ],
        check=False,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "other data or settings" in last and "--overwrite" in last
    # a translation edited by hand is stale: translated again, the others are kept
    sentence = work / "results" / "fr" / "sentence.test.fr"
    context = work / "results" / "fr" / "context.test.fr"
    good, kept = sentence.read_text(), context.stat().st_mtime_ns
    sentence.write_text("edited\n" * len(good.splitlines()))
    proc = make("translate", *study["variables"])
    assert sentence.read_text() == good and context.stat().st_mtime_ns == kept
    assert "context: up to date" in proc.stderr
