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
