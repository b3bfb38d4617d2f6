"""``--hf-model``: which Hugging Face model to load and how it reads context. Validated when
built (no model is loaded, transformers is not imported), so a bad option fails first."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, Optional

from commandkit.errors import check_number
from contextual_mt.backends.hf.templates import PromptTemplate, load_template
from contextual_mt.errors import Code, InputError

DTYPES = ("float32", "bfloat16", "float16")


@dataclass
class HFModelOptions:
    """A seq2seq MT model (Marian, mBART-50, NLLB, M2M100) or a decoder-only LM from
    ``transformers``, given as a local folder or a name in the local Hugging Face cache."""

    path: str
    src_lang: Optional[str] = None  # language code (mBART/NLLB/M2M) or name (prompt templates)
    tgt_lang: Optional[str] = None  # also Marian's ">>xx<<" target token for multi-target models
    separator: str = " "  # seq2seq: joins context sentences and the current one
    prompt_template: Optional[str] = None  # decoder-only: a JSON file or a named template; None: chat or plain
    source_context_size: int = 1  # these models have no trained size: sentences of context to read
    target_context_size: int = 1
    dtype: str = "float32"
    device_map: Optional[str] = None  # "auto": spread a model larger than one GPU over the GPUs
    cpu: bool = False

    def __post_init__(self) -> None:
        check_number("--source-context-size", self.source_context_size, minimum=0, integer=True)
        check_number("--target-context-size", self.target_context_size, minimum=0, integer=True)
        if self.dtype not in DTYPES:
            raise InputError(f"--dtype must be one of {', '.join(DTYPES)} (got {self.dtype!r})", code=Code.OPTION_VALUE)
        if self.device_map not in (None, "auto"):
            raise InputError(f"--device-map must be 'auto' (got {self.device_map!r})", code=Code.OPTION_VALUE)
        if self.device_map and self.cpu:
            raise InputError(
                "--device-map auto places the model on GPUs; it cannot go with --cpu", code=Code.OPTIONS_CONFLICT
            )
        if not self.path:
            raise InputError(
                "--hf-model: give a model folder or a model name in the local Hugging Face cache",
                code=Code.OPTION_MISSING,
            )
        if self.prompt_template is not None:
            self.template()  # a bad template fails here, before the model is loaded

    def template(self) -> Optional[PromptTemplate]:
        """The prompt template asked for (None: the model's chat template, else 'plain')."""
        if self.prompt_template is None:
            return None
        return load_template(self.prompt_template, self.src_lang, self.tgt_lang)

    def settings(self) -> Dict:
        """What the scores depend on besides the model files (for fingerprints and summaries)."""
        template = self.template()
        return {
            "hf_model": self.path,
            "src_lang": self.src_lang,
            "tgt_lang": self.tgt_lang,
            "separator": self.separator,
            "prompt_template": template.describe() if template else None,
            "source_context_size": self.source_context_size,
            "target_context_size": self.target_context_size,
            "dtype": self.dtype,
        }

    @property
    def is_local_folder(self) -> bool:
        return os.path.isdir(self.path)
