"""The library calls `tag_files` and `run_eval` give Python callers the CLI's guarantees: every
output checked before any annotation or tagging, all written together at the end, nothing left
behind on an error (no partial JSON, no work directory, no temporary directory)."""

import contextlib
import errno
import io
import os

import pytest

from commandkit.errors import InputError
from muda.annotators.lexicon import LexiconAnnotator
from muda.evaluation.evaluate import EvalOptions, run_eval
from muda.tagger import TagOptions, tag_files


class NoWork:
    """An annotator that must not be reached: outputs are checked before any annotation."""

    has_ellipsis_model = False

    def __getattr__(self, step):
        raise AssertionError(f"annotator called ({step}) before the outputs were checked")


def tag_options(d, output, **more):
    return TagOptions(str(d / "test.en"), str(d / "test.fr"), str(d / "test.docids"), "fr", str(output), **more)


def lexicon(d):
    return LexiconAnnotator(str(d / "train.en.conllu"), str(d / "train.fr.conllu"), str(d / "train.align"))


def eval_options(d, **more):
    return EvalOptions(
        str(d / "test.en"),
        str(d / "test.fr"),
        str(d / "test.docids"),
        "fr",
        [str(d / "sentence.txt"), str(d / "context.txt")],
        names=["sentence", "context"],
        src_conllu=str(d / "test.en.conllu"),
        ref_conllu=str(d / "test.fr.conllu"),
        ref_alignments=str(d / "test.align"),
        bootstrap=10,
        **more,
    )


@pytest.mark.parametrize("where", ["summary", "annotation", "under_a_file"])
def test_tag_files_checks_every_output_before_annotating(demo, tmp_path, where):
    out = tmp_path / "x.json"
    if where == "summary":
        (tmp_path / "x.summary.json").mkdir()
    elif where == "annotation":
        (tmp_path / "x.tgt.conllu").mkdir()
    else:
        (tmp_path / "file").write_text("")
        out = tmp_path / "file" / "x.json"
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(InputError, match=r"is a directory|cannot write here"):
        tag_files(tag_options(demo, out), NoWork(), progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_tag_files_writes_all_or_nothing(demo, tmp_path):
    """An error after the annotations were read (coreference) leaves none of the six files."""
    bad = tmp_path / "entity.conllu"
    bad.write_text((demo / "test.en.conllu").read_text().replace("_\n", "Entity=e99)\n", 1))
    with pytest.raises(InputError, match=r"entity\.conllu: sentence 1: entity e99 closed but not opened"):
        tag_files(
            tag_options(
                demo,
                tmp_path / "out" / "x.json",
                src_conllu=str(bad),
                tgt_conllu=str(demo / "test.fr.conllu"),
                alignments=str(demo / "test.align"),
            ),
            progress=False,
        )
    assert [p.name for p in tmp_path.iterdir()] == ["entity.conllu"]  # not even out/


def test_run_eval_checks_the_plot_before_tagging_and_writes_nothing(demo, tmp_path):
    (tmp_path / "plot.png").mkdir()
    with pytest.raises(InputError, match=r"plot\.png: is a directory"):
        run_eval(eval_options(demo, output=str(tmp_path / "e.json"), plot=str(tmp_path / "plot.png")), NoWork())
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]  # no e.json, no e.work/


def test_run_eval_error_in_a_system_leaves_no_work_directory(demo, tmp_path):
    """The reference is tagged (into OUTPUT.work) before the second system fails."""
    options = eval_options(
        demo, output=str(tmp_path / "e.json"), hyp_conllu=[str(demo / "test.fr.conllu"), str(demo / "test.fr.conllu")]
    )
    with pytest.raises(InputError, match=r"does not match .*sentence.txt:\d+"):
        run_eval(options, lexicon(demo))
    assert not list(tmp_path.iterdir())


def test_run_eval_without_output_leaves_no_temporary_directory(demo, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = run_eval(eval_options(demo), lexicon(demo))
    assert not list(tmp_path.iterdir())
    assert result["systems"]["context"]["tags"]["pronouns"]["f"] == 1.0
    assert result["reference_tags"] is None  # it was in the temporary directory, now gone
    with pytest.raises(InputError):
        run_eval(eval_options(demo, hyp_conllu=[str(demo / "test.fr.conllu")] * 2), lexicon(demo))
    assert not list(tmp_path.iterdir())


def test_run_eval_keeps_the_work_directory_on_success(demo, tmp_path):
    run_eval(eval_options(demo, output=str(tmp_path / "e.json")), lexicon(demo))
    work = {p.name for p in (tmp_path / "e.work").iterdir()}
    assert {"reference.tags.json", "sentence.txt", "context.tags.json", "context.tags.summary.json"} <= work
    assert not [n for n in work if n.startswith(".")]  # no temporary left


def test_run_eval_outputs_may_not_collide_with_inputs_or_each_other(demo, tmp_path):
    """A plot written over a system's work file, or a system's tags over the given reference
    tags, is refused before anything is written (one would replace the other)."""
    work = tmp_path / "e.work"
    with pytest.raises(InputError, match=r"context.txt: --plot and the work file context.txt of system 'context'"):
        run_eval(eval_options(demo, output=str(tmp_path / "e.json"), plot=str(work / "context.txt")), NoWork())
    with pytest.raises(
        InputError,
        match=r"the work file context.tags.json of system 'context' would overwrite the "
        r"input given as --ref-tags",
    ):
        run_eval(
            eval_options(demo, output=str(tmp_path / "e.json"), ref_tags=str(work / "context.tags.json")), NoWork()
        )
    assert not list(tmp_path.iterdir())


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_muda_tag_on_a_full_disk(demo, tmp_path, monkeypatch):
    """`muda tag` in this process, every write failing as on a full disk: one line, no output."""
    import commandkit.outputs
    from muda.cli import main
    from tests.muda.helpers import tag_args

    monkeypatch.setattr(commandkit.outputs, "_write_text", _disk_full)
    out = tmp_path / "out"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(tag_args(demo, out / "t.json")) == 1
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {out}") and "No space left on device" in lines[0], lines
    assert not out.exists()


class _NoAligner:
    """Annotators that make nothing (no aligner on this machine): with pre-computed CoNLL-U and
    no --alignments, the phenomena that read alignments are skipped with a warning."""

    has_ellipsis_model = False

    def provides(self, language):
        return frozenset()

    def enabling(self, missing, language):
        return "give --alignments FILE"


def test_muda_tag_on_a_full_disk_warns_of_nothing_before_its_error(demo, tmp_path, monkeypatch, caplog):
    """Issue 50.4: the warning that phenomena are skipped is no warning above the error line of an
    output that cannot be written (it comes once the outputs are written); on success it is there."""
    import commandkit.outputs
    from muda.tagger import TagOptions, tag_files

    def tag(out):
        o = TagOptions(
            str(demo / "test.en"),
            str(demo / "test.fr"),
            str(demo / "test.docids"),
            "fr",
            str(out),
            src_conllu=str(demo / "test.en.conllu"),
            tgt_conllu=str(demo / "test.fr.conllu"),
        )
        caplog.clear()
        with caplog.at_level("WARNING", logger="muda"):
            tag_files(o, _NoAligner(), progress=False)

    tag(tmp_path / "ok" / "t.json")
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1 and warned[0].startswith("skipping lexical_cohesion"), warned
    monkeypatch.setattr(commandkit.outputs, "_write_text", _disk_full)
    out = tmp_path / "full" / "t.json"
    with pytest.raises(OSError, match="No space left on device"):
        tag(out)
    assert [r.getMessage() for r in caplog.records] == []
    assert not out.parent.exists()
