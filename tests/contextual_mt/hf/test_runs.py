"""cxmi --hf-model as a run: resume after an interruption, the fingerprint covers the model files
and the HF settings, shards merge, the report reads the records unchanged."""

import json

import pytest

from contextual_mt.analysis.cxmi import CxmiOptions, run_cxmi
from contextual_mt.analysis.cxmi_shards import merge_shards
from contextual_mt.backends.hf.options import HFModelOptions
from contextual_mt.backends.hf.scoring import HFScoringBackend
from contextual_mt.cli import main
from contextual_mt.errors import InputError


def options(marian, corpus, out, **kw):
    model = HFModelOptions(str(marian), separator=kw.pop("separator", " "))
    return CxmiOptions(
        model, str(corpus / "src.en"), str(corpus / "ref.fr"), str(corpus / "docids"), str(out), progress=False, **kw
    )


def test_resume_equals_a_clean_run_and_refuses_other_settings(marian, corpus, tmp_path, monkeypatch):
    clean = tmp_path / "clean.jsonl"
    run_cxmi(options(marian, corpus, clean, batch_size=3))
    out = tmp_path / "p.jsonl"
    original, calls = HFScoringBackend.token_log_probs_both, []

    def flaky(self, *a):
        calls.append(1)
        if len(calls) > 2:
            raise KeyboardInterrupt
        return original(self, *a)

    with monkeypatch.context() as m:
        m.setattr(HFScoringBackend, "token_log_probs_both", flaky)
        with pytest.raises(KeyboardInterrupt):
            run_cxmi(options(marian, corpus, out, batch_size=3))
    partial = tmp_path / "p.jsonl.partial"
    assert len(partial.read_text().splitlines()) == 1 + 6 and not out.exists()
    with pytest.raises(InputError, match=r"differs in: separator \(partial ' ', now ' \| '\)"):
        run_cxmi(options(marian, corpus, out, batch_size=3, separator=" | "))
    run_cxmi(options(marian, corpus, out, batch_size=3))
    assert out.read_text() == clean.read_text() and not partial.exists()


def test_fingerprint_covers_the_model_files(marian, corpus, tmp_path):
    import shutil

    copy = tmp_path / "m"
    shutil.copytree(marian, copy)
    out = tmp_path / "o.jsonl"
    first = run_cxmi(options(copy, corpus, out))
    assert run_cxmi(options(copy, corpus, out, skip_up_to_date=True)) == first
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "dropout": 0.25}))
    again = run_cxmi(options(copy, corpus, out, skip_up_to_date=True))  # recomputed: the config changed
    assert again["fingerprint"]["hf_files"]["config.json"] != first["fingerprint"]["hf_files"]["config.json"]


def test_shards_merge_and_report_reads_the_records(marian, corpus, tmp_path, capsys):
    whole = tmp_path / "whole.jsonl"
    run_cxmi(options(marian, corpus, whole))
    parts = [tmp_path / f"s{i}.jsonl" for i in range(2)]
    for i, p in enumerate(parts):
        run_cxmi(options(marian, corpus, p, shard=f"{i}/2"))
    merged = tmp_path / "merged.jsonl"
    summary = merge_shards([str(p) for p in parts], str(merged))
    assert summary["hf_model"] == str(marian)
    a, b = ([json.loads(x) for x in f.read_text().splitlines()] for f in (merged, whole))
    assert [(r["line"], r["tokens"], r["words"]) for r in a] == [(r["line"], r["tokens"], r["words"]) for r in b]
    # other batches, other padding: float32 sums agree to rounding
    assert [r["token_pcxmi"] for r in a] == [pytest.approx(r["token_pcxmi"], abs=1e-5) for r in b]
    assert main(["report", str(whole), "--output-dir", str(tmp_path / "report"), "--min-count", "1"]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert "CXMI" in report and (tmp_path / "report" / "viewer.html").exists()
