"""CXMI / P-CXMI: agreement with fairseq-generate --score-reference, units, controls, shards."""

import json
import math
import re
import subprocess

import numpy as np
import pytest

from commandkit.documents import document_starts
from contextual_mt.analysis.cxmi import CxmiOptions, run_cxmi
from contextual_mt.analysis.pcxmi_scorer import random_context_sources, split_words
from contextual_mt.backends.fairseq.model import FairseqModelOptions
from contextual_mt.errors import InputError
from contextual_mt.stage_record import FINGERPRINT_KEY
from tests.helpers import BIN, USER_DIR, contextual_mt_cli, run


def records(path):
    return [json.loads(text) for text in path.read_text().splitlines()]


def cxmi(dynamic_model, raw_corpus, data_bin, out, source_context_size=None, target_context_size=None, **kw):
    model = FairseqModelOptions(
        str(dynamic_model),
        data=str(data_bin),
        source_context_size=source_context_size,
        target_context_size=target_context_size,
    )
    return run_cxmi(
        CxmiOptions(
            model,
            str(raw_corpus / "test.en"),
            str(raw_corpus / "test.fr"),
            str(raw_corpus / "test.docids"),
            str(out),
            progress=False,
            **kw,
        )
    )


def fairseq_positional_scores(data_bin, ckpt, size):
    out = run(
        [
            str(BIN / "fairseq-generate"),
            str(data_bin),
            "--user-dir",
            USER_DIR,
            "--task",
            "document_translation",
            "--source-context-size",
            str(size),
            "--target-context-size",
            str(size),
            "--path",
            str(ckpt),
            "--score-reference",
            "--batch-size",
            "5",
            "--cpu",
            "--gen-subset",
            "test",
        ]
    ).stdout
    return {
        int(m.group(1)) + 1: [float(x) for x in m.group(2).split()] for m in re.finditer(r"^P-(\d+)\t(.*)$", out, re.M)
    }


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
        for v, x, y in zip(r["token_pcxmi"], c, a, strict=True):
            assert abs(v - (x - y)) < 2e-4  # fairseq prints 4 decimals


def test_zero_context_gives_exactly_zero(dynamic_model, raw_corpus, data_bin, tmp_path):
    # asking CXMI for context sizes 0/0 is an error (0 by construction); the backend still
    # scores exactly alike with and without "context" then
    with pytest.raises(InputError, match=r"0/0.*CXMI is 0 by construction"):
        cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "z.jsonl", source_context_size=0, target_context_size=0)
    assert not list(tmp_path.iterdir())
    from contextual_mt.backends.fairseq.model import DocumentModel
    from contextual_mt.backends.fairseq.scoring import FairseqScoringBackend

    backend = FairseqScoringBackend(
        DocumentModel.load(
            FairseqModelOptions(str(dynamic_model), data=str(data_bin), source_context_size=0, target_context_size=0)
        )
    )
    src, ref = (raw_corpus / "test.en").read_text().splitlines(), (raw_corpus / "test.fr").read_text().splitlines()
    backend.load(src, ref, document_starts((raw_corpus / "test.docids").read_text().splitlines()))
    assert not backend.context_sentences()[0].any() and not backend.context_sentences()[1].any()
    everything = list(range(len(src)))
    with_ctx, without = backend.token_log_probs(everything, True), backend.token_log_probs(everything, False)
    assert all(np.array_equal(with_ctx[i], without[i]) for i in everything)


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
    proc = run(
        [
            str(BIN / "contextual-mt"),
            "cxmi-merge",
            *(str(tmp_path / f"s{i}.jsonl") for i in range(3)),
            "--output",
            str(tmp_path / "merged.jsonl"),
        ]
    )
    assert "CXMI" in proc.stdout
    merged_recs, full_recs = records(tmp_path / "merged.jsonl"), records(tmp_path / "full.jsonl")
    assert [r["line"] for r in merged_recs] == [r["line"] for r in full_recs]
    for m, f in zip(merged_recs, full_recs, strict=True):  # other batches, other padding: float noise only
        assert m["tokens"] == f["tokens"] and m["doc"] == f["doc"]
        assert np.allclose(m["token_pcxmi"], f["token_pcxmi"], atol=1e-4)
    merged = json.loads((tmp_path / "merged.summary.json").read_text())
    # the merge reads the records, whose values are rounded to 6 decimals
    assert merged["cxmi"] == pytest.approx(full["cxmi"], abs=1e-6)
    assert merged["fingerprint"] == dict(full["fingerprint"], shard=None)
    with pytest.raises(InputError, match="shard 0/3 given twice"):
        from contextual_mt.analysis.cxmi_shards import merge_shards

        merge_shards([str(tmp_path / "s0.jsonl"), str(tmp_path / "s0.jsonl")], str(tmp_path / "m2.jsonl"))


