"""``contextual-mt translate``: document translation of files, by any model (``ModelSpec``),
with the model's own previous translations (or the references) as target context. The
translators are the backends' (``backends/fairseq``: fairseq and CADec checkpoints;
``backends/hf``), opened through the registry and decoded by the one driver of ``inference.waves``.
``--unit document`` (a document, or a chunk of it, in one generation) is ``inference.document_unit``'s."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from commandkit.documents import check_line_count, read_docids
from commandkit.outputs import atomic_write_lines, outputs
from commandkit.text import read_lines
from contextual_mt.errors import ContextualMTError
from contextual_mt.inference.decoding import UNITS, DecodingOptions
from contextual_mt.inference.document_unit import check_budget, check_document_unit, translate_documents
from contextual_mt.inference.interface import ModelSpec
from contextual_mt.inference.model_health import warn_if_degenerate
from contextual_mt.inference.registry import family
from contextual_mt.stage_record import remove_partial

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
    # "document": each document (or chunk of whole sentences) in one generation (inference.document_unit)
    unit: str = UNITS[0]
    max_source_tokens: Optional[int] = None  # --unit document: the chunks' budget (default: what fits)
    resume: bool = True  # --unit document: continue from OUTPUT.partial (False: --overwrite, discard it)

    def __post_init__(self) -> None:
        check_document_unit(self.unit, self.max_source_tokens, self.model, self.decoding, self.resume)


def translate_files(options: TranslateOptions) -> List[str]:
    """File-level entry point of ``contextual-mt translate``; writes the output atomically
    (checked writable before anything is computed; nothing written on failure) and returns the
    translations, one per line. ``--unit document`` is ``translate_document_files``'s."""
    if options.unit != "sentence":
        raise ValueError("translate_files translates sentence by sentence; use translate_document_files")
    with outputs(options.output):
        return _translate_files(options)


def translate_document_files(options: TranslateOptions) -> int:
    """``--unit document``: the JSONL of documents (``inference.document_output``), written
    atomically at the end; OUTPUT.partial, what an interruption leaves, goes once it is in place."""
    check_budget(options)  # an option, before any file is read or the model loaded
    with outputs(options.output):
        sources, ids, gold = _read_inputs(options)
        n = translate_documents(options, sources, ids, gold)
    remove_partial(options.output)
    return n


def _read_inputs(o: TranslateOptions) -> Tuple[List[str], List[str], Optional[List[str]]]:
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
        kept = "are kept as empty output lines" if o.unit == "sentence" else "are left out of the chunks"
        logger.warning("%s: %d empty lines (first: line %d) %s", o.source, len(empty), empty[0], kept)
    return sources, ids, gold


def _translate_files(o: TranslateOptions) -> List[str]:
    sources, ids, gold = _read_inputs(o)
    translator = family(o.model).open_translator(o.model, o.decoding)
    hyps = translator.translate(sources, ids, gold, progress=o.progress, source_name=o.source)
    atomic_write_lines(o.output, hyps)
    warn_if_degenerate(o.output, hyps, sources)
    return hyps
