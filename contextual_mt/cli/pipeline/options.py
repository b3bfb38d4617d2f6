"""Options several stages share: the pair (``--lang``, ``--root``) and ``--dtype``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from commandkit.options import option
from contextual_mt.cli.common import DTYPES_METAVAR
from contextual_mt.pipeline.layout import DEMO, EvalPaths, eval_paths

ROOT_HELP = "the folder holding data/, checkpoints/ and results/"


@dataclass
class PairArgs:
    """The pair of the stages that default to the demo's (pcxmi, report, attribute, testset, muda-eval)."""

    lang: Optional[str] = option(
        help="target language (source: English); default: the demo pair (fr under demo/, made by make demo)"
    )
    root: str = option(default=".", help=ROOT_HELP)


def ensure_demo_inputs(lang: Optional[str], root: str, needed: Callable[[EvalPaths], str]) -> None:
    """The demo pair's inputs are the offline demo's outputs: it runs first when ``needed`` (of the
    pair's paths) is not there yet (other pairs' stages only check their inputs). Called from the
    command layer, which stands above both the demo and the pipeline."""
    paths = eval_paths(lang, root)
    if paths.pair == DEMO:
        from contextual_mt.demo.pipeline import run_demo_first

        run_demo_first(needed(paths))


def dtype_option() -> Any:
    """--dtype of the stages that run a model (make: DTYPE=); checked by the stage's options (one line)."""
    return option(
        default="auto",
        metavar=DTYPES_METAVAR,
        help="the models' precision (log-probabilities are float32 in every case); default auto: float32 "
        "on every device; the outputs' records name it, and a run in "
        "another dtype does not reuse them",
    )
