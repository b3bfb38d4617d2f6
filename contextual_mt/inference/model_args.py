"""The model a command runs, as its user gives it: a fairseq checkpoint (``--path``) or a Hugging
Face model (``--hf-model``), with their options. Every model-running command's options class
declares its model field with these (``group(ModelArgs, last=True, given=True)``); the caller
(``contextual_mt.api.model_spec``) makes the backend's specification of them. Also here: the
run options every such command shares (``--max-tokens``, ``--overwrite``, ``--quiet``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from commandkit.options import option
from contextual_mt.inference.batching import MAX_TOKENS_HELP

RESUME_HELP = "discard OUTPUT.partial (an interrupted run's records) instead of resuming from it"
PARTIAL_HELP = "discard the records of an interrupted run made from other inputs or settings (OUTPUT.partial)"
DTYPES_METAVAR = "{auto,float32,bfloat16,float16}"  # not argparse choices: a bad value is one line (exit 1)

MODEL_GROUP = "the model: a fairseq checkpoint (or --hf-model, below)"
HF_GROUP = "Hugging Face models (instead of --path)"


def max_tokens_option() -> Any:
    """``--max-tokens``: the same option wherever batches are cut (``inference.batching``)."""
    return option(help=MAX_TOKENS_HELP)


def quiet_option(help: Optional[str] = None) -> Any:
    return option(action="store_true", default=False, help=help)


def overwrite_option(help: str, *aliases: str) -> Any:
    return option("--overwrite", *aliases, action="store_true", default=False, help=help)


def progress_option(help: Optional[str] = None, after: Optional[str] = None) -> Any:
    """The field ``progress`` (a progress bar on stderr), shown as ``--quiet`` (``after``: listed
    right after that field's option)."""
    return option("--quiet", inverse=True, help=help, after=after)


def resume_option(help: str = RESUME_HELP, *aliases: str) -> Any:
    """The field ``resume`` (continue from OUTPUT.partial), shown as ``--overwrite``."""
    return option("--overwrite", *aliases, inverse=True, help=help)


@dataclass
class ModelArgs:
    """The model options of translate, cxmi, attribute, contrastive and align: one of ``path`` (a
    fairseq checkpoint) and ``hf_model`` (a Hugging Face model), with the options of its kind."""

    path: Optional[str] = option(group=MODEL_GROUP, help="document_translation checkpoint")
    spm: Optional[str] = option(
        group=MODEL_GROUP, help="sentencepiece model (default: the text is already tokenized as the model's)"
    )
    data: Optional[str] = option(
        group=MODEL_GROUP,
        help="directory with dict.*.txt (default: the checkpoint's directory, then the training data directory)",
    )
    source_context_size: Optional[int] = option(
        group=MODEL_GROUP, help="default: as trained (--hf-model: 1); 0: no source context"
    )
    target_context_size: Optional[int] = option(
        group=MODEL_GROUP, help="default: as trained (--hf-model: 1); 0: no target context"
    )
    cpu: bool = option(action="store_true", default=False, help="do not use a GPU even if one is present")
    threads: Optional[int] = option(
        help="CPU threads torch computes with (default: torch's, one per core; on a machine shared with "
        "other jobs, fewer threads are often faster)",
    )
    dtype: Optional[str] = option(
        empty_ok=True,
        metavar=DTYPES_METAVAR,
        group="precision",
        help="the model's weights and activations (log-probabilities are float32 in every "
        "case); fairseq checkpoints: default auto, float32 on every device (half precision was "
        "slower on a GPU too: docs/explanations/precision.md); --hf-model: default float32",
    )
    fp16: bool = option(
        action="store_true", default=False, group="precision", help="--dtype float16 (fairseq's --fp16 at generation)"
    )
    hf_model: Optional[str] = option(
        metavar="FOLDER_OR_NAME",
        group=HF_GROUP,
        help="a seq2seq MT model (Marian, mBART-50, NLLB, M2M100) or a decoder-only LM: "
        "a local folder or a name in the local Hugging Face cache",
    )
    hf_separator: Optional[str] = option(
        empty_ok=True,
        group=HF_GROUP,
        help="seq2seq: joins the context sentences and the current one (default: a space)",
    )
    src_lang: Optional[str] = option(
        group=HF_GROUP,
        help="language code of the tokenizer (mBART-50: en_XX, NLLB: "
        "eng_Latn, M2M100: en), or a language name for prompt templates",
    )
    tgt_lang: Optional[str] = option(
        group=HF_GROUP, help="as --src-lang; also the >>xx<< token of multi-target Marian models"
    )
    prompt_template: Optional[str] = option(
        group=HF_GROUP,
        help="decoder-only: a JSON template file, 'plain' or "
        "'chat' (default: the tokenizer's chat template if it has one, else "
        "'plain')",
    )
    device_map: Optional[str] = option(
        choices=("auto",), group=HF_GROUP, help="spread a model too large for one GPU over the GPUs"
    )

    def given(self) -> bool:
        """Whether a model was named (``--path`` or ``--hf-model``)."""
        return bool(self.path or self.hf_model)


HF_ONLY = ("hf_separator", "src_lang", "tgt_lang", "prompt_template", "device_map")
FAIRSEQ_ONLY = ("spm", "data")
