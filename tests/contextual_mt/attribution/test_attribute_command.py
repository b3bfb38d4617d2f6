"""contextual-mt attribute end to end with a fairseq checkpoint: the records, the selection rule,
resuming, and bad input (one line, exit 1, nothing written)."""

import json
import logging
from types import SimpleNamespace

import numpy as np
import pytest

from contextual_mt.attribution.selection import Rule, select, statistics
from contextual_mt.backends.fairseq.attribution import check_attributable
from contextual_mt.errors import InputError
from contextual_mt.stage_record import FINGERPRINT_KEY
from tests.helpers import contextual_mt_cli


def attribute(model, data_bin, corpus, out, *extra):
    return contextual_mt_cli(
        "attribute",
        "--path",
        str(model),
        "--data",
        str(data_bin),
        "--source",
        str(corpus / "test.en"),
        "--reference",
        str(corpus / "test.fr"),
        "--docids",
        str(corpus / "test.docids"),
        "--output",
        str(out),
        "--quiet",
        *extra,
    )


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def run(dynamic_model, data_bin, raw_corpus, tmp_path_factory):
    """The run, and what it logged (``proc.logged``: (level, message); in this process the
    terminal's handler is pytest's, so the records are caught here)."""
    out = tmp_path_factory.mktemp("attr") / "a.jsonl"
    logged = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = lambda record: logged.append((record.levelno, record.getMessage()))
    log = logging.getLogger("contextual_mt.attribution")
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        proc = attribute(dynamic_model, data_bin, raw_corpus, out)
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    assert proc.returncode == 0, proc.stderr
    proc.logged = logged
    return out, proc


def test_records_follow_the_selection_rule(run, raw_corpus):
    out, proc = run
    records = read(out)
    summary = json.loads(out.with_name("a.summary.json").read_text())
    lines = (raw_corpus / "test.fr").read_text().splitlines()
    assert [r["line"] for r in records] == list(range(1, len(lines) + 1))
    with_context = [r for r in records if r["context"]]
    assert with_context and len(with_context) < len(records)  # document starts have none
    stats = statistics([np.array(r["cti"]["kl"]) for r in with_context], Rule())
    assert summary["cti"]["threshold"] == pytest.approx(stats.threshold, abs=1e-5)
    assert summary["cti"]["tokens"] == sum(len(r["tokens"]) for r in with_context)
    for r in records:
        assert r["target"] == lines[r["line"] - 1] and r["tokens"][-1] == "</s>"
        assert len(r["cti"]["kl"]) == len(r["cti"]["pcxmi"]) == len(r["tokens"])
        want = [t for t, v in enumerate(r["cti"]["kl"][:-1]) if v > stats.threshold] if r["context"] else []
        assert r["selected"] == want  # EOS is never selected
        context = {(c["side"], c["sentence"]): c["tokens"] for c in r["context"]}
        for cue in r["cues"]:
            assert cue["target"] in r["selected"]
            assert context[(cue["side"], cue["sentence"])][cue["position"]] == cue["token"]
            assert cue["score"] > 0
    assert summary["selected_tokens"] == sum(len(r["selected"]) for r in records) > 0
    assert summary["cues"] == sum(len(r["cues"]) for r in records) > 0
    assert f"{summary['selected_tokens']} of {summary['tokens']} tokens" in proc.stdout


def test_the_summary_says_how_the_cues_were_computed(run):
    """Issue 41, item 2: forwards (one per batch of sentences, each sentence read once whatever
    its number of selected tokens), backward passes, and the --max-tokens they were cut by."""
    out, proc = run
    records = read(out)
    cci = json.loads(out.with_name("a.summary.json").read_text())["cci"]
    # ... in the summary; on the terminal (INFO and above) no internal jargon (issue 50.6): no
    # sentence was over --max-tokens, so nothing to say; the figures are a debugging line
    shown = [m for level, m in proc.logged if level >= logging.INFO]
    assert not [m for m in shown if "activation checkpointing" in m or "backward passes" in m], shown
    assert [m for level, m in proc.logged if level == logging.DEBUG and "backward passes" in m]
    with_selection = sum(1 for r in records if r["selected"])
    passes = cci["passes"]
    assert passes["sentences"] == with_selection <= sum(len(r["selected"]) for r in records)
    assert 1 <= passes["forwards"] <= with_selection and passes["checkpointed"] == 0
    assert passes["backward"] >= max(len(r["selected"]) for r in records) // passes["widest"]
    assert cci["max_tokens"] == 4096  # fairseq's default


