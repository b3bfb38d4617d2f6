"""The train stage's record (checkpoints/xx/MODEL/.stage/train.json, a StageRecord) describes the
checkpoint it points to, whatever was asked; a stopping criterion other than the finished run's
either continues training (more epochs or updates) or is refused in one line (fewer), and a full
disk while fairseq saves a checkpoint is one line naming the folder (issue 38, items 5 and 7).

Most tests stand fairseq in with ``fake_fairseq``, which does what fairseq-hydra-train does with
the checkpoints (resume from checkpoint_last.pt, train up to max_epoch, save the last and best
checkpoints); test_pipeline_bad_input.py sees fairseq itself go on from the shared chain's
checkpoints."""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from contextual_mt.cli import main
from contextual_mt.errors import InputError
from contextual_mt.pipeline import train as train_stage
from contextual_mt.pipeline.layout import PairLayout
from contextual_mt.pipeline.migrate import migrate
from contextual_mt.pipeline.stages import jobs
from contextual_mt.pipeline.train import TrainOptions, done_record, train_model
from contextual_mt.stage_record import StageRecord, write_record
from tests.helpers import write_fairseq_checkpoint

UPDATES_PER_EPOCH = 7


@pytest.fixture
def layout(tmp_path):
    """A data folder that looks prepared (the train stage checks files, not content)."""
    bin_dir = tmp_path / "data" / "fr" / "bin"
    bin_dir.mkdir(parents=True)
    (tmp_path / "data" / "fr" / "summary.json").write_text("{}")
    for name in ("dict.en.txt", "dict.fr.txt"):
        (bin_dir / name).write_text("".join(f"w{i} {i + 1}\n" for i in range(20)))
    return PairLayout("fr", str(tmp_path))


@pytest.fixture
def fairseq_runs(monkeypatch):
    """fairseq-hydra-train's effect on the checkpoints: from checkpoint_last.pt's epoch (none:
    from scratch) to the command's max_epoch, a validation and a save per epoch; nothing when the
    checkpoint is there already. Returns the epochs each run started from."""
    runs = []

    def fake_fairseq(cmd, log_path, o):
        last, best = os.path.join(o.layout.checkpoints(o.model), "checkpoint_last.pt"), o.layout.checkpoint(o.model)
        start = train_stage.read_training_figures(last)["epochs"] if os.path.exists(last) else 0
        max_epoch = train_stage._max_epoch(cmd) or train_stage.stop_limits(o)[0]
        runs.append(start)
        curve = []
        for epoch in range(start + 1, max_epoch + 1):
            write_fairseq_checkpoint(last, epoch, epoch * UPDATES_PER_EPOCH, 10.0 - epoch)
            shutil.copy(last, best)
            curve.append([epoch, epoch * UPDATES_PER_EPOCH, 10.0 - epoch])
        # what the log shows: a resumed run that trains nothing shows no epoch at all
        return {
            "epochs": curve[-1][0] if curve else 0,
            "num_updates": curve[-1][1] if curve else 0,
            "valid_loss": curve[-1][2] if curve else None,
            "valid_curve": curve,
        }

    monkeypatch.setattr(train_stage, "_run", fake_fairseq)
    return runs


def train(layout, **options):
    return train_model(
        TrainOptions("fr", "sentence", preset="tiny", root=layout.root, gpus=0, progress=False, **options)
    )


def cli_train(layout, capsys, *argv, make=False, monkeypatch=None):
    if make:
        monkeypatch.setenv("CONTEXTUAL_MT_MAKE", "1")
    status = main(
        [
            "pipeline",
            "train",
            "--lang",
            "fr",
            "--root",
            layout.root,
            "--preset",
            "tiny",
            "--gpus",
            "0",
            "--model",
            "sentence",
            "--quiet",
            *argv,
        ]
    )
    captured = capsys.readouterr()
    return status, captured.out, [line for line in captured.err.splitlines() if line.strip()]


def record_file(layout):
    return os.path.join(layout.checkpoints("sentence"), ".stage", "train.json")


