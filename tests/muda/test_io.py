import numpy as np
import pytest

from muda.io import check_line_count, document_starts, read_docids
from muda.errors import InputError


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
    with pytest.raises(InputError, match="x.docids: has 2 lines but train.en has 3"):
        check_line_count(["a", "a"], "x.docids", 3, "train.en")


def test_single_document():
    assert np.array_equal(document_starts(["d"] * 4), np.zeros(4))


# ----------------------------------------------------------------------------- outputs(...)
def test_two_outputs_at_the_same_place_are_an_error(tmp_path):
    from muda.io import check_distinct

    check_distinct([("--output", str(tmp_path / "a.json")), ("--table", str(tmp_path / "a.txt")), ("--plot", None)])
    with pytest.raises(InputError, match="a.json: --output and --table would be the same file"):
        check_distinct([("--output", str(tmp_path / "a.json")), ("--table", str(tmp_path / "x" / ".." / "a.json"))])
    with pytest.raises(InputError, match="a.json: given twice as an output"):
        check_distinct([("an output", str(tmp_path / "a.json"))] * 2)


def test_an_output_may_not_replace_an_input(tmp_path):
    from muda.io import check_not_inputs

    (tmp_path / "hyp.txt").write_text("x\n")
    check_not_inputs({"--output": str(tmp_path / "e.json")}, {"--hyps": str(tmp_path / "hyp.txt")})
    with pytest.raises(InputError, match="hyp.txt: --output would overwrite the input given as --hyps"):
        check_not_inputs({"--output": str(tmp_path / "sub" / ".." / "hyp.txt")}, {"--hyps": str(tmp_path / "hyp.txt")})


def test_a_scratch_directory_is_written_directly_and_removed(tmp_path):
    """Intermediate files of a command: not staged (nothing of them is an output), gone at the end,
    also after an error; the command's outputs are still all-or-nothing."""
    import os

    from muda.io import atomic_write_text, outputs, scratch_directory

    kept = []
    with outputs(str(tmp_path / "out.txt")):
        with scratch_directory() as scratch:
            kept.append(scratch)
            atomic_write_text(os.path.join(scratch, "tmp.txt"), "x")
            assert os.listdir(scratch) == ["tmp.txt"]  # written now, not at the end
        atomic_write_text(str(tmp_path / "out.txt"), "done")
    assert not os.path.exists(kept[0]) and (tmp_path / "out.txt").read_text() == "done"
    with pytest.raises(RuntimeError):
        with outputs(str(tmp_path / "other.txt")):
            with scratch_directory() as scratch:
                kept.append(scratch)
                atomic_write_text(os.path.join(scratch, "tmp.txt"), "x")
                atomic_write_text(str(tmp_path / "other.txt"), "partial")
                raise RuntimeError("boom")
    assert not os.path.exists(kept[1]) and not (tmp_path / "other.txt").exists()


def test_a_failed_commit_is_one_error_and_leaves_no_temporary(tmp_path):
    """A destination turned into a directory while the command ran: one line, no temporaries."""
    from muda.io import atomic_write_text, outputs

    with pytest.raises(InputError, match="b.txt: cannot write"):
        with outputs(str(tmp_path / "a.txt"), str(tmp_path / "b.txt")):
            atomic_write_text(str(tmp_path / "a.txt"), "a")
            atomic_write_text(str(tmp_path / "b.txt"), "b")
            (tmp_path / "b.txt").mkdir()
    assert [p.name for p in tmp_path.iterdir()] == ["b.txt"]  # no a.txt, no temporary
    assert (tmp_path / "b.txt").is_dir()