def test_select_rule():
    scores = np.array([0.1, 5.0, 0.2, 0.0, 3.0])
    assert select(scores, Rule(top_k=2)) == [1, 4]
    assert select(scores, Rule(std=0.5)) == [1, 4]  # mean 1.66, std 1.97: threshold 2.65
    assert select(scores, Rule(std=0.5), exclude=[1]) == [4]
    assert select(np.zeros(3), Rule(std=-5)) == []  # nothing to attribute


def test_a_resumed_run_gives_the_same_records(run, dynamic_model, data_bin, raw_corpus, tmp_path):
    out, _ = run
    full = out.read_text().splitlines()
    partial = tmp_path / "b.jsonl.partial"
    first = attribute(dynamic_model, data_bin, raw_corpus, tmp_path / "b.jsonl")
    assert first.returncode == 0
    summary = json.loads((tmp_path / "b.summary.json").read_text())
    # an interrupted run: the fingerprint line and the first half of the records
    partial.write_text("\n".join([json.dumps({FINGERPRINT_KEY: summary["fingerprint"]}), *full[:3]]) + "\n")
    (tmp_path / "b.jsonl").unlink()
    again = attribute(dynamic_model, data_bin, raw_corpus, tmp_path / "b.jsonl")
    assert again.returncode == 0 and "resuming, 3 of" in again.stderr
    assert (tmp_path / "b.jsonl").read_text().splitlines() == full
    assert not partial.exists()


def test_a_damaged_resumed_record_is_refused(run, dynamic_model, data_bin, raw_corpus, tmp_path):
    out, _ = run
    records = read(out)
    summary = json.loads(out.with_name("a.summary.json").read_text())
    bad = next(r for r in records if r["selected"])
    bad["selected"] = [len(bad["tokens"]) + 5]
    partial = tmp_path / "c.jsonl.partial"
    partial.write_text(json.dumps({FINGERPRINT_KEY: summary["fingerprint"]}) + "\n" + json.dumps(bad) + "\n")
    proc = attribute(dynamic_model, data_bin, raw_corpus, tmp_path / "c.jsonl")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1].startswith(f"error: {partial}: the record of line {bad['line']}")
    assert "out of range" in proc.stderr and not (tmp_path / "c.jsonl").exists()


def test_a_resumed_record_of_another_target_text_is_refused(run, dynamic_model, data_bin, raw_corpus, tmp_path):
    # what a --translate run translating differently (another device) would leave: same length, other words
    out, _ = run
    summary = json.loads(out.with_name("a.summary.json").read_text())
    record = read(out)[2]
    record["target"] = record["target"] + " x"
    partial = tmp_path / "e.jsonl.partial"
    partial.write_text(json.dumps({FINGERPRINT_KEY: summary["fingerprint"]}) + "\n" + json.dumps(record) + "\n")
    proc = attribute(dynamic_model, data_bin, raw_corpus, tmp_path / "e.jsonl")
    assert proc.returncode == 1 and "of another target text" in proc.stderr and not (tmp_path / "e.jsonl").exists()


def test_shards_need_a_rule_that_is_the_same_in_every_shard(dynamic_model, data_bin, raw_corpus, tmp_path):
    proc = attribute(dynamic_model, data_bin, raw_corpus, tmp_path / "s.jsonl", "--shard", "0/2")
    assert proc.returncode == 1 and "--cti-scope sentence or --cti-top-k" in proc.stderr
    assert (
        attribute(
            dynamic_model, data_bin, raw_corpus, tmp_path / "s.jsonl", "--shard", "0/2", "--cti-scope", "sentence"
        ).returncode
        == 0
    )


def test_other_options_do_not_resume_this_partial(run, dynamic_model, data_bin, raw_corpus, tmp_path):
    out, _ = run
    summary = json.loads(out.with_name("a.summary.json").read_text())
    partial = tmp_path / "d.jsonl.partial"
    partial.write_text(json.dumps({FINGERPRINT_KEY: summary["fingerprint"]}) + "\n")
    proc = attribute(dynamic_model, data_bin, raw_corpus, tmp_path / "d.jsonl", "--method", "attention")
    assert proc.returncode == 1 and "left by a different computation (differs in: " in proc.stderr
    assert "method" in proc.stderr.split("differs in:")[1]
    assert (
        attribute(
            dynamic_model, data_bin, raw_corpus, tmp_path / "d.jsonl", "--method", "attention", "--overwrite"
        ).returncode
        == 0
    )


