"""muda's commands called from Python (``muda.commands.run``): errors reach the caller."""

import pytest

from commandkit.errors import Code, InputError


def test_muda_run_from_python_raises_instead_of_printing(tmp_path, capsys):
    """``muda.commands.run`` is the library call the pipeline and ``testset build`` make: a bad
    input reaches the caller as the error (the command line's boundary prints it), no line
    printed here and no exit status to turn into SystemExit."""
    from muda.commands import TagOptions, run

    options = TagOptions(
        src=str(tmp_path / "nothere.en"),
        tgt=str(tmp_path / "nothere.fr"),
        docids=str(tmp_path / "nothere.docids"),
        tgt_lang="fr",
        dump_tags=str(tmp_path / "tags.json"),
        src_conllu=str(tmp_path / "nothere.en.conllu"),  # given annotations: no model is needed
        tgt_conllu=str(tmp_path / "nothere.fr.conllu"),
        alignments=str(tmp_path / "nothere.align"),
    )
    with pytest.raises(InputError) as e:
        run(options)
    assert e.value.code is Code.NOT_FOUND and "nothere" in str(e.value)
    assert capsys.readouterr().err == "" and not (tmp_path / "tags.json").exists()