def test_resume_skips_finished_sentences(dynamic_model, raw_corpus, data_bin, tmp_path, monkeypatch):
    from contextual_mt.backends.fairseq import scoring as module

    summary = cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "full.jsonl")
    full = (tmp_path / "full.jsonl").read_text().splitlines()
    partial = tmp_path / "resumed.jsonl.partial"
    header = json.dumps({"fingerprint": summary["fingerprint"]})  # the same computation
    partial.write_text("\n".join([header, *full[:5]]) + "\n" + full[5][:40])  # interrupted mid-line
    scored = []
    original = module.FairseqScoringBackend.token_log_probs

    def spy(self, indices, context):
        scored.extend(indices)
        return original(self, indices, context)

    monkeypatch.setattr(module.FairseqScoringBackend, "token_log_probs", spy)
    cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "resumed.jsonl")
    assert len(set(scored)) == len(full) - 5  # only the unfinished sentences are scored
    resumed = records(tmp_path / "resumed.jsonl")
    assert [r["line"] for r in resumed] == [json.loads(text)["line"] for text in full]
    for r, f in zip(resumed, map(json.loads, full), strict=True):
        assert np.allclose(r["token_pcxmi"], f["token_pcxmi"], atol=1e-4)
    assert not partial.exists()


def cli(args):
    """``contextual-mt cxmi ARGS``, in this process."""
    return contextual_mt_cli("cxmi", *args)


