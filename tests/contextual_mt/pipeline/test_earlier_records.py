"""A study folder finished by the versions before the stage declaration (its records in their
shapes: train.done / train.json, translate.json, scores.json, .prepare-state.json, *.summary.json,
.stage/*.json; tests/fixtures/study_records, made by that code with its make_fixture.py) stays up
to date: the plan counts every stage as done, and the stages that check their own records do
nothing."""

import json
import shutil
from pathlib import Path

import pytest

from contextual_mt.pipeline.stages import format_plan, jobs

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "study_records"


@pytest.fixture
def study(tmp_path, monkeypatch):
    root = tmp_path / "study"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("make_fixture.py"))
    monkeypatch.chdir(root)  # the records name their outputs as the stages were given them: root "."
    return root


def test_the_plan_counts_every_stage_of_an_earlier_study_as_done(study):
    graph = {j.name: j for j in jobs("fr", ".", shards=2, every=True)}
    # every stage it ran is done; `make cues`, added since, is the one left to run
    assert [name for name, j in graph.items() if not j.finished] == ["cues"]
    assert set(graph) >= {
        "data",
        "train-sentence",
        "train-context",
        "translate",
        "score",
        "pcxmi",
        "pcxmi-merge",
        "muda",
        "report",
        "testset",
        "attribute",
        "contrastive",
        "table",
    }
    ran = [j for name, j in graph.items() if name != "cues"]
    assert all(line.split()[6] == "done" for line in format_plan(ran, as_json=False).splitlines())


def test_an_earlier_study_is_not_trained_translated_or_scored_again(study, capsys):
    from contextual_mt.pipeline.score_stage import ScoreStageOptions, score_systems
    from contextual_mt.pipeline.train import TrainOptions, train_model
    from contextual_mt.pipeline.translate_stage import TranslateStageOptions, translate_systems

    before = {p: p.stat().st_mtime_ns for p in study.rglob("*") if p.is_file()}
    for model in ("sentence", "context"):
        # (made with the tiny preset's config of that time: remake the fixture when it changes)
        done = train_model(TrainOptions("fr", model, preset="tiny", gpus=0, progress=False))
        assert done["num_updates"] == 10 and done["checkpoint_sha256"]
    translate_systems(TranslateStageOptions("fr", cpu=True, progress=False))
    scores = score_systems(ScoreStageOptions("fr"))
    err = capsys.readouterr().err
    assert err.count("already trained") == 2 and err.count(": up to date") == 4  # 3 translations, the scores
    assert scores["systems"]["sentence"]["bleu"]["score"] == 1.0
    assert {p: p.stat().st_mtime_ns for p in before} == before  # nothing rewritten
    assert json.loads((study / "results" / "fr" / "scores.json").read_text())["settings"]["comet_model"] is None


def test_an_earlier_train_done_is_read_as_a_stage_record(study):
    """An earlier train.done is read as a StageRecord (its checkpoint_sha256 as the output's hash):
    finished while the checkpoint is the file it names, not once it changed."""
    from contextual_mt.pipeline.layout import PairLayout
    from contextual_mt.pipeline.train import done_record

    layout = PairLayout("fr", ".")
    record = done_record(layout, "context")
    assert record.finished() and record.read()["outputs"]  # the earlier shape, read as a StageRecord
    Path(layout.checkpoint("context")).write_text("other weights\n")
    assert not record.finished()
