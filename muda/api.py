"""MuDA from Python: ``muda tag`` and ``muda eval`` as functions taking the command's options as
keywords (the names of its command-line options, ``_`` for ``-``: ``tgt_lang``, ``dump_tags``) or
as its options object (``TagArgs``, ``EvalArgs``: the declarations the command line is generated
from), writing the files the command writes and returning its summary or result.

    from muda import api

    summary = api.tag(src="test.en", tgt="test.fr", docids="test.docids", tgt_lang="fr",
                      dump_tags="test.tags.json")
    summary["tags"]                      # tagged tokens per phenomenon
    result = api.evaluate(src="test.en", ref="test.fr", docids="test.docids", tgt_lang="fr",
                          hyps=["system.fr"])

A wrong option or input raises ``InputError`` (``commandkit.errors``) with the one line the
command would print; nothing is printed, and no output file is left behind.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from commandkit.options import from_keywords
from muda.commands.options import EvalArgs, TagArgs


def tag(options: Optional[TagArgs] = None, **keywords: Any) -> Dict:
    """``muda tag``: tag every target token with the discourse phenomena it involves; writes
    ``dump_tags`` and returns the summary (``summary["tags"]``: tokens per phenomenon).

    Keywords: the options of ``TagArgs``, as ``muda tag --help`` lists them."""
    from commandkit.command_outputs import command_outputs
    from muda.commands import outputs_of, tagged

    o = from_keywords(TagArgs, options, keywords)
    with command_outputs(outputs_of(o)):
        return tagged(o)


def evaluate(options: Optional[EvalArgs] = None, **keywords: Any) -> Dict:
    """``muda eval``: per-tag word precision, recall and f-measure of the systems ``hyps``
    against the tagged reference, with BLEU and paired bootstrap; returns the result (what
    ``output`` gets as JSON), its table written to ``table`` when given.

    Keywords: the options of ``EvalArgs``, as ``muda eval --help`` lists them."""
    from commandkit.command_outputs import command_outputs
    from muda.commands import evaluated, outputs_of

    o = from_keywords(EvalArgs, options, keywords)
    with command_outputs(outputs_of(o)):
        return evaluated(o)


__all__ = ["evaluate", "tag"]
