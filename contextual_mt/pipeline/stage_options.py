"""Options several stages declare alike: the pair (``--lang``, ``--root``) and ``--dtype``, as
``commandkit`` option fields of the stages' options classes (``contextual-mt pipeline STAGE``'s
parser is generated from those classes; the stage table, ``stages.py``, names each)."""

from __future__ import annotations

from typing import Any

from commandkit.options import option
from contextual_mt.inference.model_args import DTYPES_METAVAR

ROOT_HELP = "the folder holding data/, checkpoints/ and results/"
MUDA_TAG_ARGS_HELP = "more `muda tag` options for tagging the reference, as one string"


def demo_lang_option() -> Any:
    """``--lang`` of the stages that default to the demo pair (pcxmi, report, attribute, testset,
    cues, muda-eval): None is the demo's."""
    return option(help="target language (source: English); default: the demo pair (fr under demo/, made by make demo)")


def root_option(help: str = ROOT_HELP) -> Any:
    return option(default=".", help=help)


def dtype_option() -> Any:
    """--dtype of the stages that run a model (make: DTYPE=); checked by the stage's options (one line)."""
    return option(
        default="auto",
        metavar=DTYPES_METAVAR,
        help="the models' precision (log-probabilities are float32 in every case); default auto: float32 "
        "on every device; the outputs' records name it, and a run in "
        "another dtype does not reuse them",
    )
