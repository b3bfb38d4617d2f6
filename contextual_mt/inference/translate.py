"""``contextual-mt translate``: document translation of files, by any model (``ModelSpec``),
with the model's own previous translations (or the references) as target context. The
translators are the backends' (``backends/fairseq``: fairseq and CADec checkpoints;
``backends/hf``), opened through the registry and decoded by the one driver of ``inference.waves``.
``--unit document`` (a document, or a chunk of it, in one generation) is ``inference.document_unit``'s."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from commandkit.documents import check_line_count, read_docids
from commandkit.options import check_required, group, option
from commandkit.outputs import atomic_write_lines, outputs
from commandkit.text import read_lines
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.decoding import UNITS, DecodingOptions
from contextual_mt.inference.document_unit import NEEDS_HF, check_budget, check_document_unit, translate_documents
from contextual_mt.inference.interface import ModelSpec
from contextual_mt.inference.model_args import RESUME_HELP, ModelArgs, progress_option, resume_option
from contextual_mt.inference.model_health import warn_if_degenerate
from contextual_mt.inference.registry import family
from contextual_mt.stage_record import remove_partial

logger = logging.getLogger(__name__)


UNIT_HELP = (
    "sentence: one generation per source line, output line-aligned (default); document: each "
    "document, or chunk of whole sentences within --max-source-tokens, in one generation, the "
    "previous chunk as context (--hf-model only); output JSONL, resumable"
)


@dataclass
class TranslateOptions:
    """``contextual-mt translate``: which model, which documents, where to, and how to decode."""

    # FairseqModelOptions (a checkpoint) or HFModelOptions (a Hugging Face model), made from the
    # model options (contextual_mt.api.model_spec)
    model: ModelSpec = group(ModelArgs, last=True, given=True)
    source: str = option(required=True, help="source text, one sentence per line")
    docids: str = option(required=True, help="document id of each line")
    output: str = option(
        required=True,
        help="translations, one line per source line (--unit document: JSONL, one record per document)",
    )
    gold_target_context: Optional[str] = option(
        metavar="REF", help="use these references as target context instead of the model's translations"
    )
    decoding: DecodingOptions = group(DecodingOptions)
    # "document": each document (or chunk of whole sentences) in one generation (inference.document_unit)
    unit: str = option(default=UNITS[0], metavar="{" + ",".join(UNITS) + "}", help=UNIT_HELP)
    max_source_tokens: Optional[int] = option(
        help="--unit document: source tokens (the model tokenizer's) per chunk of whole sentences "
        "(default: what fits the model's positions with room for the translation, per --max-len-a/b)",
    )
    # --unit document: continue from OUTPUT.partial (False: --overwrite, discard it)
    resume: bool = resume_option("--unit document: " + RESUME_HELP)
    progress: bool = progress_option("no progress bar")

    def __post_init__(self) -> None:
        check_required(self)
        check_document_unit(self.unit, self.max_source_tokens, self.model, self.decoding, self.resume)

    @staticmethod
    def check_before_model(model: ModelArgs, given: Any) -> None:
        """What is refused before the model is looked at (``given``: the other options, as
        attributes): ``--unit document`` needs ``--hf-model``."""
        if getattr(given, "unit", UNITS[0]) == "document" and model.path:
            raise InputError(NEEDS_HF, code=Code.OPTION_MISSING)


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


def _read_inputs(options: TranslateOptions) -> Tuple[List[str], List[str], Optional[List[str]]]:
    sources = read_lines(options.source)
    ids = read_docids(options.docids)
    check_line_count(ids, options.docids, len(sources), options.source)
    gold = None
    if options.gold_target_context is not None:
        gold = read_lines(options.gold_target_context)
        if len(gold) != len(sources):
            raise InputError(
                f"{options.gold_target_context}: has {len(gold)} lines but {options.source} has {len(sources)}",
                code=Code.LINE_COUNT,
            )
    empty = [n for n, line in enumerate(sources, start=1) if not line.strip()]
    if empty:
        kept = "are kept as empty output lines" if options.unit == "sentence" else "are left out of the chunks"
        logger.warning("%s: %d empty lines (first: line %d) %s", options.source, len(empty), empty[0], kept)
    return sources, ids, gold


def _translate_files(options: TranslateOptions) -> List[str]:
    sources, ids, gold = _read_inputs(options)
    translator = family(options.model).open_translator(options.model, options.decoding)
    hyps = translator.translate(sources, ids, gold, progress=options.progress, source_name=options.source)
    atomic_write_lines(options.output, hyps)
    warn_if_degenerate(options.output, hyps, sources)
    return hyps
