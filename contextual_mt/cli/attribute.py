"""``contextual-mt attribute``: its options are ``AttributeOptions`` (``attribution.attribute``),
its run ``contextual_mt.api.attribute``; and its method options alone (``make attribute``'s
ATTRIBUTE_ARGS), the same fields of ``AttributeOptions``."""

from __future__ import annotations

from dataclasses import field, fields, make_dataclass
from typing import Any, Dict, Type

from contextual_mt.attribution.attribute import AttributeOptions
from contextual_mt.cli.common import cxmi_side_outputs, typed_command


def _method_field(name: str) -> Any:
    f = next(f for f in fields(AttributeOptions) if f.name == name)
    return (name, f.type, field(default=f.default, default_factory=f.default_factory, metadata=f.metadata))


def _options(self) -> Dict[str, Any]:
    """The AttributeOptions fields these select."""
    return {name: getattr(self, name) for name in AttributeOptions.METHOD_FIELDS}


# `make attribute`'s ATTRIBUTE_ARGS: AttributeOptions' method fields, declared there
AttributionMethodArgs: Type[Any] = make_dataclass(
    "AttributionMethodArgs",
    [_method_field(name) for name in AttributeOptions.METHOD_FIELDS],
    namespace={"options": _options, "__module__": __name__},
)


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
