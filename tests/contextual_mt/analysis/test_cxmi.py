"""CXMI / P-CXMI: agreement with fairseq-generate --score-reference, units, controls, shards."""
import json
import math
import re
import subprocess

import numpy as np
import pytest

from tests.helpers import BIN, USER_DIR, run, train
from contextual_mt.analysis.cxmi import CxmiOptions, random_context_sources, run_cxmi, split_words
from contextual_mt.inference.checkpoint import ModelOptions
from muda.io import document_starts
from contextual_mt.errors import ContextualMTError


@pytest.fixture(scope="module")
def dynamic_model(data_bin, tmp_path_factory):
    save = tmp_path_factory.mktemp("cxmi_ckpt")
    train(data_bin, save, "-s", "en", "-t", "fr", "--source-context-size", "2", "--target-context-size", "2",
          "--sample-context-size", "--seed", "2", epochs=3)
    return save / "checkpoint_last.pt"


def records(path):
    return [json.loads(l) for l in path.read_text().splitlines()]


def cxmi(dynamic_model, raw_corpus, data_bin, out, source_context_size=None, target_context_size=None, **kw):
    model = ModelOptions(str(dynamic_model), data=str(data_bin), source_context_size=source_context_size,
                         target_context_size=target_context_size)
    return run_cxmi(CxmiOptions(model, str(raw_corpus / "test.en"), str(raw_corpus / "test.fr"),
                                str(raw_corpus / "test.docids"), str(out), progress=False, **kw))


def fairseq_positional_scores(data_bin, ckpt, size):
    out = run([str(BIN / "fairseq-generate"), str(data_bin), "--user-dir", USER_DIR, "--task",
               "document_translation", "--source-context-size", str(size), "--target-context-size", str(size),
               "--path", str(ckpt), "--score-reference", "--batch-size", "5", "--cpu", "--gen-subset", "test"]).stdout
    return {int(m.group(1)) + 1: [float(x) for x in m.group(2).split()]
            for m in re.finditer(r"^P-(\d+)\t(.*)$", out, re.M)}


def test_log_probs_equal_fairseq_score_reference(dynamic_model, raw_corpus, data_bin, tmp_path):
    summary = cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "p.jsonl", log_base="2")
    assert summary["unit"] == "bits"
    with_ctx = fairseq_positional_scores(data_bin, dynamic_model, 2)
    without = fairseq_positional_scores(data_bin, dynamic_model, 0)
    recs = records(tmp_path / "p.jsonl")
    assert [r["line"] for r in recs] == sorted(with_ctx)
    for r in recs:
        c, a = with_ctx[r["line"]], without[r["line"]]
        assert len(c) == len(r["tokens"]) == len(r["token_pcxmi"])
        assert abs(sum(c) - r["logprob_context"]) < 1e-3 and abs(sum(a) - r["logprob_no_context"]) < 1e-3
        for v, x, y in zip(r["token_pcxmi"], c, a):
            assert abs(v - (x - y)) < 2e-4  # fairseq prints 4 decimals


def test_zero_context_gives_exactly_zero(dynamic_model, raw_corpus, data_bin, tmp_path):
    summary = cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "z.jsonl", source_context_size=0,
                   target_context_size=0)
    assert summary["cxmi"] == 0.0
    assert all(v == 0.0 for r in records(tmp_path / "z.jsonl") for v in r["token_pcxmi"])


def test_words_sentences_units_and_corpus_value(dynamic_model, raw_corpus, data_bin, tmp_path):
    nats = cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "n.jsonl")
    bits = cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "b.jsonl", log_base="2")
    assert nats["unit"] == "nats" and nats["cxmi"] != 0.0
    assert bits["cxmi"] == pytest.approx(nats["cxmi"] / math.log(2), rel=1e-4)
    recs = records(tmp_path / "n.jsonl")
    assert nats["cxmi"] == pytest.approx(np.mean([r["sentence_pcxmi"] for r in recs]), abs=1e-6)
    for r in recs:
        assert r["tokens"][-1] == "</s>" and r["words"] == r["reference"].split()
        assert r["sentence_pcxmi"] == pytest.approx(sum(r["token_pcxmi"]), abs=1e-5)
        assert r["sentence_pcxmi"] == pytest.approx(sum(r["word_pcxmi"]) + r["token_pcxmi"][-1], abs=1e-5)
        assert r["sentence_pcxmi"] == pytest.approx(r["logprob_context"] - r["logprob_no_context"], abs=1e-5)
    first = [r for r in recs if r["sentence"] == 0]
    assert first and all(r["sentence_pcxmi"] == 0.0 for r in first)  # no context at a document start


def test_split_words():
    assert split_words(["▁la", "▁voit", "ure", "▁."]) == [("la", [0]), ("voiture", [1, 2]), (".", [3])]
    assert split_words(["vo@@", "is", "la"]) == [("vois", [0, 1]), ("la", [2])]


def test_random_context_comes_from_other_documents():
    ids = ["a"] * 4 + ["b"] * 5 + ["c"] * 3
    starts = document_starts(ids)
    sizes = np.minimum(2, np.arange(len(ids)) - starts)
    at = random_context_sources(starts, sizes, seed=4)
    for i in range(len(ids)):
        if sizes[i] == 0:
            assert at[i] == i
            continue
        assert ids[at[i]] != ids[i]  # another document
        assert at[i] - starts[at[i]] >= sizes[i]  # with as many preceding sentences
    assert np.array_equal(at, random_context_sources(starts, sizes, seed=4))


def test_random_context_lowers_cxmi_and_is_reported(dynamic_model, raw_corpus, data_bin, tmp_path):
    real = cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "r.jsonl")
    rand = cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "x.jsonl", random_context=True)
    assert rand["random_context"] and rand["cxmi"] != real["cxmi"]