def test_fewer_epochs_than_trained_are_refused_in_one_line(layout, fairseq_runs, capsys, monkeypatch):
    """Issue 38.5: after 5 epochs (the tiny preset's), EPOCHS=1 trained nothing and rewrote the
    record as 'epochs 0, num_updates 0, valid_loss None' for the 10-epoch checkpoint. Now: one
    line saying why, and the record left as it was."""
    status, out, err = cli_train(layout, capsys)
    assert status == 0 and "(5 epochs, 35 updates, valid loss 5.000)" in out, out
    before = Path(record_file(layout)).read_text()
    status, out, err = cli_train(layout, capsys, "--max-epoch", "1", make=True, monkeypatch=monkeypatch)
    assert status == 1 and out == "" and len(err) == 1, err
    assert err[0] == (
        f"error: {layout.checkpoints('sentence')} was trained for 5 epochs; EPOCHS=1 asks for fewer: "
        "OVERWRITE=1 retrains"
    )
    assert Path(record_file(layout)).read_text() == before and fairseq_runs == [0]
    monkeypatch.delenv("CONTEXTUAL_MT_MAKE")
    with pytest.raises(InputError, match="was trained for 35 updates; --max-update 20 asks for fewer"):
        train(layout, max_update=20)
    # OVERWRITE=1 retrains, and the record is the new checkpoint's
    record = train(layout, max_epoch=1, overwrite=True)
    assert fairseq_runs == [0, 0] and (record["epochs"], record["num_updates"], record["max_epoch"]) == (1, 7, 1)
    assert record["checkpoint_sha256"] == record["outputs"]["../checkpoint_best.pt"]


def test_more_epochs_continue_from_the_last_checkpoint(layout, fairseq_runs, capsys):
    first = train(layout, max_epoch=3)
    record = train(layout, max_epoch=5)
    assert fairseq_runs == [0, 3]  # resumed after epoch 3
    assert (record["epochs"], record["num_updates"], record["valid_loss"], record["best_epoch"]) == (5, 35, 5.0, 5)
    assert [p[0] for p in record["valid_curve"]] == [1, 2, 3, 4, 5] and first["epochs"] == 3
    # the same limit in other words (10 given, then the preset's 10 epochs): nothing to do, nothing rewritten
    train(layout, max_epoch=10)
    before = Path(record_file(layout)).read_text()
    assert train(layout, max_epoch=10) == json.loads(before) and Path(record_file(layout)).read_text() == before
    assert fairseq_runs == [0, 3, 5] and "already trained" in capsys.readouterr().err


def test_a_run_without_epochs_keeps_what_the_earlier_run_asked(layout, fairseq_runs, capsys, monkeypatch):
    """Issue 50: EPOCHS=2 once, then `make all` / `make table` without it went on to the preset's
    10 epochs without a word. The record keeps what was asked: a run without EPOCHS keeps 2 and
    says so in one line; EPOCHS=3 changes it (and is kept in turn); OVERWRITE=1 starts over."""
    status, out, err = cli_train(layout, capsys, "--max-epoch", "2", make=True, monkeypatch=monkeypatch)
    assert status == 0 and "(2 epochs, 14 updates" in out and fairseq_runs == [0]
    status, out, err = cli_train(layout, capsys, make=True, monkeypatch=monkeypatch)
    assert status == 0 and "(2 epochs, 14 updates" in out and fairseq_runs == [0], (out, err)
    assert err == [
        "[train fr sentence] EPOCHS=2 as the earlier run was asked (its record); give EPOCHS=N to change it",
        f"sentence model: already trained ({layout.checkpoint('sentence')}); nothing to do",
    ]
    status, out, err = cli_train(layout, capsys, "--max-epoch", "3", make=True, monkeypatch=monkeypatch)
    assert status == 0 and "(3 epochs, 21 updates" in out and fairseq_runs == [0, 2]
    assert not any("as the earlier run was asked" in line for line in err)
    assert train(layout)["epochs"] == 3 and fairseq_runs == [0, 2]  # 3 is what is kept now
    # MAX_UPDATE alike, and an interrupted run (its record under way) keeps what it was asked too
    record = json.loads(Path(record_file(layout)).read_text())
    done_record(layout, "sentence").save(record["fingerprint"], [], max_epoch=None, max_update=30)
    assert train(layout)["max_update"] == 30
    assert train(layout, overwrite=True, max_epoch=1)["epochs"] == 1


def test_the_record_holds_what_the_checkpoint_is_not_what_the_log_said(layout, fairseq_runs):
    """Checkpoints that reached the limit before their run was recorded (a run stopped after its
    last save): recorded from the checkpoints, without running fairseq; a run that trained nothing
    would have had no figures in its log."""
    save = layout.checkpoints("sentence")
    train(layout, max_epoch=4)
    done_record(layout, "sentence").save(
        json.loads(Path(record_file(layout)).read_text())["fingerprint"], []
    )  # under way
    with pytest.raises(InputError, match="was trained for 4 epochs; --max-epoch 2 asks for fewer"):
        train(layout, max_epoch=2)
    record = train(layout, max_epoch=4)
    assert fairseq_runs == [0] and (record["epochs"], record["num_updates"], record["valid_loss"]) == (4, 28, 6.0)
    assert (
        record["command"] is None and record["outputs"] and os.path.isfile(os.path.join(save, ".stage", "train.json"))
    )


