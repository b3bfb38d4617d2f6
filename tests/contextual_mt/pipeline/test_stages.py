"""The training, translation and scoring stages: option checks, the order of stages, and what
the training command is on CPU, one GPU and several (the chain itself runs in test_chain.py)."""

import json
import sys

import pytest

from contextual_mt.cli import main
from contextual_mt.errors import InputError
from contextual_mt.inference.decoding import DecodingOptions
from contextual_mt.pipeline import train as train_stage
from contextual_mt.pipeline.layout import PairLayout, check_lang
from contextual_mt.pipeline.score_stage import ScoreStageOptions, score_systems
from contextual_mt.pipeline.train import TrainOptions, train_command, train_model
from contextual_mt.pipeline.translate_stage import TranslateStageOptions, translate_systems


def one_error(capsys, argv):
    assert main(argv) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert "Traceback" not in "\n".join(err)
    assert err[-1].startswith("error: ") and sum(line.startswith("error: ") for line in err) == 1, err
    return err[-1]


@pytest.mark.parametrize("lang", ["", "en", "FR", "fr_FR", "../fr", "fr de"])
def test_language_codes(lang):
    with pytest.raises(InputError, match="--lang"):
        check_lang(lang)


@pytest.mark.parametrize("lang", ["fr", "pt-br", "zh-cn", "ast"])
def test_ted_language_codes_are_accepted(lang):
    assert PairLayout(lang).translation("context") == f"./results/{lang}/context.test.{lang}"


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--preset", "huge"], "--preset"),
        (["--preset", "big"], "--pretrained PATH"),
        (["--preset", "big", "--pretrained", "missing.pt"], "missing.pt: pretrained checkpoint not found"),
        (["--preset", "tiny", "--pretrained", "x.pt"], "--pretrained is for --preset big"),
        (["--max-epoch", "0"], "--max-epoch"),
        (["--gpus", "-1"], "--gpus"),
        (["--override", "novalue"], "key=value"),
    ],
)
def test_train_options_are_checked_first(tmp_path, capsys, argv, fragment):
    if "--preset" in argv and argv[argv.index("--preset") + 1] == "huge":
        with pytest.raises(SystemExit):  # argparse's choices
            main(["pipeline", "train", "--lang", "fr", "--root", str(tmp_path), *argv])
        return
    last = one_error(capsys, ["pipeline", "train", "--lang", "fr", "--root", str(tmp_path), *argv])
    assert fragment in last
    assert not (tmp_path / "checkpoints").exists()


def test_stages_name_the_stage_that_is_missing(tmp_path, capsys):
    root = ["--lang", "fr", "--root", str(tmp_path)]
    last = one_error(capsys, ["pipeline", "train", *root, "--preset", "tiny"])
    assert "summary.json: not found" in last and "make data LANG=fr" in last
    for argv in (["pipeline", "translate", *root], ["pipeline", "score", *root]):
        assert "make data LANG=fr" in one_error(capsys, argv)
    assert not (tmp_path / "results").exists() and not (tmp_path / "checkpoints").exists()


@pytest.fixture
def fake_data(tmp_path):
    """A data folder that looks prepared (the stages after it check files, not content)."""
    layout = PairLayout("fr", str(tmp_path))
    (tmp_path / "data" / "fr" / "bin").mkdir(parents=True)
    (tmp_path / "data" / "fr" / "summary.json").write_text("{}")
    for name in ("dict.en.txt", "dict.fr.txt", "train.en-fr.fr.idx", "train.en-fr.docids"):
        (tmp_path / "data" / "fr" / "bin" / name).write_text(name)
    for split in ("train", "valid", "test"):
        for side in ("en", "fr", "docids"):
            (tmp_path / "data" / "fr" / f"{split}.{side}").write_text("a\n")
    (tmp_path / "data" / "fr" / "spm.model").write_text("x")
    return layout


def test_translate_needs_finished_training(fake_data, capsys):
    root = ["--lang", "fr", "--root", fake_data.root]
    last = one_error(capsys, ["pipeline", "translate", *root])
    assert "checkpoint_best.pt: no finished training" in last and "make train LANG=fr MODEL=sentence" in last
    last = one_error(capsys, ["pipeline", "translate", *root, "--systems", "context-gold"])
    assert "MODEL=context" in last
    last = one_error(capsys, ["pipeline", "score", *root])
    assert "sentence.test.fr: not found" in last and "make translate LANG=fr" in last


def test_training_refuses_checkpoints_of_other_data(fake_data):
    save = fake_data.checkpoints("sentence")
    import os

    os.makedirs(save)
    open(os.path.join(save, "checkpoint_last.pt"), "w").close()  # no record of what it was trained from
    with pytest.raises(InputError, match=r"no record of what they were trained from.*--overwrite"):
        train_model(TrainOptions("fr", "sentence", preset="tiny", root=fake_data.root))
    options = TrainOptions("fr", "sentence", preset="tiny", root=fake_data.root)
    record = {"fingerprint": {**train_stage.train_fingerprint(options), "data": {"dict.fr.txt": "other"}}}
    os.makedirs(os.path.join(save, ".stage"))
    with open(os.path.join(save, ".stage", "train.json"), "w") as f:
        json.dump({"stage": "train", **record, "outputs": {}, "base": "record"}, f)
    with pytest.raises(InputError, match=r"other data or settings \(changed: data\)"):
        train_model(options)


def test_training_command(fake_data, monkeypatch):
    o = TrainOptions(
        "fr", "context", preset="small", root=fake_data.root, max_update=3000, overrides=["optimization.lr=[1e-3]"]
    )
    cpu = train_command(o, gpus=0, fp16=False)
    assert cpu[0].endswith("fairseq-hydra-train") and "--config-name" in cpu and "small_scratch" in cpu
    assert "common.cpu=true" in cpu and "task.target_context_size=3" in cpu and "task.sample_context_size=true" in cpu
    assert (
        "task.target_lang=fr" in cpu and "optimization.max_update=3000" in cpu and cpu[-1] == "optimization.lr=[1e-3]"
    )
    one = train_command(o, gpus=1, fp16=True)
    assert "common.cpu=true" not in one and "common.fp16=true" in one and one[0] == cpu[0]
    many = train_command(o, gpus=4, fp16=True)
    assert many[:5] == [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=4"]
    assert many[5:] == one
    sentence = train_command(TrainOptions("fr", "sentence", preset="tiny", root=fake_data.root), 0, False)
    assert "task.target_context_size=0" in sentence and "task.coword_dropout=0.0" in sentence
    monkeypatch.setattr(train_stage, "visible_gpus", lambda: 0)
    with pytest.raises(InputError, match="--gpus 2: only 0 GPU"):
        train_model(TrainOptions("fr", "sentence", preset="tiny", root=fake_data.root, gpus=2))


def test_system_options_are_checked(tmp_path):
    with pytest.raises(InputError, match="--beam"):
        TranslateStageOptions("fr", str(tmp_path), decoding=DecodingOptions(beam=0))
    with pytest.raises(InputError, match="--systems"):
        TranslateStageOptions("fr", str(tmp_path), systems=["oracle"])
    with pytest.raises(InputError, match="--comet-batch-size"):
        ScoreStageOptions("fr", str(tmp_path), comet_batch_size=0)
    with pytest.raises(InputError, match="make data"):
        translate_systems(TranslateStageOptions("fr", str(tmp_path)))
    with pytest.raises(InputError, match="make data"):
        score_systems(ScoreStageOptions("fr", str(tmp_path)))
