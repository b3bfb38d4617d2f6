"""contextual-mt score: sacreBLEU, chrF, d-BLEU, COMET (at its narrowest boundary)."""

import json
import sys
import types
from typing import ClassVar, List

import pytest
import sacrebleu

from contextual_mt.errors import InputError
from contextual_mt.metrics import join_documents, score, score_files
from tests.helpers import BIN, contextual_mt_cli, run

HYPS = ["the cat sat on the mat", "it was happy", "a dog barked", "", "the end"]
REFS = ["the cat sat on a mat", "it was very happy", "a dog barked loudly", "silence", "the end"]
DOCS = ["d1", "d1", "d2", "d2", "d1"]  # the last d1 is a new document (not adjacent)


def test_sentence_metrics_match_sacrebleu():
    r = score(HYPS, REFS)
    assert r["bleu"]["score"] == pytest.approx(sacrebleu.corpus_bleu(HYPS, [REFS]).score)
    assert r["chrf"]["score"] == pytest.approx(sacrebleu.corpus_chrf(HYPS, [REFS]).score)
    assert r["bleu"]["signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")


def test_document_bleu_is_bleu_over_concatenated_documents():
    assert join_documents(HYPS, DOCS) == ["the cat sat on the mat it was happy", "a dog barked", "the end"]
    r = score(HYPS, REFS, DOCS)
    manual = sacrebleu.corpus_bleu(
        ["the cat sat on the mat it was happy", "a dog barked", "the end"],
        [["the cat sat on a mat it was very happy", "a dog barked loudly silence", "the end"]],
    )
    assert r["d_bleu"]["score"] == pytest.approx(manual.score)
    assert r["d_bleu"]["score"] != pytest.approx(r["bleu"]["score"])


def test_comet_scoring_code_path(monkeypatch):
    """unbabel-comet cannot download models here; the call into it is checked with a stand-in
    module that records what contextual-mt passes and returns COMET's output structure."""
    calls = {}

    class Output:
        scores: ClassVar[List[float]] = [0.5, 0.25, 0.75, 0.0, 1.0]
        system_score = 0.5

    class Model:
        dtype = "torch.float32"

        def predict(self, data, batch_size, gpus, progress_bar):
            calls.update(data=data, batch_size=batch_size, gpus=gpus)
            return Output()

    fake = types.SimpleNamespace(
        download_model=lambda name: calls.setdefault("path", f"/models/{name}.ckpt"),
        load_from_checkpoint=lambda path: calls.setdefault("loaded", path) and Model(),
    )
    monkeypatch.setitem(sys.modules, "comet", fake)
    r = score(HYPS, REFS, srcs=["s"] * 5, comet_model="Unbabel/wmt22-comet-da", comet_batch_size=3)
    assert r["comet"]["score"] == 0.5 and r["comet"]["segments"][2] == 0.75
    assert calls["loaded"] == "/models/Unbabel/wmt22-comet-da.ckpt"
    assert calls["data"][1] == {"src": "s", "mt": "it was happy", "ref": "it was very happy"}
    assert calls["batch_size"] == 3 and calls["gpus"] in (0, 1)


def test_comet_offline_says_how_to_get_the_model(monkeypatch):
    def no_network(name):
        raise ConnectionError("no network")

    monkeypatch.setitem(sys.modules, "comet", types.SimpleNamespace(download_model=no_network))
    with pytest.raises(InputError, match=r"could not be downloaded.*comet\.download_model"):
        score(HYPS, REFS, srcs=["s"] * 5, comet_model="Unbabel/wmt22-comet-da")


def test_comet_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "comet", None)
    with pytest.raises(InputError, match=r"pip install -e '\.\[comet\]'"):
        score(HYPS, REFS, srcs=["s"] * 5, comet_model="x")


def test_cli_json_and_summary(tmp_path):
    for name, rows in (("hyp", HYPS), ("ref", REFS), ("ids", DOCS)):
        (tmp_path / name).write_text("\n".join(rows) + "\n")
    out = tmp_path / "scores.json"
    proc = run(
        [
            str(BIN / "contextual-mt"),
            "score",
            "--hyp",
            str(tmp_path / "hyp"),
            "--ref",
            str(tmp_path / "ref"),
            "--docids",
            str(tmp_path / "ids"),
            "--output",
            str(out),
        ]
    )
    first = proc.stdout.strip().splitlines()[0]
    assert first.startswith("BLEU ") and "chrF" in first and "d-BLEU" in first
    data = json.loads(out.read_text())
    assert set(data) >= {"bleu", "chrf", "d_bleu", "files"}


