"""``contextual-mt translate``: document translation of files, by any model (``ModelSpec``),
with the model's own previous translations (or the references) as target context. The
translators are the backends' (``backends/fairseq``: fairseq and CADec checkpoints;
``backends/hf``), opened through the registry and decoded by the one driver of ``inference.waves``."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import List, Optional

from commandkit.documents import check_line_count, read_docids
from commandkit.outputs import atomic_write_lines, outputs
from commandkit.text import read_lines
from contextual_mt.errors import ContextualMTError
from contextual_mt.inference.decoding import DecodingOptions
from contextual_mt.inference.model_health import warn_if_degenerate
from contextual_mt.inference.registry import ModelSpec, family

logger = logging.getLogger(__name__)


@dataclass
class TranslateOptions:
    """``contextual-mt translate``: which model, which documents, where to, and how to decode."""

    model: ModelSpec  # FairseqModelOptions (a checkpoint) or HFModelOptions (a Hugging Face model)
    source: str
    docids: str
    output: str
    gold_target_context: Optional[str] = None  # references as target context instead of predictions
    decoding: DecodingOptions = field(default_factory=DecodingOptions)
    progress: bool = True


def translate_files(options: TranslateOptions) -> List[str]:
    """File-level entry point of ``contextual-mt translate``; writes the output atomically
    (checked writable before anything is computed; nothing written on failure)."""
    with outputs(options.output):
        return _translate_files(options)


def _translate_files(options: TranslateOptions) -> List[str]:
    o = options
    sources = read_lines(o.source)
    ids = read_docids(o.docids)
    check_line_count(ids, o.docids, len(sources), o.source)
    gold = None
    if o.gold_target_context is not None:
        gold = read_lines(o.gold_target_context)
        if len(gold) != len(sources):
            raise ContextualMTError(f"{o.gold_target_context}: has {len(gold)} lines but {o.source} has {len(sources)}")
    empty = [n for n, line in enumerate(sources, start=1) if not line.strip()]
    if empty:
        logger.warning(
            "%s: %d empty lines (first: line %d) are kept as empty output lines", o.source, len(empty), empty[0]
        )
    translator = family(o.model).open_translator(o.model, o.decoding)
    hyps = translator.translate(sources, ids, gold, progress=o.progress, source_name=o.source)
    atomic_write_lines(o.output, hyps)
    warn_if_degenerate(o.output, hyps, sources)
    return hyps
