"""One error type with a code per kind (``commandkit.errors.Code``), one boundary that prints it
(``commandkit.console.report``): library code raises, only the command line prints and exits."""

import errno

import pytest

from commandkit.errors import Code, InputError


def test_the_codes_are_stable():
    """A code, once given, names its kind for good (tests and Python callers test them): the
    table as it was published (docs/explanations/errors.md); a new kind takes the next number."""
    assert {c.name: c.value for c in Code} == {
        "INPUT": "E000",
        "OPTION_VALUE": "E001",
        "OPTION_MISSING": "E002",
        "NOT_FOUND": "E003",
        "IS_DIRECTORY": "E004",
        "NOT_UTF8": "E005",
        "EMPTY": "E006",
        "LINE_COUNT": "E007",
        "FORMAT": "E008",
        "MISMATCH": "E009",
        "CANNOT_WRITE": "E010",
        "OUTPUT_IS_INPUT": "E011",
        "TOO_LONG": "E012",
        "OUT_OF_MEMORY": "E013",
        "MODEL": "E014",
        "OPTIONS_CONFLICT": "E015",
    }
    assert all(c.about for c in Code)


def test_the_code_is_not_in_the_message():
    """The line users read is the message alone, as before codes: the code is an attribute."""
    e = InputError("x.txt: file not found", code=Code.NOT_FOUND)
    assert str(e) == "x.txt: file not found" and e.code is Code.NOT_FOUND
    assert InputError("anything").code is Code.INPUT


def test_the_shared_checks_raise_their_kind(tmp_path):
    from commandkit.errors import check_number, write_error
    from commandkit.outputs import check_not_inputs
    from commandkit.text import check_input_file, decode_text

    cases = [
        (lambda: check_number("--beam", 0, minimum=1), Code.OPTION_VALUE),
        (lambda: check_number("--lenpen", float("nan")), Code.OPTION_VALUE),
        (lambda: check_input_file(str(tmp_path / "nothere.txt")), Code.NOT_FOUND),
        (lambda: check_input_file(str(tmp_path)), Code.IS_DIRECTORY),
        (lambda: check_input_file(""), Code.OPTION_MISSING),
        (lambda: decode_text(b"ok\n\xff\n", "f.txt"), Code.NOT_UTF8),
        (lambda: decode_text(b"a\0b\n", "f.txt"), Code.NOT_UTF8),
        (lambda: check_not_inputs({"--output": "a.txt"}, {"--hyp": "a.txt"}), Code.OUTPUT_IS_INPUT),
    ]
    for call, code in cases:
        with pytest.raises(InputError) as e:
            call()
        assert e.value.code is code, (str(e.value), e.value.code)
    full = write_error("out.txt", OSError(errno.ENOSPC, "No space left on device"))
    assert full.code is Code.CANNOT_WRITE and isinstance(full, OSError)


def test_contextual_mt_raises_the_one_type():
    """contextual_mt's error is the base type itself: a Python caller catches one type whatever
    package raised, and nothing re-wraps muda's or commandkit's errors on the way up."""
    from contextual_mt.errors import ContextualMTError, OverPositionsError, check_option, given
    from muda.evaluation.metrics import local_comet_checkpoint

    assert ContextualMTError is InputError
    assert issubclass(OverPositionsError, InputError) and OverPositionsError("x").code is Code.TOO_LONG
    with pytest.raises(ContextualMTError) as e:
        check_option("--beam", 0, minimum=1)
    assert e.value.code is Code.OPTION_VALUE
    with pytest.raises(ContextualMTError) as e:
        given(None, "--path")
    assert (str(e.value), e.value.code) == ("--path: not given", Code.OPTION_MISSING)
    with pytest.raises(ContextualMTError):  # muda's, as it is
        local_comet_checkpoint("/nonexistent/model.ckpt")


@pytest.mark.parametrize(
    "error,line,status",
    [
        (InputError("a.txt: file not found", code=Code.NOT_FOUND), "error: a.txt: file not found", 1),
        (KeyboardInterrupt(), "error: interrupted", 130),
        (OSError(errno.ENOSPC, "No space left on device", "out.txt"), "error: out.txt: cannot write", 1),
        (RuntimeError("shape mismatch"), None, None),
    ],
)
def test_the_boundary_prints_one_line_and_says_the_status(error, line, status, capsys):
    from commandkit.console import report

    assert report(error) == status
    err = capsys.readouterr().err
    assert (err.startswith(line) and err.count("\n") == 1) if line else err == ""


def test_an_allocation_that_does_not_fit_is_an_error_of_its_kind(capsys):
    from commandkit.console import out_of_memory, report

    oom = RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
    assert report(oom) is None  # a command that names no setting to lower: a bug's traceback
    assert report(oom, "lower --batch-size") == 1
    assert (
        capsys.readouterr().err
        == "error: out of memory (CUDA out of memory. Tried to allocate 2.00 GiB); lower --batch-size\n"
    )
    assert out_of_memory(oom, "x").code is Code.OUT_OF_MEMORY
    assert out_of_memory(RuntimeError("shape mismatch"), "x") is None


def test_muda_run_from_python_raises_instead_of_printing(tmp_path, capsys):
    """``muda.commands.run`` is the library call the pipeline and ``testset build`` make: a bad
    input reaches the caller as the error (the command line's boundary prints it), no line
    printed here and no exit status to turn into SystemExit."""
    from muda.commands import TagArgs, run

    options = TagArgs(
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
