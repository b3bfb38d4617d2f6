"""MuDA from Python: ``muda tag`` and ``muda eval`` as functions taking the command's options as
keywords (the names of its command-line options, ``_`` for ``-``: ``tgt_lang``, ``dump_tags``) or
as its options object (``TagOptions``, ``EvalOptions``: the declarations the command line is
generated from, the library's own), writing the files the command writes and returning its summary or result.

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
from muda.evaluation.evaluate import EvalOptions
from muda.tagger import TagOptions


def tag(options: Optional[TagOptions] = None, **keywords: Any) -> Dict:
    """``muda tag``: tag every target token with the discourse phenomena it involves; writes
    ``dump_tags`` and returns the summary (``summary["tags"]``: tokens per phenomenon).

    Keywords: the options of ``TagOptions``, as ``muda tag --help`` lists them."""
    from commandkit.command_outputs import command_outputs
    from muda.commands import outputs_of, tagged

    tagging = from_keywords(TagOptions, options, keywords)
    with command_outputs(outputs_of(tagging)):
        return tagged(tagging)


def evaluate(options: Optional[EvalOptions] = None, **keywords: Any) -> Dict:
    """``muda eval``: per-tag word precision, recall and f-measure of the systems ``hyps``
    against the tagged reference, with BLEU and paired bootstrap; returns the result (what
    ``output`` gets as JSON), its table written to ``table`` when given.

    Keywords: the options of ``EvalOptions``, as ``muda eval --help`` lists them."""
    from commandkit.command_outputs import command_outputs
    from muda.commands import evaluated, outputs_of

    evaluation = from_keywords(EvalOptions, options, keywords)
    with command_outputs(outputs_of(evaluation)):
        return evaluated(evaluation)


__all__ = ["evaluate", "tag"]
