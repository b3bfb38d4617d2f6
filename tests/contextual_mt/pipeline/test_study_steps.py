"""The study's steps a newcomer takes after the chain (issue 50, item 6), on the shared make chain
(conftest.py; PRESET=tiny on CPU) or a copy of it: `make cues` (the counterfactual suite, scored by
both models, and its measures), `make report` after `make attribute` (the viewer's cues), and an
interrupted `make translate` (the systems it finished are kept)."""

import json
import shutil

import pytest

from contextual_mt.backends.fairseq.translator import DocumentTranslator
from contextual_mt.inference.decoding import DecodingOptions
from contextual_mt.pipeline.translate_stage import STUDY_BATCH_SIZE, TranslateStageOptions, translate_systems
from contextual_mt.stage_record import read_record
from tests.contextual_mt.pipeline.chain import make

SYSTEMS = ("sentence", "context", "context-gold")


@pytest.fixture
def work(make_chain, tmp_path):
    copy = tmp_path / "work"
    shutil.copytree(make_chain["work"], copy)
    return copy


def test_make_cues_builds_scores_and_measures_the_counterfactual_suite(make_chain):
    """`make cues`: as every other study step, one target (and a stage of `make all`): the
    counterfactual suite of the test split, both models' contrastive scores of it, and `testset
    cues`' measures of them; a re-run keeps all of it."""
    cues = make_chain["work"] / "results" / "fr" / "cues"
    log = make_chain["logs"]["cues"].stdout
    for name in ("counterfactual/voita.json", "context.scores", "sentence.summary.json", "cues.json", "cues.png"):
        assert (cues / name).is_file(), name
    measures = json.loads((cues / "cues.json").read_text())
    assert set(measures["systems"]) == {"context", "sentence"}
    assert "counterfactual:" in log and "cue score" in log and f"measures: {cues / 'cues.json'}" in log
    before = {p: p.stat().st_mtime_ns for p in cues.rglob("*") if p.is_file()}
    again = make("cues", *make_chain["variables"]).stdout
    assert "counterfactual suite: up to date" in again and "cues: up to date" in again
    assert {p: p.stat().st_mtime_ns for p in cues.rglob("*") if p.is_file()} == before


def test_make_report_after_make_attribute_shows_the_cues(make_chain, work):
    """The chain made the report (with pcxmi), then `make attribute`: `make report` was "up to
    date" and its viewer showed no cues. The attribution is one of the report's inputs: the report
    is made again with it, and is up to date after that."""
    variables = ["LANG=fr", f"WORK={work}"]
    report = work / "results" / "fr" / "report"
    # the report made before `make attribute` (the chain may have run it already: set it aside)
    attribution = work / "results" / "fr" / "attribution.jsonl"
    aside = attribution.with_suffix(".aside")
    attribution.rename(aside)
    make("report", *variables)
    assert "attribution" not in json.loads((report / "report.json").read_text())
    aside.rename(attribution)  # then `make attribute` finishes
    proc = make("report", *variables)
    assert "attribution:" in proc.stdout and "cues" in proc.stdout, proc.stdout
    assert "attribution" in json.loads((report / "report.json").read_text())
    assert "context-sensitive only" in (report / "viewer.html").read_text() and (report / "cue_pairs.csv").is_file()
    assert "up to date" in make("report", *variables).stdout
    # records of another model (the context model trained again since) are left out, in one line
    summary = work / "results" / "fr" / "attribution.summary.json"
    value = json.loads(summary.read_text())
    value["fingerprint"]["checkpoint"] = "0" * 64
    summary.write_text(json.dumps(value))
    proc = make("report", *variables)
    notes = [line for line in proc.stderr.splitlines() if "left out of the report" in line]
    assert len(notes) == 1 and "differs in: checkpoint" in notes[0] and "make attribute" in notes[0], proc.stderr
    assert "attribution" not in json.loads((report / "report.json").read_text())
    assert not (report / "cue_pairs.csv").exists()


def test_an_interrupted_translate_keeps_the_systems_it_finished(make_chain, work, monkeypatch):
    """Ctrl-C while the context system translates threw away the sentence system translated in
    the same run. Each finished system is now in place (and in translate.json) at once; the rerun
    translates only what is missing."""
    results = work / "results" / "fr"
    for s in SYSTEMS:
        (results / f"{s}.test.fr").unlink()
    (results / "translate.json").unlink()
    real = DocumentTranslator.translate
    calls = []

    def interrupted(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # the second system: the user presses Ctrl-C
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(DocumentTranslator, "translate", interrupted)
    beam = next(v.split("=", 1)[1] for v in make_chain["variables"] if v.startswith("BEAM="))
    decoding = DecodingOptions(beam=int(beam), batch_size=STUDY_BATCH_SIZE)  # as `make translate BEAM=...`
    options = TranslateStageOptions("fr", str(work), decoding=decoding, progress=False)
    with pytest.raises(KeyboardInterrupt):
        translate_systems(options)
    sentence = results / "sentence.test.fr"
    kept = sentence.read_bytes()
    assert kept and not (results / "context.test.fr").exists() and not (results / "context-gold.test.fr").exists()
    assert set(read_record(str(results / "translate.json"))) == {"sentence"}
    assert not (results / ".stage" / "translate.json").exists()  # the stage is not finished
    counted = []
    monkeypatch.setattr(DocumentTranslator, "translate", lambda self, *a, **k: counted.append(1) or real(self, *a, **k))
    translate_systems(options)
    assert len(counted) == 2 and sentence.read_bytes() == kept  # context and context-gold only
    assert set(read_record(str(results / "translate.json"))) == set(SYSTEMS)
    assert (results / ".stage" / "translate.json").is_file()
    translate_systems(options)
    assert len(counted) == 2  # all three up to date