def test_the_false_record_of_an_earlier_version_is_not_trusted(layout, fairseq_runs):
    """A folder left by the issue's run: train.done (the earlier versions' record, in the
    StageRecord shape, migrated) says max_epoch 1 and 0 updates for a 10-epoch checkpoint. EPOCHS=1 again is
    refused rather than called done; the preset's epochs record the checkpoint as it is."""
    train(layout)  # 5 epochs
    save = layout.checkpoints("sentence")
    record = json.loads(Path(record_file(layout)).read_text())
    os.unlink(record_file(layout))
    StageRecord(os.path.join(save, "train.done"), "train").save(
        record["fingerprint"],
        [layout.checkpoint("sentence")],
        max_epoch=1,
        max_update=None,
        epochs=0,
        num_updates=0,
        valid_loss=None,
        checkpoint_sha256=record["checkpoint_sha256"],
    )
    StageRecord(os.path.join(save, "train.json"), "train").save(record["fingerprint"], [])
    assert migrate(layout.root)[1] == []  # `contextual-mt pipeline migrate`
    assert {j.name: j for j in jobs("fr", layout.root)}["train-sentence"].finished  # the earlier record is read
    with pytest.raises(InputError, match="was trained for 5 epochs; --max-epoch 1 asks for fewer"):
        train(layout, max_epoch=1)
    fixed = train(layout)
    assert fairseq_runs == [0] and (fixed["epochs"], fixed["num_updates"]) == (5, 35)
    assert not os.path.exists(os.path.join(save, "train.done")) and not os.path.exists(os.path.join(save, "train.json"))


def test_a_study_finished_by_the_previous_version_is_not_trained_again(layout, fairseq_runs, capsys):
    """The record the version before this one wrote (train.done in the StageRecord shape, its
    output named relative to its folder, and train.json beside it), migrated, stays finished: the plan counts
    it done and train does nothing (the fixture tests/fixtures/study_records has the older shape)."""
    train(layout, max_epoch=2)
    save = layout.checkpoints("sentence")
    record = json.loads(Path(record_file(layout)).read_text())
    shutil.rmtree(os.path.join(save, ".stage"))
    write_record(
        os.path.join(save, "train.done"), {**record, "outputs": {"checkpoint_best.pt": record["checkpoint_sha256"]}}
    )
    write_record(
        os.path.join(save, "train.json"),
        {"stage": "train", "fingerprint": record["fingerprint"], "outputs": {}, "base": "record"},
    )
    assert migrate(layout.root) == ([record_file(layout)], [])  # `contextual-mt pipeline migrate`
    assert {j.name: j for j in jobs("fr", layout.root)}["train-sentence"].finished
    assert train(layout, max_epoch=2)["epochs"] == 2 and fairseq_runs == [0]
    assert "already trained" in capsys.readouterr().err and not os.path.exists(os.path.join(save, "train.done"))
    # a run under way by that version (train.json alone): not finished, and it resumes
    shutil.rmtree(os.path.join(save, ".stage"))
    write_record(
        os.path.join(save, "train.json"),
        {"stage": "train", "fingerprint": record["fingerprint"], "outputs": {}, "base": "record"},
    )
    assert migrate(layout.root) == ([record_file(layout)], [])
    assert not {j.name: j for j in jobs("fr", layout.root)}["train-sentence"].finished
    assert train(layout, max_epoch=3)["epochs"] == 3 and fairseq_runs == [0, 2]


FULL_DISK = """
import logging, sys, torch
from fairseq import checkpoint_utils
logging.basicConfig(stream=sys.stdout, format="%(asctime)s | %(levelname)s | %(name)s | %(message)s")
def full_disk(*args, **kwargs):  # torch's writer on a full disk
    raise RuntimeError("[enforce fail at inline_container.cc:778] . PytorchStreamWriter failed writing file "
                       "data/3: file write failed")
torch.save = full_disk
checkpoint_utils.torch_persistent_save({"model": {}}, sys.argv[1])
"""


