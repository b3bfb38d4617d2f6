"""``make attribute``: context attribution (``contextual-mt attribute``) of the test references
with the pair's context model: ``results/xx/attribution.jsonl`` and its summary, kept while they
were made from the same inputs and options (the summary's fingerprint), resumed after an
interruption. ``ATTRIBUTE_ARGS`` (``--attribute-args``) takes attribute's method options."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Dict

from contextual_mt.pipeline.layout import attribution_output, eval_paths
from contextual_mt.pipeline.pcxmi import check_inputs

logger = logging.getLogger(__name__)


@dataclass
class AttributeStageOptions:
    lang: str  # None: the demo pair
    root: str = "."
    method: Dict = field(default_factory=dict)  # AttributeOptions' method fields (cli.attribution_method_options)
    overwrite: bool = False  # discard an interrupted run's records made from other settings
    progress: bool = True
    dtype: str = "auto"  # make's DTYPE: attribution runs fairseq checkpoints in float32, half is refused


def attribute_options(o: AttributeStageOptions):
    """``contextual-mt attribute``'s options for the pair (checked)."""
    from contextual_mt.attribution.attribute import AttributeOptions
    from contextual_mt.backends.fairseq.model import FairseqModelOptions

    p = eval_paths(o.lang, o.root)
    return AttributeOptions(
        FairseqModelOptions(p.checkpoint, spm=p.spm, dtype=o.dtype),
        p.test("en"),
        p.test("docids"),
        attribution_output(p.results),
        reference=p.test(p.target),
        resume=not o.overwrite,
        progress=o.progress,
        **o.method,
    )


def run_attribute_stage(o: AttributeStageOptions) -> Dict:
    from contextual_mt.analysis.cxmi_summary import summary_path
    from contextual_mt.attribution.attribute import attribute_fingerprint, run_attribute, summary_line
    from contextual_mt.stage_record import SummaryRecord

    p = eval_paths(o.lang, o.root)
    options = attribute_options(o)
    check_inputs(p, "attribute")
    current = SummaryRecord(options.output, summary_path(options.output), "sentences").current(
        attribute_fingerprint(options)
    )
    if current is not None:
        print(f"{options.output}: up to date (made from these inputs and options)")
        return current
    summary = run_attribute(options)
    print(summary_line(summary, options.output))
    return summary
