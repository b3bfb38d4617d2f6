"""Errors in the words the user typed: a pipeline stage run by make names the Make variable that
gave an option (``SHARD=3/2``), run by hand the option itself (``--shard 3/2``).

The Makefile runs its stages with ``CONTEXTUAL_MT_MAKE=1`` on their command line (``STAGE``);
``MAKE_VARIABLES`` is the mapping from option to variable that the stage table declares
(``stages.py``), from which the Makefile's stage targets are written too (``make_rules.py``).
Messages are built with the name (``given``, ``option_name``; below the pipeline,
``commandkit.errors.shown`` while ``named_as_typed`` holds), never rewritten after.
"""

from __future__ import annotations

import os
import shlex
from contextlib import contextmanager
from typing import Any, Iterator, List, Optional, Type

from contextual_mt.errors import Code, InputError
from contextual_mt.pipeline.stages import make_variables

MAKE_ENV = "CONTEXTUAL_MT_MAKE"
MAKE_VARIABLES = make_variables()  # option -> Make variable, from the stage table
# the options holding another command's options as one string (make: MUDA_ARGS=..., ATTRIBUTE_ARGS=...)
WORDS_VARIABLES = make_variables(words=True)


def under_make() -> bool:
    return os.environ.get(MAKE_ENV) == "1"


def option_name(flag: str) -> str:
    """``--shard`` by hand, ``SHARD`` under make."""
    return MAKE_VARIABLES[flag] if under_make() and flag in MAKE_VARIABLES else flag


def given(flag: str, value: object = None) -> str:
    """How the user gave ``flag``: ``--shard 3/2`` by hand, ``SHARD=3/2`` under make (no value:
    ``--shard`` / ``SHARD=``)."""
    name = option_name(flag)
    if name == flag:
        return flag if value is None else f"{flag} {value}"
    return f"{name}=" if value is None else f"{name}={value}"


def make_usage_error(flag: str, message: str) -> str:
    """argparse's error about the option ``flag`` (``invalid int value: 'x'``) in the words of make:
    named by the variable that gave it (``SPM_VOCAB: invalid int value: 'x'``)."""
    return f"{option_name(flag)}: " + message.replace("expected one argument", "needs a value (it is empty)")


@contextmanager
def named_as_typed() -> Iterator[None]:
    """While a stage runs under make, every message built with ``commandkit.errors.shown`` (the
    checks of the options' numbers and precision, in whatever library checks them) names the
    Make variable the stage table declares for the option."""
    from commandkit.errors import options_named

    with options_named(MAKE_VARIABLES if under_make() else {}):
        yield


def _words_name(flag: str) -> str:
    return WORDS_VARIABLES.get(flag, flag) if under_make() else flag


def split_words(value: Optional[str], flag: str) -> List[str]:
    """The words of ``flag``'s value, another command's options in one string (``--muda-args``,
    make: MUDA_ARGS), split as a shell splits them; an unbalanced quote is one line naming what
    the user typed."""
    try:
        return shlex.split(value or "")
    except ValueError as e:
        raise InputError(f"{_words_name(flag)}: {e} ({value})", code=Code.OPTION_VALUE) from None


class _Refused(Exception):
    pass


def parse_words(cls: Type[Any], words: List[str], flag: str, command: str, **given: Any) -> Any:
    """``command``'s options object (``cls``) from the ``words`` of ``flag`` and the values the stage
    sets itself (``given``): the one place those strings are parsed. A bad option is one line naming
    ``flag`` (make: its variable), not ``command``'s usage text, which names neither."""
    from commandkit.options import parse_options

    def refuse(message: str):
        raise _Refused(message)

    try:
        return parse_options(cls, words, prog=command, error=refuse, **given)
    except _Refused as e:
        raise InputError(f"{_words_name(flag)}: {command} refuses it: {e}", code=Code.OPTION_VALUE) from None


def set_by_stage(words: List[str], flag: str, owned: tuple) -> None:
    """Refuse, in one line, options in ``flag``'s words that the stage sets itself (``owned``)."""
    given = [w.split("=")[0] for w in words if w.split("=")[0] in owned]
    if given:
        raise InputError(
            f"{_words_name(flag)}: {', '.join(given)} is set by the stage (the pair's files and "
            "language); give only other options",
            code=Code.OPTIONS_CONFLICT,
        )
