"""A study folder finished by the versions before the stage declaration (its records in their
shapes: train.done / train.json, translate.json, scores.json, .prepare-state.json, *.summary.json,
.stage/*.json; tests/fixtures/study_records, made by that code with its make_fixture.py): a stage
meeting one says in one line to migrate it, and once `contextual-mt pipeline migrate` rewrote it
the study is up to date: the plan counts every stage as done, and the stages that check their own
records do nothing."""

import json
import shutil
from pathlib import Path

import pytest

from contextual_mt.pipeline.migrate import migrate
from contextual_mt.pipeline.stages import format_plan, jobs
from tests.contextual_mt.pipeline.test_pipeline_bad_input import cmt, one_error

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "study_records"


@pytest.fixture
def earlier(tmp_path, monkeypatch):
    root = tmp_path / "study"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("make_fixture.py"))
    monkeypatch.chdir(root)  # the records name their outputs as the stages were given them: root "."
    return root


@pytest.fixture
def study(earlier):
    done, bad = migrate(".")
    assert bad == [] and len(done) == 10
    return earlier


def test_a_stage_meeting_an_earlier_record_says_to_migrate(earlier):
    from contextual_mt.errors import InputError
    from contextual_mt.stage_record import StageRecord

    one_error(
        cmt(
            "pipeline", "train", "--lang", "fr", "--root", ".", "--model", "sentence", "--preset", "tiny", "--gpus", "0"
        ),
        "checkpoints/fr/sentence/train.done: a record of an earlier version; "
        "run `contextual-mt pipeline migrate ./checkpoints/fr/sentence`",
    )
    with pytest.raises(InputError, match=r"report.json: a record of an earlier version; run .*migrate \./results/fr`$"):
        StageRecord("./results/fr/.stage/report.json", "report").read()


def test_migrate_rewrites_once_and_names_each_bad_file(earlier, capsys):
    assert cmt("pipeline", "migrate", ".").returncode == 0
    assert cmt("pipeline", "migrate", ".").stdout == ""  # nothing left to rewrite
    for name in (
        "data/fr/.prepare-state.json",
        "checkpoints/fr/context/train.done",
        "checkpoints/fr/context/train.json",
    ):
        assert not (earlier / name).exists()
    (earlier / "data" / "de").mkdir(parents=True)
    (earlier / "data" / "de" / ".prepare-state.json").write_text("{not json\n")
    (earlier / "checkpoints" / "fr" / "de").mkdir()
    (earlier / "checkpoints" / "fr" / "de" / "train.done").write_text("[]\n")
    proc = cmt("pipeline", "migrate", ".")
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert len(errors) == 2 and "data/de/.prepare-state.json: unreadable" in errors[1]
    assert "checkpoints/fr/de/train.done: not a state file" in errors[0]
    assert (earlier / "data" / "de" / ".prepare-state.json").read_text() == "{not json\n"  # left as it was


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
