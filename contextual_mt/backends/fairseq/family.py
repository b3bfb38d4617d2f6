"""The fairseq backend's ``ModelFamily``: how a checkpoint's ``FairseqModelOptions`` opens its scorer,
translator and attribution backend, and what its numbers depend on (without loading it)."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Dict, Optional

from commandkit.text import check_input_file, file_sha256
from contextual_mt.backends.fairseq.model import FairseqModelOptions
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.batching import FAIRSEQ_ATTRIBUTION_MAX_TOKENS
from contextual_mt.inference.interface import CorpusScorer, PairScorer, Translator
from contextual_mt.inference.precision import HALF
from contextual_mt.inference.registry import register_family

if TYPE_CHECKING:  # loading the scorer imports torch and fairseq: when one is opened
    from contextual_mt.backends.fairseq.scoring import FairseqScoringBackend


def dictionary_hashes(model: FairseqModelOptions) -> Dict[str, str]:
    """Content hashes of the dict.*.txt files where the loader looks first: ``--data``, else
    beside the checkpoint (the training data directory, recorded in the checkpoint, is covered
    by the checkpoint's own hash)."""
    directory = model.data or os.path.dirname(os.path.abspath(model.path))
    if model.data and not os.path.isdir(model.data):
        raise InputError(f"{model.data}: --data directory not found", code=Code.NOT_FOUND)
    return {
        name: file_sha256(os.path.join(directory, name))
        for name in sorted(os.listdir(directory))
        if name.startswith("dict.") and name.endswith(".txt")
    }


@register_family(FairseqModelOptions)
class FairseqFamily:
    """A ``document_translation`` or ``cadec_translation`` checkpoint."""

    translates_documents = False  # trained on sentences with a few context sentences

    def open_corpus_scorer(self, spec: FairseqModelOptions, max_tokens: Optional[int] = None) -> CorpusScorer:
        return self._scorer(spec)

    def open_pair_scorer(self, spec: FairseqModelOptions, max_tokens: Optional[int] = None) -> PairScorer:
        return self._scorer(spec)

    def _scorer(self, spec: FairseqModelOptions) -> FairseqScoringBackend:
        """One class scores both ways (``CADecScoringBackend`` for CADec checkpoints)."""
        from contextual_mt.backends.fairseq.model import DocumentModel
        from contextual_mt.backends.fairseq.scoring import scoring_backend

        return scoring_backend(DocumentModel.load(spec))

    def open_translator(self, spec: FairseqModelOptions, decoding) -> Translator:
        from contextual_mt.backends.fairseq.model import DocumentModel
        from contextual_mt.backends.fairseq.translator import DocumentTranslator

        return DocumentTranslator(DocumentModel.load(spec), options=decoding)

    def open_chunk_translator(self, spec: FairseqModelOptions, decoding):
        from contextual_mt.inference.document_unit import NEEDS_HF

        raise InputError(NEEDS_HF, code=Code.OPTION_MISSING)

    def open_attribution(self, spec: FairseqModelOptions, max_tokens: Optional[int] = None):
        from contextual_mt.backends.fairseq.attribution import BEYOND_TRAINED, FairseqAttributionBackend
        from contextual_mt.backends.fairseq.model import DocumentModel

        return FairseqAttributionBackend(
            DocumentModel.load(self.for_gradients(spec), BEYOND_TRAINED),
            spec.path,
            max_tokens or FAIRSEQ_ATTRIBUTION_MAX_TOKENS,
        )

    def fingerprint(self, spec: FairseqModelOptions) -> Dict:
        """The checkpoint, sentencepiece model and dictionaries by content, the context sizes and
        the dtype the model runs in here (``auto`` decided: float16 scores are not float32's)."""
        if not os.path.isfile(spec.path):
            raise InputError(f"{spec.path}: checkpoint not found", code=Code.NOT_FOUND)
        if spec.spm is not None:
            check_input_file(spec.spm, "sentencepiece model")
        return {
            "checkpoint": file_sha256(spec.path),
            "spm": file_sha256(spec.spm) if spec.spm else None,
            "dictionaries": dictionary_hashes(spec),
            # as requested: None = as trained (the checkpoint's hash covers what was trained)
            "source_context_size": spec.source_context_size,
            "target_context_size": spec.target_context_size,
            "dtype": spec.resolved_dtype(),
        }

    def positions(self, spec: FairseqModelOptions) -> Optional[int]:
        return None  # in the checkpoint, known once it is loaded (and no --unit document here)

    def summary(self, spec: FairseqModelOptions) -> Dict:
        return {"checkpoint": spec.path, "dtype": spec.resolved_dtype()}

    def dtype(self, spec: FairseqModelOptions) -> str:
        return spec.resolved_dtype()

    def for_gradients(self, spec: FairseqModelOptions) -> FairseqModelOptions:
        """Attribution back-propagates through the model: in float32 only (``auto`` is float32
        here); half precision asked for is refused."""
        if spec.dtype in HALF:
            raise InputError(
                f"--dtype {spec.dtype}: attribute computes the gradients of fairseq checkpoints "
                "in float32 only; leave --dtype (and --fp16) out",
                code=Code.OPTIONS_CONFLICT,
            )
        return replace(spec, dtype="float32")

    def reads_raw_text(self, spec: FairseqModelOptions) -> bool:
        return spec.spm is not None  # without --spm the text is already tokenized as the model's
