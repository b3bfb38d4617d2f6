"""The options of the ``muda`` commands, each declared once (default, help, flags) as a dataclass
field; ``muda.cli`` generates its parsers from them (``commandkit.options``), and library callers
(a pipeline built on muda, ``muda.api``) build them directly. ``muda tag``'s are the tagger's
``TagOptions``, ``muda eval``'s the evaluation's ``EvalOptions``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from commandkit.options import option
from muda.annotators.ellipsis_bert import TrainEllipsisOptions
from muda.annotators.models import (  # noqa: F401 (importable from here too, as before)
    ANNOTATOR_GROUP,
    ANNOTATORS,
    DEFAULT_ANNOTATOR,
    AnnotatorArgs,
    cache_dir_option,
)
from muda.annotators.required_models import DEFAULT_ALIGN_MODEL
from muda.evaluation.evaluate import EvalOptions  # noqa: F401 (muda eval's options: muda.cli finds them here)
from muda.phenomena import phenomenon_names
from muda.tagger import TagOptions  # noqa: F401 (muda tag's options)


@dataclass
class DownloadArgs:
    """``muda download`` (``muda.annotators.download.DownloadOptions``)."""

    tgt_lang: str = option(required=True, help="target language: ISO code or TED variant (pt-br, zh-cn)")
    phenomena: Optional[List[str]] = option(nargs="+", choices=phenomenon_names(), help="default: all")
    stanza_dir: Optional[str] = option(
        help="where to put stanza's models (default: $STANZA_RESOURCES_DIR or "
        "~/stanza_resources); give `muda tag` the same"
    )
    align_model: str = option(
        default=DEFAULT_ALIGN_MODEL, help="the awesome-align model (a Hugging Face name), into the Hugging Face cache"
    )
    no_source: bool = option(
        action="store_true", default=False, help="not the English models (--src-conllu is pre-computed)"
    )
    no_target: bool = option(action="store_true", default=False, help="not the target's (--tgt-conllu is pre-computed)")
    no_aligner: bool = option(
        action="store_true", default=False, help="not the aligner (--alignments are pre-computed)"
    )

    OUTPUT_ARGS = ()


@dataclass
class TrainEllipsisArgs:
    """``muda train-ellipsis`` (its training settings: ``muda.annotators.ellipsis_bert.TrainEllipsisOptions``)."""

    ptb: List[str] = option(positional=True, nargs="+", default=[], help="PTB-format tree files (.mrg)")
    base_model: str = option(default="bert-base-cased", help="a local path or cached model name")
    output: str = option(required=True, help="directory for the trained model (--ellipsis-model)")
    epochs: int = option(default=TrainEllipsisOptions.epochs)
    batch_size: int = option(default=TrainEllipsisOptions.batch_size)
    lr: float = option(default=TrainEllipsisOptions.lr)
    positive_weight: float = option(
        default=TrainEllipsisOptions.positive_weight, help="loss weight of ellipsis sentences"
    )
    cpu: bool = option(action="store_true", default=False)

    OUTPUT_DIR_ARGS = ("output",)
