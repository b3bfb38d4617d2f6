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
