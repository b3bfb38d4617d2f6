"""Model specifications: a fairseq ``document_translation`` checkpoint (``ModelOptions``, a
CADec checkpoint included) or a Hugging Face model (``HFModelOptions``). Each kind has its
``ModelFamily`` (``inference.interface``), declared once here; runners ask ``family(spec)``
to open the model's scorer or translator, fingerprint it and name it in summaries, and never
branch on the kind themselves. Nothing here loads a model until asked to open one."""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Dict, Optional, Union

from contextual_mt.errors import ContextualMTError
from contextual_mt.hf.options import HFModelOptions
from contextual_mt.inference.batching import FAIRSEQ_ATTRIBUTION_MAX_TOKENS
from contextual_mt.inference.checkpoint import ModelOptions
from contextual_mt.inference.interface import ModelFamily, ScoringBackend, Translator
from contextual_mt.inference.precision import HALF
from muda.io import check_input_file, file_sha256

ModelSpec = Union[ModelOptions, HFModelOptions]


def dictionary_hashes(model: ModelOptions) -> Dict[str, str]:
    """Content hashes of the dict.*.txt files where the loader looks first: ``--data``, else
    beside the checkpoint (the training data directory, recorded in the checkpoint, is covered
    by the checkpoint's own hash)."""
    directory = model.data or os.path.dirname(os.path.abspath(model.path))
    if model.data and not os.path.isdir(model.data):
        raise ContextualMTError(f"{model.data}: --data directory not found")
    return {name: file_sha256(os.path.join(directory, name)) for name in sorted(os.listdir(directory))
            if name.startswith("dict.") and name.endswith(".txt")}


class FairseqFamily:
    """A ``document_translation`` or ``cadec_translation`` checkpoint."""

    def open_scorer(self, spec: ModelOptions, max_tokens: Optional[int] = None) -> ScoringBackend:
        from contextual_mt.inference.checkpoint import DocumentModel
        from contextual_mt.inference.fairseq_scoring import scoring_backend

        return scoring_backend(DocumentModel.load(spec))

    def open_translator(self, spec: ModelOptions, decoding) -> Translator:
        from contextual_mt.inference.checkpoint import DocumentModel
        from contextual_mt.inference.fairseq_translator import DocumentTranslator

        return DocumentTranslator(DocumentModel.load(spec), options=decoding)

    def open_attribution(self, spec: ModelOptions, max_tokens: Optional[int] = None):
        from contextual_mt.attribution.fairseq_backend import FairseqAttributionBackend
        from contextual_mt.inference.checkpoint import DocumentModel

        return FairseqAttributionBackend(DocumentModel.load(self.for_gradients(spec)), spec.path,
                                         max_tokens or FAIRSEQ_ATTRIBUTION_MAX_TOKENS)

    def fingerprint(self, spec: ModelOptions) -> Dict:
        """The checkpoint, sentencepiece model and dictionaries by content, the context sizes and
        the dtype the model runs in here (``auto`` decided: float16 scores are not float32's)."""
        if not os.path.isfile(spec.path):
            raise ContextualMTError(f"{spec.path}: checkpoint not found")
        if spec.spm is not None:
            check_input_file(spec.spm, "sentencepiece model")
        return {"checkpoint": file_sha256(spec.path), "spm": file_sha256(spec.spm) if spec.spm else None,
                "dictionaries": dictionary_hashes(spec),
                # as requested: None = as trained (the checkpoint's hash covers what was trained)
                "source_context_size": spec.source_context_size, "target_context_size": spec.target_context_size,
                "dtype": spec.resolved_dtype()}

    def summary(self, spec: ModelOptions) -> Dict:
        return {"checkpoint": spec.path, "dtype": spec.resolved_dtype()}

    def dtype(self, spec: ModelOptions) -> str:
        return spec.resolved_dtype()

    def for_gradients(self, spec: ModelOptions) -> ModelOptions:
        """Attribution back-propagates through the model: in float32 only (``auto`` is float32
        here); half precision asked for is refused."""
        if spec.dtype in HALF:
            raise ContextualMTError(f"--dtype {spec.dtype}: attribute computes the gradients of fairseq checkpoints "
                                    "in float32 only; leave --dtype (and --fp16) out")
        return replace(spec, dtype="float32")

    def reads_raw_text(self, spec: ModelOptions) -> bool:
        return spec.spm is not None  # without --spm the text is already tokenized as the model's


