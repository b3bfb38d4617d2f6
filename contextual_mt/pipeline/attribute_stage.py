"""``make attribute``: context attribution (``contextual-mt attribute``) of the test references
with the pair's context model: ``results/xx/attribution.jsonl`` and its summary, kept while they
were made from the same inputs and options (the summary's fingerprint), resumed after an
interruption. ``ATTRIBUTE_ARGS`` (``--attribute-args``) takes attribute's method options."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, fields, make_dataclass
from typing import Any, Dict, Optional, Type

from commandkit.options import option
from contextual_mt.inference.model_args import PARTIAL_HELP, overwrite_option, progress_option
from contextual_mt.pipeline.layout import EvalPaths, attribution_output, eval_paths
from contextual_mt.pipeline.make_names import parse_words, split_words
from contextual_mt.pipeline.pcxmi import check_inputs, pair_model
from contextual_mt.pipeline.stage_options import demo_lang_option, root_option

logger = logging.getLogger(__name__)


def _method_options() -> Type[Any]:
    """``AttributeOptions``' method fields alone (declared there): what ATTRIBUTE_ARGS holds."""
    from contextual_mt.attribution.attribute import AttributeOptions

    def method_field(name: str) -> Any:
        f = next(f for f in fields(AttributeOptions) if f.name == name)
        return (name, f.type, field(default=f.default, default_factory=f.default_factory, metadata=f.metadata))

    return make_dataclass(
        "AttributionMethodOptions",
        [method_field(name) for name in AttributeOptions.METHOD_FIELDS],
        namespace={"__module__": __name__},
    )


@dataclass
class AttributeStageOptions:
    lang: Optional[str] = demo_lang_option()  # None: the demo pair
    root: str = root_option()
    # `contextual-mt attribute`'s method options as the user typed them (ATTRIBUTE_ARGS), read into
    # ``method`` (AttributeOptions' method fields) when built
    attribute_args: Optional[str] = option(
        help="`contextual-mt attribute` method options, as one string (e.g. "
        '"--method input_x_gradient --cti-top-k 2"; make: ATTRIBUTE_ARGS)'
    )
    overwrite: bool = overwrite_option(PARTIAL_HELP)  # discard an interrupted run's records made from other settings
    # make's DTYPE: attribution runs fairseq checkpoints in float32, half is refused; None: auto
    dtype: str = option(
        help="float32 (and auto, which is float32 here): the gradients of fairseq "
        "checkpoints are computed in float32; half precision is refused (make: DTYPE)"
    )
    progress: bool = progress_option()
    paths: EvalPaths = field(init=False)
    method: Dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.paths = eval_paths(self.lang, self.root)
        self.dtype = "auto" if self.dtype is None else self.dtype
        words = split_words(self.attribute_args, "--attribute-args")
        parsed = parse_words(_method_options(), words, "--attribute-args", "attribute")
        self.method = {f.name: getattr(parsed, f.name) for f in fields(parsed)}
        self.attribute = attribute_options(self)  # checked now, before any model (or the demo) runs


def attribute_options(stage: AttributeStageOptions):
    """``contextual-mt attribute``'s options for the pair (checked): the pair's model as pcxmi
    runs it (``pair_model``)."""
    from contextual_mt.attribution.attribute import AttributeOptions

    p = stage.paths
    return AttributeOptions(
        pair_model(p, stage.dtype),
        p.test("en"),
        p.test("docids"),
        attribution_output(p.results),
        reference=p.test(p.target),
        resume=not stage.overwrite,
        progress=stage.progress,
        **stage.method,
    )


def run_attribute_stage(stage: AttributeStageOptions) -> Dict:
    """``contextual-mt attribute`` of the pair, unless its outputs were made from these inputs and
    options; returns its summary."""
    from contextual_mt.attribution.attribute import current_attribution, run_attribute, summary_line

    options = stage.attribute
    check_inputs(stage.paths, "attribute")
    current = current_attribution(options)
    if current is not None:
        print(f"{options.output}: up to date (made from these inputs and options)")
        return current
    summary = run_attribute(options)
    print(summary_line(summary, options.output))
    return summary
