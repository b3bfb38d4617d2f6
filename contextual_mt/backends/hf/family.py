"""The Hugging Face backend's ``ModelFamily``: how ``HFModelOptions`` opens its scorer,
translator and attribution backend, and what its numbers depend on (without loading it)."""

from __future__ import annotations

import os
from typing import Dict, Optional

from commandkit.text import file_sha256
from contextual_mt.backends.hf.options import HFModelOptions
from contextual_mt.inference.interface import CorpusScorer, PairScorer, Translator
from contextual_mt.inference.registry import register_family


@register_family(HFModelOptions)
class HFFamily:
    """A ``transformers`` seq2seq MT model or decoder-only LM."""

    translates_documents = True

    def open_corpus_scorer(self, spec: HFModelOptions, max_tokens: Optional[int] = None) -> CorpusScorer:
        from contextual_mt.backends.hf.scoring import HFScoringBackend

        return HFScoringBackend.open(spec, max_tokens=max_tokens)

    def open_pair_scorer(self, spec: HFModelOptions, max_tokens: Optional[int] = None) -> PairScorer:
        from contextual_mt.backends.hf.scoring import HFScoringBackend  # one class scores both ways

        return HFScoringBackend.open(spec, max_tokens=max_tokens)

    def open_translator(self, spec: HFModelOptions, decoding) -> Translator:
        from contextual_mt.backends.hf.model import HFModel
        from contextual_mt.backends.hf.translator import HFDocumentTranslator

        return HFDocumentTranslator(HFModel.load(spec), decoding)

    def open_chunk_translator(self, spec: HFModelOptions, decoding):
        from contextual_mt.backends.hf.document_translator import HFChunkTranslator
        from contextual_mt.backends.hf.model import HFModel

        return HFChunkTranslator(HFModel.load(spec), decoding)

    def open_attribution(self, spec: HFModelOptions, max_tokens: Optional[int] = None):
        from contextual_mt.backends.hf.attribution import HFAttributionBackend

        return HFAttributionBackend.open(spec, max_tokens=max_tokens)

    def fingerprint(self, spec: HFModelOptions) -> Dict:
        """Every file of the model folder by content, and the settings (languages, separator,
        template, context sizes, dtype)."""
        from contextual_mt.backends.hf.model import model_files, resolve_model_folder

        folder = resolve_model_folder(spec.path)
        return {
            "hf_files": {os.path.relpath(p, folder): file_sha256(p) for p in model_files(folder)},
            **{k: v for k, v in spec.settings().items() if k != "hf_model"},
        }

    def positions(self, spec: HFModelOptions) -> Optional[int]:
        """From the model's config.json alone (no weights loaded)."""
        from contextual_mt.backends.hf.model import config_positions, read_config, resolve_model_folder

        return config_positions(read_config(resolve_model_folder(spec.path)))

    def summary(self, spec: HFModelOptions) -> Dict:
        return {"hf_model": spec.path, "hf_settings": spec.settings()}

    def dtype(self, spec: HFModelOptions) -> str:
        return spec.dtype

    def for_gradients(self, spec: HFModelOptions) -> HFModelOptions:
        return spec  # the Hugging Face attribution backend takes its dtype as given

    def reads_raw_text(self, spec: HFModelOptions) -> bool:
        return True  # every tokenizer reads raw text