def test_shards_merge_to_the_full_run(dynamic_model, raw_corpus, data_bin, tmp_path):
    full = cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "full.jsonl")
    for i in range(3):
        cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / f"s{i}.jsonl", shard=f"{i}/3")
    proc = run([str(BIN / "contextual-mt"), "cxmi-merge", *(str(tmp_path / f"s{i}.jsonl") for i in range(3)),
                "--output", str(tmp_path / "merged.jsonl")])
    assert "CXMI" in proc.stdout
    merged_recs, full_recs = records(tmp_path / "merged.jsonl"), records(tmp_path / "full.jsonl")
    assert [r["line"] for r in merged_recs] == [r["line"] for r in full_recs]
    for m, f in zip(merged_recs, full_recs):  # other batches, other padding: float noise only
        assert m["tokens"] == f["tokens"] and m["doc"] == f["doc"]
        assert np.allclose(m["token_pcxmi"], f["token_pcxmi"], atol=1e-4)
    merged = json.loads((tmp_path / "merged.summary.json").read_text())
    assert merged["cxmi"] == pytest.approx(full["cxmi"])
    with pytest.raises(ContextualMTError, match="appears in two shards"):
        from contextual_mt.analysis.cxmi import merge_shards

        merge_shards([str(tmp_path / "s0.jsonl"), str(tmp_path / "s0.jsonl")], str(tmp_path / "m2.jsonl"))


def test_resume_skips_finished_sentences(dynamic_model, raw_corpus, data_bin, tmp_path, monkeypatch):
    from contextual_mt.analysis import cxmi as module

    cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "full.jsonl")
    full = (tmp_path / "full.jsonl").read_text().splitlines()
    partial = tmp_path / "resumed.jsonl.partial"
    partial.write_text("\n".join(full[:5]) + "\n" + full[5][:40])  # interrupted mid-line
    scored = []
    original = module.FairseqScoringBackend.token_log_probs

    def spy(self, indices, context):
        scored.extend(indices)
        return original(self, indices, context)

    monkeypatch.setattr(module.FairseqScoringBackend, "token_log_probs", spy)
    cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "resumed.jsonl")
    assert len(set(scored)) == len(full) - 5  # only the unfinished sentences are scored
    resumed = records(tmp_path / "resumed.jsonl")
    assert [r["line"] for r in resumed] == [json.loads(l)["line"] for l in full]
    for r, f in zip(resumed, map(json.loads, full)):
        assert np.allclose(r["token_pcxmi"], f["token_pcxmi"], atol=1e-4)
    assert not partial.exists()


def cli(args):
    return subprocess.run([str(BIN / "contextual-mt"), "cxmi", *args], capture_output=True, text=True)


def test_warnings_and_errors(dynamic_model, raw_corpus, data_bin, tmp_path):
    files = ["--source", str(raw_corpus / "test.en"), "--reference", str(raw_corpus / "test.fr"),
             "--docids", str(raw_corpus / "test.docids"), "--data", str(data_bin), "--quiet"]
    proc = cli(["--path", str(dynamic_model), *files, "--output", str(tmp_path / "a.jsonl"),
                "--target-context-size", "4"])
    assert proc.returncode == 0 and "exceed those trained (2/2)" in proc.stderr
    fixed = tmp_path / "fixed"
    train(data_bin, fixed, "-s", "en", "-t", "fr", "--target-context-size", "2", epochs=1)
    proc = cli(["--path", str(fixed / "checkpoint_last.pt"), *files, "--output", str(tmp_path / "b.jsonl")])
    assert proc.returncode == 0 and "CXMI from it is not meaningful" in proc.stderr
    short = tmp_path / "short.fr"
    short.write_text("\n".join((raw_corpus / "test.fr").read_text().splitlines()[:-1]) + "\n")
    proc = cli(["--path", str(dynamic_model), "--source", str(raw_corpus / "test.en"), "--reference", str(short),
                "--docids", str(raw_corpus / "test.docids"), "--output", str(tmp_path / "c.jsonl")])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert str(short) in proc.stderr.strip().splitlines()[-1] and not (tmp_path / "c.jsonl").exists()


def test_make_pcxmi_on_the_documented_layout(dynamic_model, raw_corpus, data_bin, tmp_path):
    import shutil
    from pathlib import Path

    repo = Path(USER_DIR).parent
    venv = Path(BIN).parent
    data = tmp_path / "data" / "tst"
    ckpt = tmp_path / "checkpoints" / "tst" / "context"
    data.mkdir(parents=True)
    ckpt.mkdir(parents=True)
    shutil.copy(raw_corpus / "test.en", data / "test.en")
    shutil.copy(raw_corpus / "test.fr", data / "test.tst")
    shutil.copy(raw_corpus / "test.docids", data / "test.docids")
    shutil.copy(dynamic_model, ckpt / "checkpoint_best.pt")
    for d in data_bin.glob("dict.*.txt"):
        shutil.copy(d, ckpt / d.name)
    make = ["make", "--no-print-directory", "-f", str(repo / "Makefile"), f"VENV={venv}", "pcxmi"]
    proc = subprocess.run(make + ["LANG=tst"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads((tmp_path / "results" / "tst" / "pcxmi.summary.json").read_text())
    assert summary["sentences"] == len((raw_corpus / "test.en").read_text().splitlines())
    report = json.loads((tmp_path / "results" / "tst" / "report" / "report.json").read_text())
    assert report["cxmi"] == pytest.approx(summary["cxmi"], abs=1e-5)
    assert (tmp_path / "results" / "tst" / "report" / "viewer.html").exists()
    proc = subprocess.run(make + ["LANG=zz"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode != 0 and "checkpoints/zz/context/checkpoint_best.pt not found" in proc.stderr