def test_warnings_and_errors(dynamic_model, raw_corpus, data_bin, tmp_path, zoo):
    files = [
        "--source",
        str(raw_corpus / "test.en"),
        "--reference",
        str(raw_corpus / "test.fr"),
        "--docids",
        str(raw_corpus / "test.docids"),
        "--data",
        str(data_bin),
        "--quiet",
    ]
    proc = cli(
        ["--path", str(dynamic_model), *files, "--output", str(tmp_path / "a.jsonl"), "--target-context-size", "4"]
    )
    assert proc.returncode == 0 and "exceed those trained (2/2)" in proc.stderr
    fixed = zoo.checkpoint("target_context_2")  # trained with a fixed context size
    proc = cli(["--path", str(fixed), *files, "--output", str(tmp_path / "b.jsonl")])
    assert proc.returncode == 0 and "CXMI from it is not meaningful" in proc.stderr
    short = tmp_path / "short.fr"
    short.write_text("\n".join((raw_corpus / "test.fr").read_text().splitlines()[:-1]) + "\n")
    proc = cli(
        [
            "--path",
            str(dynamic_model),
            "--source",
            str(raw_corpus / "test.en"),
            "--reference",
            str(short),
            "--docids",
            str(raw_corpus / "test.docids"),
            "--output",
            str(tmp_path / "c.jsonl"),
        ]
    )
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
    proc = subprocess.run([*make, "LANG=tst"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads((tmp_path / "results" / "tst" / "pcxmi.summary.json").read_text())
    assert summary["sentences"] == len((raw_corpus / "test.en").read_text().splitlines())
    report = json.loads((tmp_path / "results" / "tst" / "report" / "report.json").read_text())
    assert report["cxmi"] == pytest.approx(summary["cxmi"], abs=1e-5)
    assert (tmp_path / "results" / "tst" / "report" / "viewer.html").exists()
    assert report["word_unit"].startswith("words of the references") and report["annotations"] is None
    report_make = [*make[:-1], "report", "LANG=tst"]
    proc = subprocess.run(report_make, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0 and "report: up to date" in proc.stdout, proc.stderr[-2000:]
    # REPORT_ARGS reach the report: a missing file, and stanza without its models, are one line each
    for args, message in (
        ("--conllu missing.conllu", "missing.conllu not found"),
        (f"--stanza --stanza-dir {tmp_path / 'no-stanza'}", "stanza"),
    ):
        proc = subprocess.run([*report_make, f"REPORT_ARGS={args}"], cwd=tmp_path, capture_output=True, text=True)
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert proc.returncode != 0 and len(errors) == 1 and message in errors[0], proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr
    proc = subprocess.run([*make, "LANG=zz"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode != 0 and "checkpoints/zz/context/checkpoint_best.pt not found" in proc.stderr


# ------------------------------------------------------------------ no wrong number, ever
def options(dynamic_model, raw_corpus, data_bin, out, source=None, reference=None, docids=None, **kw):
    return CxmiOptions(
        FairseqModelOptions(str(dynamic_model), data=str(data_bin)),
        str(source or raw_corpus / "test.en"),
        str(reference or raw_corpus / "test.fr"),
        str(docids or raw_corpus / "test.docids"),
        str(out),
        progress=False,
        **kw,
    )


@pytest.fixture
def no_model_load(monkeypatch):
    """Fail the test if the checkpoint is loaded: the error must come before."""
    from contextual_mt.analysis import cxmi as module

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the error")

    monkeypatch.setattr(module.PCXMIScorer, "from_checkpoint", refuse)


def interrupted(monkeypatch, options_, after_calls=2):
    """Run cxmi until the backend's ``after_calls``-th call, then Ctrl-C: the partial survives."""
    from contextual_mt.backends.fairseq import scoring as module

    original, calls = module.FairseqScoringBackend.token_log_probs, []

    def flaky(self, indices, context):
        calls.append(1)
        if len(calls) > after_calls:
            raise KeyboardInterrupt
        return original(self, indices, context)

    with monkeypatch.context() as m:
        m.setattr(module.FairseqScoringBackend, "token_log_probs", flaky)
        with pytest.raises(KeyboardInterrupt):
            run_cxmi(options_)


def test_resume_refuses_a_partial_of_another_computation(dynamic_model, raw_corpus, data_bin, tmp_path, monkeypatch):
    out = tmp_path / "p.jsonl"
    partial = tmp_path / "p.jsonl.partial"
    interrupted(
        monkeypatch,
        options(dynamic_model, raw_corpus, data_bin, out, batch_size=4, log_base="2", random_context=True, seed=5),
    )
    lines = partial.read_text().splitlines()
    assert json.loads(lines[0])[FINGERPRINT_KEY]["log_base"] == "2" and len(lines) > 1
    assert not out.exists()
    with monkeypatch.context() as m:  # resumed without --log-base 2 --random-context
        m.setattr(
            "contextual_mt.analysis.cxmi.PCXMIScorer.from_checkpoint",
            lambda *a, **k: pytest.fail("the model was loaded before the fingerprint check"),
        )
        with pytest.raises(InputError) as e:
            run_cxmi(options(dynamic_model, raw_corpus, data_bin, out))
    msg = str(e.value)
    assert msg.startswith(f"{partial}: left by a different computation")
    assert (
        "log_base (partial '2', now 'e')" in msg
        and "random_context (partial True, now False)" in msg
        and "--overwrite" in msg
    )
    assert "source" not in msg.split("differs in:")[1]  # the same inputs
    # the same command resumes; --overwrite (resume=False) starts again
    summary = run_cxmi(options(dynamic_model, raw_corpus, data_bin, out, log_base="2", random_context=True, seed=5))
    assert summary["unit"] == "bits" and summary["random_context"] and not partial.exists()
    fresh = run_cxmi(
        options(
            dynamic_model, raw_corpus, data_bin, tmp_path / "fresh.jsonl", log_base="2", random_context=True, seed=5
        )
    )
    assert summary["cxmi"] == pytest.approx(fresh["cxmi"], abs=1e-4)
    assert summary["fingerprint"] == fresh["fingerprint"]


def test_resume_refuses_a_partial_of_other_inputs(dynamic_model, raw_corpus, data_bin, tmp_path, monkeypatch):
    out = tmp_path / "p.jsonl"
    big = tmp_path / "big"
    big.mkdir()
    for ext in ("en", "fr", "docids"):  # a larger input: the test set five times
        text = (raw_corpus / f"test.{ext}").read_text()
        (big / f"test.{ext}").write_text("".join(text.replace("test-doc", f"copy{k}") for k in range(5)))
    n = len((raw_corpus / "test.en").read_text().splitlines())
    interrupted(
        monkeypatch,
        options(
            dynamic_model,
            raw_corpus,
            data_bin,
            out,
            source=big / "test.en",
            reference=big / "test.fr",
            docids=big / "test.docids",
            batch_size=20,
        ),
        4,
    )
    assert len((tmp_path / "p.jsonl.partial").read_text().splitlines()) == 41 > n  # "resuming, 40 of 13"
    with pytest.raises(InputError, match=r"differs in: docids, reference, source\)"):
        run_cxmi(options(dynamic_model, raw_corpus, data_bin, out))
    for flag in ("--overwrite", "--no-resume"):  # both discard the partial
        proc = cli(
            [
                "--path",
                str(dynamic_model),
                "--data",
                str(data_bin),
                "--source",
                str(raw_corpus / "test.en"),
                "--reference",
                str(raw_corpus / "test.fr"),
                "--docids",
                str(raw_corpus / "test.docids"),
                "--output",
                str(out),
                "--quiet",
                flag,
            ]
        )
        assert proc.returncode == 0 and "resuming" not in proc.stderr, proc.stderr[-2000:]
        assert len(records(out)) == n and f"over {n} sentences" in proc.stdout
        assert not (tmp_path / "p.jsonl.partial").exists()
        interrupted(
            monkeypatch,
            options(
                dynamic_model,
                raw_corpus,
                data_bin,
                out,
                source=big / "test.en",
                reference=big / "test.fr",
                docids=big / "test.docids",
                batch_size=20,
            ),
            4,
        )
    # a partial from an older version (no fingerprint line) is not trusted either
    (tmp_path / "p.jsonl.partial").write_text((out).read_text())
    with pytest.raises(InputError, match=r"has no fingerprint on its first line.*--overwrite"):
        run_cxmi(options(dynamic_model, raw_corpus, data_bin, out))


def test_summary_records_the_fingerprint(dynamic_model, raw_corpus, data_bin, tmp_path):
    from commandkit.text import file_sha256

    summary = cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "p.jsonl", target_context_size=1, shard="1/2")
    fp = json.loads((tmp_path / "p.summary.json").read_text())["fingerprint"]
    assert fp == summary["fingerprint"]
    assert fp["checkpoint"] == file_sha256(str(dynamic_model)) and fp["source"] == file_sha256(
        str(raw_corpus / "test.en")
    )
    assert set(fp["dictionaries"]) == {"dict.en.txt", "dict.fr.txt"}
    assert (fp["source_context_size"], fp["target_context_size"], fp["shard"]) == (None, 1, "1/2")
    assert (fp["log_base"], fp["random_context"], fp["seed"], fp["spm"]) == ("e", False, None, None)


def test_no_empty_partial_when_failing_before_scoring(dynamic_model, raw_corpus, data_bin, tmp_path):
    ref = tmp_path / "long.fr"
    lines = (raw_corpus / "test.fr").read_text().splitlines()
    lines[2] = " ".join(["chat"] * 1100)  # longer than the 1024 target positions
    ref.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out" / "p.jsonl"
    with pytest.raises(InputError) as e:
        run_cxmi(options(dynamic_model, raw_corpus, data_bin, out, reference=ref))
    assert str(e.value) == (
        f"{ref}:3: 1101 subword pieces (with </s>), but the model takes at most 1024 target positions; split the line"
    )
    assert not (tmp_path / "out").exists()  # no records, no summary, no partial, no directory


def test_over_long_source_line_is_an_error(dynamic_model, raw_corpus, data_bin, tmp_path):
    src = tmp_path / "long.en"
    lines = (raw_corpus / "test.en").read_text().splitlines()
    lines[-1] = " ".join(["cat"] * 5000)
    src.write_text("\n".join(lines) + "\n")
    proc = cli(
        [
            "--path",
            str(dynamic_model),
            "--data",
            str(data_bin),
            "--source",
            str(src),
            "--reference",
            str(raw_corpus / "test.fr"),
            "--docids",
            str(raw_corpus / "test.docids"),
            "--output",
            str(tmp_path / "p.jsonl"),
            "--quiet",
        ]
    )
    assert_one_error(
        proc,
        f"{src}:{len(lines)}: 5001 subword pieces (with </s>), but the model takes at most 1024 "
        "source positions; split the line",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.en"]


def assert_one_error(proc, *needles):
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: "), last
    for needle in needles:
        assert needle in last, last
    return last


def test_blank_reference_line_is_an_error(dynamic_model, raw_corpus, data_bin, tmp_path, no_model_load):
    ref = tmp_path / "blank.fr"
    lines = (raw_corpus / "test.fr").read_text().splitlines()
    lines[3] = "  "
    ref.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=f"^{ref}:4: empty reference line"):
        run_cxmi(options(dynamic_model, raw_corpus, data_bin, tmp_path / "p.jsonl", reference=ref))


def test_random_context_needs_two_documents(dynamic_model, raw_corpus, data_bin, tmp_path, no_model_load):
    ids = (raw_corpus / "test.docids").read_text().splitlines()
    n = ids.count(ids[0])
    one = tmp_path / "one"
    one.mkdir()
    for ext in ("en", "fr", "docids"):
        (one / ext).write_text("\n".join((raw_corpus / f"test.{ext}").read_text().splitlines()[:n]) + "\n")
    with pytest.raises(
        InputError,
        match=f"^{one / 'docids'}: --random-context needs at least two documents "
        r"\(found 1\)",
    ):
        run_cxmi(
            options(
                dynamic_model,
                raw_corpus,
                data_bin,
                tmp_path / "p.jsonl",
                source=one / "en",
                reference=one / "fr",
                docids=one / "docids",
                random_context=True,
            )
        )
    assert not (tmp_path / "p.jsonl.partial").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--batch-size", "0"], "error: --batch-size must be >= 1 (got 0)"),
        (["--batch-size", "-2"], "error: --batch-size must be >= 1 (got -2)"),
        (["--shard", "2"], "error: --shard must look like 'i/n' (got '2')"),
        (["--shard", "3/3"], "error: --shard 3/3: need 0 <= i < n"),
        (["--shard", "0/50"], "has only"),
        (["--target-context-size", "-1"], "error: --target-context-size must be >= 0 (got -1)"),
        (["--source-context-size", "0", "--target-context-size", "0"], "CXMI is 0 by construction"),
    ],
)
def test_bad_options_are_one_line(dynamic_model, raw_corpus, data_bin, tmp_path, args, message):
    proc = cli(
        [
            "--path",
            str(dynamic_model),
            "--data",
            str(data_bin),
            "--source",
            str(raw_corpus / "test.en"),
            "--reference",
            str(raw_corpus / "test.fr"),
            "--docids",
            str(raw_corpus / "test.docids"),
            "--output",
            str(tmp_path / "p.jsonl"),
            "--quiet",
            *args,
        ]
    )
    assert_one_error(proc, message)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("where", ["a-file", "a-directory"])
def test_unwritable_output_is_one_line_before_scoring(dynamic_model, raw_corpus, data_bin, tmp_path, where):
    (tmp_path / "afile").write_text("x\n")
    output = tmp_path / "afile" / "p.jsonl" if where == "a-file" else tmp_path
    proc = cli(
        [
            "--path",
            str(dynamic_model),
            "--data",
            str(data_bin),
            "--source",
            str(raw_corpus / "test.en"),
            "--reference",
            str(raw_corpus / "test.fr"),
            "--docids",
            str(raw_corpus / "test.docids"),
            "--output",
            str(output),
            "--quiet",
        ]
    )
    assert_one_error(proc, str(output))
    assert "P-CXMI" not in proc.stderr  # no scoring started
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_sentence_level_checkpoint_is_an_error(data_bin, raw_corpus, tmp_path, zoo):
    proc = cli(
        [
            "--path",
            str(zoo.checkpoint("sentence")),
            "--data",
            str(data_bin),
            "--source",
            str(raw_corpus / "test.en"),
            "--reference",
            str(raw_corpus / "test.fr"),
            "--docids",
            str(raw_corpus / "test.docids"),
            "--output",
            str(tmp_path / "p.jsonl"),
            "--quiet",
        ]
    )
    assert_one_error(proc, "was trained without context", "CXMI is 0 by construction", "--sample-context-size")
    assert not (tmp_path / "p.jsonl").exists() and not (tmp_path / "p.jsonl.partial").exists()


# ------------------------------------------------------------------ cxmi-merge
@pytest.fixture(scope="module")
def shard_runs(dynamic_model, raw_corpus, data_bin, tmp_path_factory):
    """Shards of one computation (0/2, 1/2) and shards that do not belong with them."""
    work = tmp_path_factory.mktemp("shards")
    runs = {"0/2": {}, "1/2": {}, "1/2 ctx1": {"target_context_size": 1}, "1/3": {}, "1/2 bits": {"log_base": "2"}}
    paths = {}
    for name, kw in runs.items():
        path = work / (name.replace("/", "of").replace(" ", "-") + ".jsonl")
        cxmi(dynamic_model, raw_corpus, data_bin, path, shard=name.split()[0], **kw)
        paths[name] = path
    return paths


def merge_cli(*args):
    """``contextual-mt cxmi-merge ARGS``, in this process."""
    return contextual_mt_cli("cxmi-merge", *args)


@pytest.mark.parametrize(
    "names, message",
    [
        (["0/2"], "shard(s) 1/2 missing: merge all 2 shards"),
        (
            ["0/2", "1/2 ctx1"],
            "not a shard of the same computation as {0}.summary.json (differs in: "
            "target_context_size (there None, here 1))",
        ),
        (["0/2", "1/3"], "shard 1/3, but {0}.summary.json is one of 2 shards"),
        (["0/2", "1/2 bits"], "differs in: log_base (there 'e', here '2')"),
        (["1/2", "1/2"], "shard 1/2 given twice"),
    ],
)
def test_merge_refuses_shards_that_do_not_belong_together(shard_runs, tmp_path, names, message):
    paths = [shard_runs[n] for n in names]
    proc = merge_cli(*paths, "--output", tmp_path / "m.jsonl")
    assert_one_error(proc, message.format(str(paths[0])[:-6]))
    assert not list(tmp_path.iterdir())


def test_merge_refuses_other_checkpoints_and_broken_files(shard_runs, tmp_path):
    import shutil

    for name in ("0of2", "1of2"):
        for suffix in (".jsonl", ".summary.json"):
            shutil.copy(shard_runs["0/2"].parent / (name + suffix), tmp_path / (name + suffix))
    a, b = tmp_path / "0of2.jsonl", tmp_path / "1of2.jsonl"
    assert merge_cli(a, b, "--output", tmp_path / "ok.jsonl").returncode == 0
    meta = tmp_path / "1of2.summary.json"
    good = meta.read_text()
    meta.write_text(good.replace(json.loads(good)["fingerprint"]["checkpoint"], "0" * 64))
    assert_one_error(merge_cli(a, b, "--output", tmp_path / "m.jsonl"), "differs in: checkpoint)")
    meta.write_text(good[: len(good) // 2])  # a truncated summary
    assert_one_error(merge_cli(a, b, "--output", tmp_path / "m.jsonl"), f"{meta}:", "not JSON")
    meta.write_text("not json at all\n")
    assert_one_error(merge_cli(a, b, "--output", tmp_path / "m.jsonl"), f"{meta}:1: not JSON")
    meta.write_text(good)
    recs = b.read_text().splitlines()
    b.write_text("\n".join(recs[:-1]) + "\n" + recs[-1][:30])  # cut mid-line
    assert_one_error(merge_cli(a, b, "--output", tmp_path / "m.jsonl"), f"{b}:{len(recs)}: not a P-CXMI record")
    b.write_text("\n".join(recs[:-1]) + "\n")  # cut at a line end
    assert_one_error(
        merge_cli(a, b, "--output", tmp_path / "m.jsonl"),
        f"{b}: has {len(recs) - 1} records but {meta} counts {len(recs)}",
    )
    assert not (tmp_path / "m.jsonl").exists() and not (tmp_path / "m.summary.json").exists()


def test_a_byte_order_mark_changes_no_number(dynamic_model, raw_corpus, data_bin, tmp_path):
    """Source, references and document ids saved with a UTF-8 BOM: the same CXMI and records as
    without (the BOM once made line 1 a document of its own and changed CXMI)."""
    bom = tmp_path / "bom"
    bom.mkdir()
    for name in ("test.en", "test.fr", "test.docids"):
        (bom / name).write_bytes(b"\xef\xbb\xbf" + (raw_corpus / name).read_bytes())
    plain = cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "plain.jsonl")
    with_bom = cxmi(dynamic_model, bom, data_bin, tmp_path / "bom.jsonl")
    assert with_bom["cxmi"] == plain["cxmi"] and with_bom["sentences"] == plain["sentences"]
    assert records(tmp_path / "bom.jsonl") == records(tmp_path / "plain.jsonl")
