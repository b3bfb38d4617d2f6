"""Document ids: a document is a maximal run of equal consecutive ids; the docids file's errors."""

import numpy as np
import pytest

from commandkit.documents import check_line_count, document_starts, read_docids
from commandkit.errors import InputError


def test_documents_are_maximal_runs_of_equal_ids(tmp_path):
    path = tmp_path / "ids"
    path.write_text("talk 1\ntalk 1\nb\ntalk 1\n")
    ids = read_docids(str(path))
    assert ids == ["talk 1", "talk 1", "b", "talk 1"]
    # A repeated id after another document starts a new document.
    assert document_starts(ids).tolist() == [0, 0, 2, 3]


def test_empty_docids_file(tmp_path):
    path = tmp_path / "ids"
    path.write_text("")
    with pytest.raises(InputError, match="ids: docids file is empty"):
        read_docids(str(path))


def test_blank_id_names_line(tmp_path):
    path = tmp_path / "ids"
    path.write_text("a\n\nb\n")
    with pytest.raises(InputError, match=r"ids:2: empty document id"):
        read_docids(str(path))


def test_line_count_mismatch_names_file():
    with pytest.raises(InputError, match=r"x\.docids: has 2 lines but train\.en has 3"):
        check_line_count(["a", "a"], "x.docids", 3, "train.en")


def test_single_document():
    assert np.array_equal(document_starts(["d"] * 4), np.zeros(4))
