"""Penn Treebank trees, the ellipsis classifier's training data."""

import pytest

from commandkit.errors import InputError
from muda.formats.ptb import read_ptb_trees
from tests.muda.helpers import PTB_TREES as TREES


def test_ptb_reader_labels_ellipsis_traces(tmp_path):
    (tmp_path / "a.mrg").write_text(TREES)
    got = list(read_ptb_trees(str(tmp_path / "a.mrg")))
    assert [(s, e) for s, e, _ in got] == [
        ("I do n't .", True),
        ("She ate an apple .", False),
        ("Both did .", True),
        ("We like cats .", False),
    ]
    (tmp_path / "b.mrg").write_text("( (S (NP (PRP I)) \n")
    with pytest.raises(InputError, match=r"b.mrg:1: tree not closed"):
        list(read_ptb_trees(str(tmp_path / "b.mrg")))
