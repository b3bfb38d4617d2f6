"""contextual_mt's errors are the one error type of every package (``commandkit.errors.InputError``,
with its code): a Python caller catches one type, and nothing re-wraps errors on the way up."""

import pytest

from commandkit.errors import Code, InputError


def test_contextual_mt_raises_the_one_type():
    """contextual_mt's error is the base type itself: a Python caller catches one type whatever
    package raised, and nothing re-wraps muda's or commandkit's errors on the way up."""
    from commandkit.errors import check_number
    from contextual_mt.errors import ContextualMTError, OverPositionsError, given
    from muda.evaluation.metrics import local_comet_checkpoint

    assert ContextualMTError is InputError  # the deprecated name the docs once gave callers
    assert issubclass(OverPositionsError, InputError) and OverPositionsError("x").code is Code.TOO_LONG
    with pytest.raises(InputError) as e:
        check_number("--beam", 0, minimum=1)
    assert e.value.code is Code.OPTION_VALUE
    with pytest.raises(InputError) as e:
        given(None, "--path")
    assert (str(e.value), e.value.code) == ("--path: not given", Code.OPTION_MISSING)
    with pytest.raises(InputError):  # muda's, as it is
        local_comet_checkpoint("/nonexistent/model.ckpt")


def test_library_errors_carry_their_kind(tmp_path):
    """Errors that were E000 ("not yet given a kind") now say which kind they are: what a Python
    caller tests (the message is unchanged)."""
    from contextual_mt.analysis.cxmi_summary import read_summary
    from contextual_mt.backends.hf.templates import load_template
    from contextual_mt.scored_corpus import check_log_base, no_context_error
    from contextual_mt.stage_record import read_partial

    bad_json = tmp_path / "t.json"
    bad_json.write_text("{nope\n")
    a_list = tmp_path / "s.summary.json"
    a_list.write_text("[1]\n")
    (tmp_path / "o.jsonl.partial").mkdir()
    cases = [
        (lambda: load_template(str(tmp_path / "none.json")), Code.NOT_FOUND),
        (lambda: load_template(str(bad_json)), Code.FORMAT),
        (lambda: read_summary(str(a_list)), Code.FORMAT),
        (lambda: check_log_base("10"), Code.OPTION_VALUE),
        (lambda: read_partial(str(tmp_path / "o.jsonl.partial"), "cxmi"), Code.IS_DIRECTORY),
    ]
    for call, code in cases:
        with pytest.raises(InputError) as e:
            call()
        assert e.value.code is code, (str(e.value), e.value.code)
    assert no_context_error("m.pt", None).code is Code.MODEL


def test_fairseq_commands_own_errors_are_given_their_kind():
    """Under fairseq-train/-generate, fairseq's own errors (a missing file, a sample longer than
    the model's positions) are printed by the same hook, with their code."""
    from contextual_mt.errors import _kind_of_fairseq_error

    assert _kind_of_fairseq_error(FileNotFoundError(2, "No such file", "x.pt")) is Code.NOT_FOUND
    assert _kind_of_fairseq_error(IsADirectoryError(21, "Is a directory", "d")) is Code.IS_DIRECTORY
    assert _kind_of_fairseq_error(Exception("Size of sample #3 is invalid")) is Code.TOO_LONG
    assert _kind_of_fairseq_error(PermissionError(13, "Permission denied", "x.pt")) is Code.INPUT
