"""``contextual-mt attribute``: its options are ``AttributeOptions`` (``attribution.attribute``),
its run ``contextual_mt.api.attribute`` (its method options alone, ``make attribute``'s
ATTRIBUTE_ARGS, are read by ``pipeline.attribute_stage``)."""

from __future__ import annotations

from contextual_mt.attribution.attribute import AttributeOptions
from contextual_mt.cli.common import cxmi_side_outputs, typed_command


def attribute(options: AttributeOptions) -> int:
    from contextual_mt import api
    from contextual_mt.attribution.attribute import summary_line

    print(summary_line(api.attribute(options).summary, options.output))
    return 0


def add(sub) -> None:
    typed_command(
        sub,
        "attribute",
        AttributeOptions,
        attribute,
        "context attribution: which target tokens depend on context "
        "(CTI: P-CXMI / KL) and on which context tokens (CCI: gradients or attention), PECoRe batched",
        output_args=("output",),
        side_outputs=cxmi_side_outputs,
    )
