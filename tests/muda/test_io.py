import contextlib
import errno
import io
import os

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


# ----------------------------------------------------------------------------- the one reader (issue 27)
def test_the_reader_drops_a_bom_and_refuses_nul_bytes(tmp_path):
    """A byte-order mark (Windows editors write one) stuck to the first id: line 1 became a
    document of its own. Only the file's first bytes are a BOM; elsewhere U+FEFF is text."""
    from muda.formats.tags import read_tags
    from muda.io import read_lines

    (tmp_path / "ids").write_bytes(b"\xef\xbb\xbftalk 1\r\ntalk 1\ntalk 2\n")
    assert read_docids(str(tmp_path / "ids")) == ["talk 1", "talk 1", "talk 2"]
    (tmp_path / "mid").write_bytes("a\n\ufeffb\n".encode())
    assert read_lines(str(tmp_path / "mid")) == ["a", "\ufeffb"]
    (tmp_path / "t.json").write_bytes(b'\xef\xbb\xbf[[[{"token": "il", "tags": ["pronouns"]}]]]\n')
    assert read_tags(str(tmp_path / "t.json")) == [[[{"token": "il", "tags": ["pronouns"]}]]]
    (tmp_path / "nul").write_bytes(b"one\ntwo\nth\x00ree\n")
    with pytest.raises(InputError, match=r"nul:3: a NUL byte"):
        read_lines(str(tmp_path / "nul"))
    (tmp_path / "utf16").write_bytes("talk 1\n".encode("utf-16"))
    with pytest.raises(InputError, match=r"utf16:1: not UTF-8 text \(UTF-16: save it as UTF-8\)"):
        read_lines(str(tmp_path / "utf16"))


def test_a_bad_byte_is_named_at_its_line_far_into_a_file(tmp_path):
    """The line of a byte that is not UTF-8 counts from the file's start (not from a read buffer)."""
    from muda.io import read_lines

    (tmp_path / "big").write_bytes(b"".join(b"line %d\n" % k for k in range(1, 5001)) + b"caf\xe9\n")
    with pytest.raises(InputError, match=r"big:5001: not UTF-8"):
        read_lines(str(tmp_path / "big"))


# ----------------------------------------------------------------------------- a full disk (issue 27)
def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_names_the_output_and_leaves_nothing(tmp_path, monkeypatch):
    """The one writer turns an OSError into one line naming the output (not its temporary); it
    stays an OSError for callers that handle failed writes; nothing is left behind."""
    import muda.io
    from muda.errors import run_command

    monkeypatch.setattr(muda.io, "_write_text", _disk_full)
    out = str(tmp_path / "out" / "tags.json")
    with pytest.raises(OSError, match=r"tags.json: cannot write \(No space left on device\); free some space"):
        with muda.io.outputs(out):
            muda.io.atomic_write_text(out, "x")
    assert not list(tmp_path.iterdir())
    with pytest.raises(InputError, match="cannot write"):
        muda.io.atomic_write_text(out, "x", transactional=False)  # (caches) its directory is made at once
    assert not list((tmp_path / "out").iterdir())
    (tmp_path / "out").rmdir()

    def command(args):
        muda.io.atomic_write_text(out, "x")
        return 0

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert run_command(command, None, muda.io.outputs(out)) == 1
    assert err.getvalue() == f"error: {out}: cannot write (No space left on device); free some space and run again\n"
    assert not list(tmp_path.iterdir())


def test_a_full_disk_met_outside_the_writers_is_one_line(tmp_path):
    from muda.errors import run_command

    def command(args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "model.pt"))

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert run_command(command, None) == 1
    assert err.getvalue().splitlines() == [f"error: {tmp_path / 'model.pt'}: cannot write (No space left on device); "
                                           "free some space and run again"]


def test_muda_tag_on_a_full_disk(demo, tmp_path, monkeypatch):
    """`muda tag` in this process, every write failing as on a full disk: one line, no output."""
    import muda.io
    from muda.cli import main
    from tests.muda.helpers import tag_args

    monkeypatch.setattr(muda.io, "_write_text", _disk_full)
    out = tmp_path / "out"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(tag_args(demo, out / "t.json")) == 1
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {out}") and "No space left on device" in lines[0], lines
    assert not out.exists()


def test_lines_streamed_from_an_archive_follow_the_same_rules():
    from muda.io import decoded_lines

    assert list(decoded_lines([b"\xef\xbb\xbfa\r\n", b"\xef\xbb\xbfb\n"], "m.tsv")) == [(1, "a"), (2, "\ufeffb")]
    with pytest.raises(InputError, match=r"m.tsv:2: a NUL byte"):
        list(decoded_lines([b"a\n", b"b\x00\n"], "m.tsv"))
    with pytest.raises(InputError, match=r"m.tsv:2: not UTF-8"):
        list(decoded_lines([b"a\n", b"caf\xe9\n"], "m.tsv"))


def test_an_output_given_as_a_link_is_written_where_it_points(tmp_path):
    from muda.io import atomic_write_text, outputs

    target, link = tmp_path / "results" / "scores.json", tmp_path / "scores.json"
    target.parent.mkdir()
    os.symlink(target, link)  # dangling: the target is made
    atomic_write_text(str(link), "one\n")
    assert link.is_symlink() and target.read_text() == "one\n"
    with outputs(str(link)):  # inside a command's transaction too
        atomic_write_text(str(link), "two\n")
    assert link.is_symlink() and target.read_text() == "two\n"
