"""The training presets: declared once (pipeline/presets.py), their Hydra configs shipped inside
the package, the README's table generated from them, and the demo preset's training command."""
import os
from pathlib import Path

import pytest

import contextual_mt
from contextual_mt.errors import ContextualMTError
from contextual_mt.pipeline.presets import PRESETS, config_dir, config_file, get_preset, markdown_table
from contextual_mt.pipeline.train import TrainOptions, train_command

README = Path(__file__).resolve().parents[3] / "README.md"


def test_the_readme_table_is_the_presets_module():
    assert markdown_table() in README.read_text(encoding="utf-8")
    assert list(PRESETS) == ["tiny", "small", "big", "demo"]


def test_the_configs_are_package_data():
    package = Path(contextual_mt.__file__).resolve().parent
    assert Path(config_dir()).resolve() == package / "hydra_configs"
    for name in PRESETS:
        assert os.path.isfile(config_file(name)), name
    with pytest.raises(ContextualMTError, match="--preset 'huge'"):
        config_file("huge")


def test_the_demo_preset_trains_the_demo_models(tmp_path):
    demo = get_preset("demo")
    assert demo.config == "tiny" and demo.vocab_size == 500 and demo.max_epoch == {"sentence": 8, "context": 16}
    for model, epochs in demo.max_epoch.items():
        cmd = train_command(TrainOptions("fr", model, preset="demo", root=str(tmp_path)), gpus=0, fp16=False)
        assert cmd[cmd.index("--config-dir") + 1] == config_dir() and cmd[cmd.index("--config-name") + 1] == "tiny"
        assert "common.log_interval=100" in cmd and f"optimization.max_epoch={epochs}" in cmd
        assert "common.cpu=true" in cmd
    # an explicit --max-epoch wins over the preset's; the other presets keep their config's
    cmd = train_command(TrainOptions("fr", "context", preset="demo", root=str(tmp_path), max_epoch=3), 0, False)
    assert "optimization.max_epoch=3" in cmd and "optimization.max_epoch=16" not in cmd
    tiny = train_command(TrainOptions("fr", "context", preset="tiny", root=str(tmp_path)), 0, False)
    assert not any(arg.startswith(("optimization.max_epoch=", "common.log_interval=")) for arg in tiny)


def test_the_preset_choices_of_the_command_line(tmp_path, capsys):
    from contextual_mt.cli import main

    with pytest.raises(SystemExit):
        main(["pipeline", "train", "--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in PRESETS)
