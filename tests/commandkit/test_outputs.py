"""``outputs(...)``: outputs distinct and replacing no input, scratch directories, a failed commit,
a full disk, an output given as a link."""

import contextlib
import errno
import io
import os

import pytest

from commandkit.errors import InputError


def test_two_outputs_at_the_same_place_are_an_error(tmp_path):
    from commandkit.outputs import check_distinct

    check_distinct([("--output", str(tmp_path / "a.json")), ("--table", str(tmp_path / "a.txt")), ("--plot", None)])
    with pytest.raises(InputError, match=r"a\.json: --output and --table would be the same file"):
        check_distinct([("--output", str(tmp_path / "a.json")), ("--table", str(tmp_path / "x" / ".." / "a.json"))])
    with pytest.raises(InputError, match=r"a\.json: given twice as an output"):
        check_distinct([("an output", str(tmp_path / "a.json"))] * 2)


def test_an_output_may_not_replace_an_input(tmp_path):
    from commandkit.outputs import check_not_inputs

    (tmp_path / "hyp.txt").write_text("x\n")
    check_not_inputs({"--output": str(tmp_path / "e.json")}, {"--hyps": str(tmp_path / "hyp.txt")})
    with pytest.raises(InputError, match=r"hyp\.txt: --output would overwrite the input given as --hyps"):
        check_not_inputs({"--output": str(tmp_path / "sub" / ".." / "hyp.txt")}, {"--hyps": str(tmp_path / "hyp.txt")})


def test_a_scratch_directory_is_written_directly_and_removed(tmp_path):
    """Intermediate files of a command: not staged (nothing of them is an output), gone at the end,
    also after an error; the command's outputs are still all-or-nothing."""
    import os

    from commandkit.outputs import atomic_write_text, outputs, scratch_directory

    kept = []
    with outputs(str(tmp_path / "out.txt")):
        with scratch_directory() as scratch:
            kept.append(scratch)
            atomic_write_text(os.path.join(scratch, "tmp.txt"), "x")
            assert os.listdir(scratch) == ["tmp.txt"]  # written now, not at the end
        atomic_write_text(str(tmp_path / "out.txt"), "done")
    assert not os.path.exists(kept[0]) and (tmp_path / "out.txt").read_text() == "done"
    with pytest.raises(RuntimeError), outputs(str(tmp_path / "other.txt")), scratch_directory() as scratch:
        kept.append(scratch)
        atomic_write_text(os.path.join(scratch, "tmp.txt"), "x")
        atomic_write_text(str(tmp_path / "other.txt"), "partial")
        raise RuntimeError("boom")
    assert not os.path.exists(kept[1]) and not (tmp_path / "other.txt").exists()


def test_a_failed_commit_is_one_error_and_leaves_no_temporary(tmp_path):
    """A destination turned into a directory while the command ran: one line, no temporaries."""
    from commandkit.outputs import atomic_write_text, outputs

    with (
        pytest.raises(InputError, match=r"b\.txt: cannot write"),
        outputs(str(tmp_path / "a.txt"), str(tmp_path / "b.txt")),
    ):
        atomic_write_text(str(tmp_path / "a.txt"), "a")
        atomic_write_text(str(tmp_path / "b.txt"), "b")
        (tmp_path / "b.txt").mkdir()
    assert [p.name for p in tmp_path.iterdir()] == ["b.txt"]  # no a.txt, no temporary
    assert (tmp_path / "b.txt").is_dir()


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_names_the_output_and_leaves_nothing(tmp_path, monkeypatch):
    """The one writer turns an OSError into one line naming the output (not its temporary); it
    stays an OSError for callers that handle failed writes; nothing is left behind."""
    import commandkit.outputs
    from commandkit.console import run_command

    monkeypatch.setattr(commandkit.outputs, "_write_text", _disk_full)
    out = str(tmp_path / "out" / "tags.json")
    with (
        pytest.raises(OSError, match=r"tags.json: cannot write \(No space left on device\); free some space"),
        commandkit.outputs.outputs(out),
    ):
        commandkit.outputs.atomic_write_text(out, "x")
    assert not list(tmp_path.iterdir())
    with pytest.raises(InputError, match="cannot write"):
        commandkit.outputs.atomic_write_text(out, "x", transactional=False)  # (caches) its directory is made at once
    assert not list((tmp_path / "out").iterdir())
    (tmp_path / "out").rmdir()

    def command(args):
        commandkit.outputs.atomic_write_text(out, "x")
        return 0

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert run_command(command, None, commandkit.outputs.outputs(out)) == 1
    assert err.getvalue() == f"error: {out}: cannot write (No space left on device); free some space and run again\n"
    assert not list(tmp_path.iterdir())


def test_a_full_disk_met_outside_the_writers_is_one_line(tmp_path):
    from commandkit.console import run_command

    def command(args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "model.pt"))

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert run_command(command, None) == 1
    assert err.getvalue().splitlines() == [
        f"error: {tmp_path / 'model.pt'}: cannot write (No space left on device); free some space and run again"
    ]


def test_an_output_given_as_a_link_is_written_where_it_points(tmp_path):
    from commandkit.outputs import atomic_write_text, outputs

    target, link = tmp_path / "results" / "scores.json", tmp_path / "scores.json"
    target.parent.mkdir()
    os.symlink(target, link)  # dangling: the target is made
    atomic_write_text(str(link), "one\n")
    assert link.is_symlink() and target.read_text() == "one\n"
    with outputs(str(link)):  # inside a command's transaction too
        atomic_write_text(str(link), "two\n")
    assert link.is_symlink() and target.read_text() == "two\n"


def test_a_full_disk_is_met_before_the_work(tmp_path, monkeypatch):
    """Issue 50.4: a full disk still takes the empty probe file, not a byte of it: the check writes
    one, so the command fails before it computes anything (and before any warning of its run)."""
    import commandkit.outputs

    monkeypatch.setattr(commandkit.outputs, "_write_probe", _disk_full)
    out = str(tmp_path / "out" / "tags.json")
    ran = []
    with (
        pytest.raises(InputError, match=r"tags.json: cannot write \(No space left on device\); free some space"),
        commandkit.outputs.outputs(out),
    ):
        ran.append(True)
    assert not ran and not list(tmp_path.iterdir())


def test_run_subcommand_runs_the_chosen_command_once_its_outputs_are_checked(tmp_path):
    import argparse

    from commandkit.command_outputs import run_subcommand

    ran = []
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("copy")
    p.add_argument("--source")
    p.add_argument("--output")
    p.set_defaults(func=lambda args: ran.append(args.output) or 0, output_args=("output",))
    source = tmp_path / "in.txt"
    source.write_text("x\n", encoding="utf-8")
    out = str(tmp_path / "out.txt")
    assert run_subcommand(parser.parse_args(["copy", "--source", str(source), "--output", out]), parser) == 0
    assert ran == [out]
    args = parser.parse_args(["copy", "--source", str(source), "--output", str(source)])
    with pytest.raises(InputError, match=r"in\.txt"):  # refused before the command runs
        run_subcommand(args, parser)
    assert ran == [out]
