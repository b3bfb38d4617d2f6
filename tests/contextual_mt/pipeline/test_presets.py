"""The training presets: declared once (pipeline/presets.py), their Hydra configs shipped inside
the package, the study tutorial's table (docs/tutorials/study.md) generated from them, and the demo
preset's training command."""

import os
from pathlib import Path

import pytest

import contextual_mt
from contextual_mt.errors import InputError
from contextual_mt.pipeline.presets import PRESETS, config_dir, config_file, get_preset, markdown_table
from contextual_mt.pipeline.train import TrainOptions, train_command

STUDY = Path(__file__).resolve().parents[3] / "docs" / "tutorials" / "study.md"


def test_the_study_tutorials_table_is_the_presets_module():
    assert markdown_table() in STUDY.read_text(encoding="utf-8")
    assert list(PRESETS) == ["tiny", "small", "big", "demo"]


def test_the_configs_are_package_data():
    package = Path(contextual_mt.__file__).resolve().parent
    assert Path(config_dir()).resolve() == package / "hydra_configs"
    for name in PRESETS:
        assert os.path.isfile(config_file(name)), name
    with pytest.raises(InputError, match="--preset 'huge'"):
        config_file("huge")


def test_the_demo_preset_trains_the_demo_models(tmp_path):
    demo = get_preset("demo")
    assert demo.config == "tiny" and demo.vocab_size == 500 and demo.max_epoch == {"sentence": 8, "context": 7}
    for model, epochs in demo.max_epoch.items():
        cmd = train_command(TrainOptions("fr", model, preset="demo", root=str(tmp_path)), gpus=0, fp16=False)
        assert cmd[cmd.index("--config-dir") + 1] == config_dir() and cmd[cmd.index("--config-name") + 1] == "tiny"
        assert "common.log_interval=100" in cmd and f"optimization.max_epoch={epochs}" in cmd
        assert "lr_scheduler.warmup_updates=100" in cmd
        assert "common.cpu=true" in cmd
    # an explicit --max-epoch wins over the preset's; the others give theirs (tiny: 5, for a real pair
    # of 10k sentences in 30 minutes on 2 cores) or keep their config's
    cmd = train_command(TrainOptions("fr", "context", preset="demo", root=str(tmp_path), max_epoch=3), 0, False)
    assert "optimization.max_epoch=3" in cmd and "optimization.max_epoch=7" not in cmd
    tiny = train_command(TrainOptions("fr", "context", preset="tiny", root=str(tmp_path)), 0, False)
    assert "optimization.max_epoch=5" in tiny and not any(arg.startswith("common.log_interval=") for arg in tiny)
    small = train_command(TrainOptions("fr", "context", preset="small", root=str(tmp_path)), 0, False)
    assert not any(arg.startswith("optimization.max_epoch=") for arg in small)


def test_the_preset_choices_of_the_command_line(tmp_path, capsys):
    from contextual_mt.cli import main

    with pytest.raises(SystemExit):
        main(["pipeline", "train", "--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in PRESETS)


def test_a_preset_as_fairseq_train_options_is_its_config():
    """What the CADec demo trains with: the demo preset's settings, read by fairseq-train's parser."""
    from fairseq import options

    from contextual_mt.pipeline.presets import fairseq_train_options
    from tests.helpers import USER_DIR

    argv = [
        "data",
        "--user-dir",
        USER_DIR,
        "--task",
        "document_translation",
        "--arch",
        "contextual_transformer_tiny",
        *fairseq_train_options("demo", skip=("max_epoch",)),
    ]
    a = options.parse_args_and_arch(options.get_training_parser(), argv)
    assert (a.optimizer, a.lr_scheduler, a.criterion) == ("adam", "inverse_sqrt", "label_smoothed_cross_entropy")
    assert a.lr == [0.002] and a.adam_betas == "(0.9, 0.98)" and a.warmup_updates == 100  # the demo preset's
    assert a.label_smoothing == 0.1 and a.dropout == 0.1 and a.max_tokens == 4096
    assert a.seed == 1 and a.log_format == "simple" and a.no_epoch_checkpoints
    assert a.log_interval == 100  # the demo preset's override of tiny.yaml's 50
    assert a.max_epoch == 0  # skipped: the caller sets it
    assert "--user-dir" not in fairseq_train_options("demo")  # left to the caller (??? in the config)


def test_the_tiny_presets_vocabulary_and_output_bound_reach_the_stages(tmp_path, monkeypatch):
    """Issue 50: PRESET=tiny on a real pair is made for about 10k sentences in 30 minutes on 2
    cores. `make data PRESET=tiny` (no SPM_VOCAB) makes the preset's vocabulary, SPM_VOCAB still
    wins; `make translate` bounds the outputs of models trained with it (a barely trained model's
    translations ran to the decoder's 200 pieces), unless another bound is asked for."""
    from contextual_mt.cli import main
    from contextual_mt.inference.decoding import DecodingOptions
    from contextual_mt.pipeline import prepare as data_cli
    from contextual_mt.pipeline.layout import PairLayout
    from contextual_mt.pipeline.train import done_record
    from contextual_mt.pipeline.translate_stage import TranslateStageOptions, model_decoding

    asked = []

    def stop(options, progress):
        asked.append(options.vocab_size)
        raise SystemExit(0)

    monkeypatch.setattr(data_cli, "prepare_data_steps", stop)
    (tmp_path / "text").mkdir()
    base = ["pipeline", "data", "--lang", "fr", "--text", str(tmp_path / "text"), "--output", str(tmp_path / "d")]
    for extra in (["--preset", "tiny"], ["--preset", "tiny", "--vocab-size", "900"], []):
        with pytest.raises(SystemExit):
            main([*base, *extra])
    assert asked == [4000, 900, 16000]
    layout = PairLayout("fr", str(tmp_path))
    # the bound the train record says the model was trained with (train_model writes the preset's)
    done_record(layout, "context").save({}, [], preset="tiny", max_len=get_preset("tiny").max_len)
    done_record(layout, "sentence").save({}, [], preset="demo", max_len=get_preset("demo").max_len)
    o = TranslateStageOptions("fr", str(tmp_path))
    tiny, demo = model_decoding(o, "context"), model_decoding(o, "sentence")
    assert (tiny.max_len_a, tiny.max_len_b) == get_preset("tiny").max_len == (1.5, 10)
    assert (demo.max_len_a, demo.max_len_b) == (DecodingOptions.max_len_a, DecodingOptions.max_len_b)
    # a model trained before presets had a bound keeps the decoding it was translated with
    done_record(layout, "context").save({}, [], preset="tiny")
    earlier = model_decoding(o, "context")
    assert (earlier.max_len_a, earlier.max_len_b) == (DecodingOptions.max_len_a, DecodingOptions.max_len_b)
    given = TranslateStageOptions("fr", str(tmp_path), decoding=DecodingOptions(max_len_b=50))
    assert model_decoding(given, "context").max_len_b == 50