class HFFamily:
    """A ``transformers`` seq2seq MT model or decoder-only LM."""

    def open_scorer(self, spec: HFModelOptions, max_tokens: Optional[int] = None) -> ScoringBackend:
        from contextual_mt.hf.scoring import HFScoringBackend

        return HFScoringBackend.open(spec, max_tokens=max_tokens)

    def open_translator(self, spec: HFModelOptions, decoding) -> Translator:
        from contextual_mt.hf.model import HFModel
        from contextual_mt.hf.translator import HFDocumentTranslator

        return HFDocumentTranslator(HFModel.load(spec), decoding)

    def open_attribution(self, spec: HFModelOptions, max_tokens: Optional[int] = None):
        from contextual_mt.attribution.hf_backend import HFAttributionBackend

        return HFAttributionBackend.open(spec, max_tokens=max_tokens)

    def fingerprint(self, spec: HFModelOptions) -> Dict:
        """Every file of the model folder by content, and the settings (languages, separator,
        template, context sizes, dtype)."""
        from contextual_mt.hf.model import model_files, resolve_model_folder

        folder = resolve_model_folder(spec.path)
        return {"hf_files": {os.path.relpath(p, folder): file_sha256(p) for p in model_files(folder)},
                **{k: v for k, v in spec.settings().items() if k != "hf_model"}}

    def summary(self, spec: HFModelOptions) -> Dict:
        return {"hf_model": spec.path, "hf_settings": spec.settings()}

    def dtype(self, spec: HFModelOptions) -> str:
        return spec.dtype

    def for_gradients(self, spec: HFModelOptions) -> HFModelOptions:
        return spec  # the Hugging Face attribution backend takes its dtype as given

    def reads_raw_text(self, spec: HFModelOptions) -> bool:
        return True  # every tokenizer reads raw text


FAMILIES: Dict[type, ModelFamily] = {ModelOptions: FairseqFamily(), HFModelOptions: HFFamily()}


def family(spec: ModelSpec) -> ModelFamily:
    """The family of a model specification: what opens, fingerprints and names it."""
    for kind in type(spec).__mro__:  # a subclass of an option class is of its family
        if kind in FAMILIES:
            return FAMILIES[kind]
    raise TypeError(f"not a model specification: {type(spec).__name__}")


def model_name(spec: ModelSpec) -> str:
    return spec.path


def open_backend(spec: ModelSpec, max_tokens: Optional[int] = None) -> ScoringBackend:
    """The ``ScoringBackend`` of a model (loaded once)."""
    return family(spec).open_scorer(spec, max_tokens)


def open_attribution(spec: ModelSpec, max_tokens: Optional[int] = None):
    """The ``AttributionBackend`` (``attribution.interface``) of a model (loaded once)."""
    return family(spec).open_attribution(spec, max_tokens)


def model_fingerprint(spec: ModelSpec) -> Dict:
    """What scores depend on in the model, by content, without loading it."""
    return family(spec).fingerprint(spec)


def model_summary(spec: ModelSpec) -> Dict:
    """How a summary names the model."""
    return family(spec).summary(spec)


def model_dtype(spec: ModelSpec) -> str:
    """The dtype the model runs in on this machine."""
    return family(spec).dtype(spec)


def gradient_spec(spec: ModelSpec) -> ModelSpec:
    """The specification attribution runs (and fingerprints): fairseq checkpoints in float32."""
    return family(spec).for_gradients(spec)
