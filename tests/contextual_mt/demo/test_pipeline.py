"""The demo runs the study's data and train stages (demo preset) and keeps its folders."""
import pytest

from contextual_mt.demo.pipeline import DemoFolders, prepare
from contextual_mt.errors import ContextualMTError


def test_the_demo_keeps_its_folders():
    folders = DemoFolders("fr", "demo")
    assert folders.spm == "demo/spm/spm.model" and folders.bin == "demo/spm/bin"
    assert folders.checkpoint("context") == "demo/checkpoints/context/checkpoint_best.pt"
    assert folders.checkpoint("sentence") == "demo/checkpoints/sentence/checkpoint_best.pt"


def test_a_demo_folder_of_the_old_layout_is_refused(tmp_path):
    (tmp_path / "data-bin").mkdir()
    with pytest.raises(ContextualMTError, match="data-bin"):
        prepare(tmp_path, tmp_path / "data")
    assert not (tmp_path / "spm").exists()
