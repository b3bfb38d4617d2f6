"""The two kinds of model behind CXMI, contrastive scoring and translation: a fairseq
``document_translation`` checkpoint (``ModelOptions``) or a Hugging Face model
(``HFModelOptions``). Runners take either and ask here for the backend, the fingerprint of what
the numbers depend on, and how to name the model in summaries."""
from __future__ import annotations

import os
from typing import Dict, Optional, Union

from contextual_mt.errors import ContextualMTError
from contextual_mt.hf.options import HFModelOptions
from contextual_mt.inference.checkpoint import ModelOptions
from muda.io import check_input_file, file_sha256

ModelSpec = Union[ModelOptions, HFModelOptions]


def is_hf(spec: ModelSpec) -> bool:
    return isinstance(spec, HFModelOptions)


def model_name(spec: ModelSpec) -> str:
    return spec.path


def open_backend(spec: ModelSpec, max_tokens: Optional[int] = None):
    """The ``ScoringBackend`` of a model (loaded once)."""
    if is_hf(spec):
        from contextual_mt.hf.backend import HFScoringBackend

        return HFScoringBackend.open(spec, max_tokens=max_tokens)
    from contextual_mt.inference.backend import FairseqScoringBackend
    from contextual_mt.inference.checkpoint import DocumentModel

    return FairseqScoringBackend(DocumentModel.load(spec))


def dictionary_hashes(model: ModelOptions) -> Dict[str, str]:
    """Content hashes of the dict.*.txt files where the loader looks first: ``--data``, else
    beside the checkpoint (the training data directory, recorded in the checkpoint, is covered
    by the checkpoint's own hash)."""
    directory = model.data or os.path.dirname(os.path.abspath(model.path))
    if model.data and not os.path.isdir(model.data):
        raise ContextualMTError(f"{model.data}: --data directory not found")
    return {name: file_sha256(os.path.join(directory, name)) for name in sorted(os.listdir(directory))
            if name.startswith("dict.") and name.endswith(".txt")}


def model_fingerprint(spec: ModelSpec) -> Dict:
    """What scores depend on in the model, by content, without loading it: the checkpoint,
    sentencepiece model and dictionaries, or every file of the HF model folder and the settings
    (languages, separator, template, context sizes, dtype)."""
    if is_hf(spec):
        from contextual_mt.hf.model import model_files, resolve_model_folder

        folder = resolve_model_folder(spec.path)
        return {"hf_files": {os.path.relpath(p, folder): file_sha256(p) for p in model_files(folder)},
                **{k: v for k, v in spec.settings().items() if k != "hf_model"}}
    if not os.path.isfile(spec.path):
        raise ContextualMTError(f"{spec.path}: checkpoint not found")
    if spec.spm is not None:
        check_input_file(spec.spm, "sentencepiece model")
    return {"checkpoint": file_sha256(spec.path), "spm": file_sha256(spec.spm) if spec.spm else None,
            "dictionaries": dictionary_hashes(spec),
            # as requested: None = as trained (the checkpoint's hash covers what was trained)
            "source_context_size": spec.source_context_size, "target_context_size": spec.target_context_size}


def model_summary(spec: ModelSpec) -> Dict:
    """How a summary names the model."""
    if is_hf(spec):
        return {"hf_model": spec.path, "hf_settings": spec.settings()}
    return {"checkpoint": spec.path}