def one_line_error(proc, *needles):
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_bad_input(dynamic_model, data_bin, raw_corpus, tmp_path):
    out = tmp_path / "o.jsonl"
    short = tmp_path / "short.fr"
    short.write_text("\n".join((raw_corpus / "test.fr").read_text().splitlines()[:-1]) + "\n")
    base = [
        "--path",
        str(dynamic_model),
        "--data",
        str(data_bin),
        "--source",
        str(raw_corpus / "test.en"),
        "--docids",
        str(raw_corpus / "test.docids"),
        "--output",
        str(out),
        "--quiet",
    ]
    one_line_error(contextual_mt_cli("attribute", *base, "--reference", str(short)), str(short), "lines")
    one_line_error(contextual_mt_cli("attribute", *base, "--reference", str(tmp_path / "none.fr")), "none.fr")
    one_line_error(
        contextual_mt_cli("attribute", *base, "--reference", str(raw_corpus / "test.fr"), "--target-context-size", "3"),
        "exceed those trained (2/2)",
    )
    one_line_error(
        contextual_mt_cli(
            "attribute",
            *base,
            "--reference",
            str(raw_corpus / "test.fr"),
            "--source-context-size",
            "0",
            "--target-context-size",
            "0",
        ),
        "0/0",
    )
    one_line_error(
        contextual_mt_cli("attribute", *base, "--reference", str(raw_corpus / "test.fr"), "--cue-top-k", "0"),
        "--cue-top-k",
    )
    assert not list(tmp_path.glob("o.jsonl*"))


@pytest.mark.parametrize("kind,words", [("cadec", "CADec"), ("multi_encoder", "multi-encoder")])
def test_models_whose_context_is_not_at_known_positions_are_refused(kind, words):
    model = SimpleNamespace(cadec=kind == "cadec", multi_encoder=kind == "multi_encoder")
    with pytest.raises(InputError, match=f"ckpt.pt: a {words} checkpoint"):
        check_attributable(model, "ckpt.pt")


def test_translate_on_the_fly_equals_translate_then_hypotheses(dynamic_model, data_bin, raw_corpus, tmp_path):
    common = [
        "--path",
        str(dynamic_model),
        "--data",
        str(data_bin),
        "--source",
        str(raw_corpus / "test.en"),
        "--docids",
        str(raw_corpus / "test.docids"),
    ]
    hyp = tmp_path / "hyp.fr"
    assert contextual_mt_cli("translate", *common, "--output", str(hyp), "--beam", "2", "--quiet").returncode == 0
    a = contextual_mt_cli(
        "attribute", *common, "--translate", "--beam", "2", "--output", str(tmp_path / "t.jsonl"), "--quiet"
    )
    b = contextual_mt_cli(
        "attribute", *common, "--hypotheses", str(hyp), "--output", str(tmp_path / "h.jsonl"), "--quiet"
    )
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert read(tmp_path / "t.jsonl") == read(tmp_path / "h.jsonl")
    assert [r["target"] for r in read(tmp_path / "t.jsonl")] == hyp.read_text().splitlines()
    summary = json.loads((tmp_path / "t.summary.json").read_text())
    assert summary["scored"] == "translation" and summary["decoding"]["beam"] == 2
    assert json.loads((tmp_path / "h.summary.json").read_text())["scored"] == "hypotheses"


def test_context_sizes_beyond_those_trained_are_the_error_alone(dynamic_model, data_bin, raw_corpus, tmp_path):
    """The loader's warning "context sizes 0/9 (source/target) exceed those trained" was printed
    above attribute's error saying the same: attribute's loader now refuses them itself."""
    proc = attribute(dynamic_model, data_bin, raw_corpus, tmp_path / "b.jsonl", "--target-context-size", "9")
    err = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1 and err[-1].startswith("error:") and "exceed those trained" in err[-1], err
    assert not any("exceed those trained" in line for line in err[:-1]), err
    assert not (tmp_path / "b.jsonl").exists()


def test_scores_keep_significant_digits_not_six_decimals(dynamic_model, data_bin, raw_corpus, tmp_path):
    """input x gradient scores of a tiny model are ~1e-6: six decimals made them a dozen values and
    tied the top cue of many tokens; seven significant digits keep them apart."""
    from contextual_mt.attribution.selection import significant

    assert significant(1.23456789e-6) == 1.234568e-6 and significant(123.456789) == 123.4568
    out = tmp_path / "ixg.jsonl"
    proc = attribute(dynamic_model, data_bin, raw_corpus, out, "--method", "input_x_gradient")
    assert proc.returncode == 0, proc.stderr
    scores = [c["score"] for r in read(out) for c in r["cues"]]
    assert scores and all(s == significant(s) for s in scores)
    assert sum(s != round(s, 6) for s in scores) > len(scores) // 2  # digits past the sixth decimal are kept
