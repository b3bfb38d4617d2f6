"""The registered test-set formats, one module each (importing this package registers them)."""

from contextual_mt.contrastive.formats import bawden, contrapro, scat, voita  # noqa: F401
from contextual_mt.contrastive.sets import FORMATS, SetFormat
from contextual_mt.errors import Code, InputError


def get_format(name: str) -> SetFormat:
    """The format registered as ``name``; an unknown one is one error listing the known."""
    if name not in FORMATS:
        raise InputError(
            f"--format {name!r}: unknown test-set format (known: {', '.join(sorted(FORMATS))})", code=Code.OPTION_VALUE
        )
    return FORMATS[name]