def test_mismatched_lengths_name_the_files(tmp_path):
    (tmp_path / "hyp").write_text("a\nb\n")
    (tmp_path / "ref").write_text("a\n")
    with pytest.raises(InputError, match=r"hyp: has 2 lines but .*ref has 1"):
        score_files(str(tmp_path / "hyp"), str(tmp_path / "ref"))


def score_cli(*args):
    proc = contextual_mt_cli("score", *args)  # in this process
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: "), last
    return last


def test_empty_files_are_one_clear_error(tmp_path):
    (tmp_path / "hyp").write_text("")
    (tmp_path / "ref").write_text("")
    assert (
        score_cli("--hyp", tmp_path / "hyp", "--ref", tmp_path / "ref")
        == f"error: {tmp_path / 'hyp'}: hypothesis file is empty"
    )
    (tmp_path / "hyp").write_text("a b c\n")
    with pytest.raises(InputError, match=f"^{tmp_path / 'ref'}: reference file is empty$"):
        score_files(str(tmp_path / "hyp"), str(tmp_path / "ref"))
    with pytest.raises(InputError, match="no sentences to score"):
        score([], [])


def test_bad_comet_batch_size_and_unwritable_outputs(tmp_path):
    for name, rows in (("hyp", HYPS), ("ref", REFS)):
        (tmp_path / name).write_text("\n".join(rows) + "\n")
    files = ["--hyp", tmp_path / "hyp", "--ref", tmp_path / "ref"]
    assert score_cli(*files, "--comet-batch-size", "0") == "error: --comet-batch-size must be >= 1 (got 0)"
    with pytest.raises(InputError, match=r"--comet-batch-size must be >= 1 \(got -1\)"):
        score(HYPS, REFS, comet_batch_size=-1)
    assert score_cli(*files, "--output", tmp_path).startswith(f"error: {tmp_path}: is a directory")
    under_file = tmp_path / "hyp" / "scores.json"
    assert score_cli(*files, "--output", under_file).startswith(f"error: {under_file}: cannot write here")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hyp", "ref"]


def test_a_byte_order_mark_changes_no_score(tmp_path):
    """Hypotheses, references and document ids saved with a UTF-8 BOM score as without (the BOM
    once made line 1 a document of its own, and a word of its own)."""
    plain, bom = tmp_path / "plain", tmp_path / "bom"
    for folder, head in ((plain, ""), (bom, "\ufeff")):
        folder.mkdir()
        for name, rows in (("hyp", HYPS), ("ref", REFS), ("ids", ["d1"] * 2 + DOCS[2:])):
            (folder / name).write_text(head + "\n".join(rows) + "\n", encoding="utf-8")
    a, b = (score_files(str(d / "hyp"), str(d / "ref"), docids=str(d / "ids")) for d in (plain, bom))
    for metric in ("bleu", "chrf", "d_bleu"):
        assert b[metric]["score"] == a[metric]["score"], metric


def test_sacrebleus_tokenized_text_warning_is_one_line_of_ours_once(monkeypatch, caplog):
    """Issue 50.6: sacreBLEU's three lines ("That's 100 lines that end in a tokenized period",
    "It looks like you forgot to detokenize ...", "... the `force` parameter"), per scored file
    and again for d-BLEU, become one line saying why tokenized text is harmless here, once in a
    process that scores three systems (as the demo does)."""
    import logging

    from muda.evaluation import metrics as muda_metrics

    monkeypatch.setattr(muda_metrics._TokenizedTextNote, "said", False)
    refs = [f"le chat {k} est là ." for k in range(120)]
    ids = [f"d{k // 10}" for k in range(120)]
    with caplog.at_level(logging.WARNING):
        for system in range(3):
            score([r.replace("chat", "chien") if system else r for r in refs], refs, docids=ids)
    said = [r.getMessage() for r in caplog.records if r.name == "sacrebleu"]
    assert said == [muda_metrics.TOKENIZED_TEXT_NOTE], said
    assert "not comparable with BLEU published on detokenized text" in said[0]