def test_a_full_disk_while_saving_a_checkpoint_is_one_line_naming_the_folder(layout, capsys, monkeypatch):
    """Issue 38.7: fairseq's save of checkpoint_last.pt fails as it does on a full disk (its own
    save path, torch's error): one line naming the checkpoint folder and what to do, not
    fairseq's RuntimeError."""
    save = layout.checkpoints("sentence")
    monkeypatch.setattr(
        train_stage,
        "train_command",
        lambda o, gpus, fp16, plan=None: [sys.executable, "-c", FULL_DISK, os.path.join(save, "checkpoint_last.pt")],
    )
    status, _out, err = cli_train(layout, capsys)
    assert status == 1 and len(err) == 1 and "Traceback" not in err[0], err
    assert err[0].startswith(f"error: {save}: saving a checkpoint failed (RuntimeError: [enforce fail")
    assert "is the disk full" in err[0] and "resumes from checkpoint_last.pt" in err[0]


def test_the_presets_epochs_are_named_and_a_lone_best_checkpoint_counts(layout, fairseq_runs):
    """Trained past the preset's epochs (EPOCHS=12, then none: the tiny preset's 10): refused,
    naming the preset; without checkpoint_last.pt, checkpoint_best.pt says how far it went, and
    --overwrite still retrains."""
    train(layout, max_epoch=12)
    os.unlink(os.path.join(layout.checkpoints("sentence"), "checkpoint_last.pt"))
    record = json.loads(Path(record_file(layout)).read_text())
    # an earlier version's record of a resumed run that trained nothing (EPOCHS=1): not kept (issue 50)
    write_record(record_file(layout), {**record, "max_epoch": 1, "num_updates": 0})
    with pytest.raises(InputError, match=r"trained for 12 epochs; --preset tiny \(5 epochs\) asks for fewer"):
        train(layout)
    assert train(layout, overwrite=True)["epochs"] == 5 and fairseq_runs == [0, 0]


def test_a_run_stopped_part_way_through_an_epoch_says_so(layout, capsys, monkeypatch):
    """Issue 50: MAX_UPDATE ended training in its first epoch (after fairseq's validation of epoch 1,
    which it runs when it stops); the summary said "(0 epochs, 5 updates" right after "epoch 1:
    valid loss". It names the epoch it stopped in."""

    def stopped_by_max_update(cmd, log_path, o):
        last = os.path.join(o.layout.checkpoints(o.model), "checkpoint_last.pt")
        write_fairseq_checkpoint(last, 0, 5, 9.0, within=5)
        shutil.copy(last, o.layout.checkpoint(o.model))
        return {}

    monkeypatch.setattr(train_stage, "_run", stopped_by_max_update)
    status, out, _err = cli_train(layout, capsys, "--max-update", "5")
    assert status == 0 and "(stopped in epoch 1 after 0 full epochs, 5 updates, valid loss 9.000)" in out, out
    record = json.loads(Path(record_file(layout)).read_text())
    assert (record["epochs"], record["stopped_in_epoch"], record["num_updates"]) == (0, 1, 5)


@pytest.mark.parametrize(
    "content, why",
    [
        ("[1, 2, 3]", "a JSON array, not an object"),  # issue 50: AttributeError 'list' object has no attribute 'get'
        ('"done"', "a JSON string, not an object"),
        ('{"stage": "train", "fingerprint": [1], "outputs": {}}', "its 'fingerprint' is a JSON array"),
        ('{"stage": "train", "fingerprint": {}, "outputs": ["checkpoint_best.pt"]}', "its 'outputs' is a JSON array"),
    ],
)
def test_a_record_of_the_wrong_shape_is_one_line_naming_it(layout, fairseq_runs, capsys, content, why):
    """A stage record that is JSON of another shape (a hand edit, another tool's file) is refused
    as a truncated one is: one line naming the file, exit 1, the record left as it is."""
    status, _, _ = cli_train(layout, capsys, "--max-epoch", "1")
    assert status == 0
    Path(record_file(layout)).write_text(content + "\n")
    status, out, err = cli_train(layout, capsys, "--max-epoch", "2")
    assert status == 1 and out == "" and len(err) == 1, err
    assert err[0].startswith(f"error: {record_file(layout)}: not a state file this project writes ({why})"), err
    assert Path(record_file(layout)).read_text() == content + "\n" and fairseq_runs == [0]


def test_a_translations_record_of_the_wrong_shape_is_one_line_naming_it(tmp_path):
    from contextual_mt.pipeline.systems import read_translations_record

    layout = PairLayout("fr", str(tmp_path))
    os.makedirs(layout.results)
    path = os.path.join(layout.results, "translate.json")
    assert read_translations_record(layout) == {}
    for content in ("[1]", '{"sentence": [1]}', '{"sentence": {"fingerprint": "x", "output": "abc"}}'):
        Path(path).write_text(content)
        with pytest.raises(InputError, match=f"^{path}: not a state file this project writes"):
            read_translations_record(layout)
