"""What several ``contextual-mt`` commands share: ``command``, which adds a subcommand generated
from its options dataclass and runs it on the options object, and the model and run options
(declared in ``inference.model_args``, importable from here too)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Callable, List, Tuple, Type, Union

from commandkit.options import add_options, from_namespace
from contextual_mt.inference.model_args import (  # noqa: F401 (the commands import them from here)
    DTYPES_METAVAR,
    FAIRSEQ_ONLY,
    HF_GROUP,
    HF_ONLY,
    MODEL_GROUP,
    PARTIAL_HELP,
    RESUME_HELP,
    ModelArgs,
    max_tokens_option,
    overwrite_option,
    quiet_option,
)
from contextual_mt.stage_record import partial_path

if TYPE_CHECKING:
    from contextual_mt.analysis.cxmi import CxmiOptions
    from contextual_mt.analysis.cxmi_shards import CxmiMergeOptions
    from contextual_mt.attribution.attribute import AttributeOptions

# where typed_command keeps the options object it made from a parsed command line (made once)
TYPED_OPTIONS = "typed_options"


def command(
    sub: Any, name: str, cls: Type[Any], func: Callable[[argparse.Namespace], int], help: str, **defaults: Any
) -> argparse.ArgumentParser:
    """The subcommand ``name`` of ``sub``: its arguments generated from ``cls``, its ``func`` and
    the ``defaults`` the runner reads (output_args, side_outputs, transaction, ...)."""
    parser_settings = defaults.pop("parser_settings", {})
    p = add_options(sub.add_parser(name, help=help, **parser_settings), cls)
    p.set_defaults(func=func, **defaults)
    return p


def typed_command(
    sub: Any, name: str, cls: Type[Any], run: Callable[[Any], int], help: str, **defaults: Any
) -> argparse.ArgumentParser:
    """``command``, whose ``run`` receives the options object (``cls``, made as the Python API
    makes it: ``contextual_mt.api.options_from``), not the parsed arguments; so does its
    ``side_outputs``, when given. The object is made once: when the outputs are checked (before
    the command runs), where the command has side outputs."""
    side = defaults.pop("side_outputs", None)

    def typed(args: argparse.Namespace) -> Any:
        made = getattr(args, TYPED_OPTIONS, None)
        if made is None:
            from contextual_mt.api import options_from

            made = options_from(cls, args)
            setattr(args, TYPED_OPTIONS, made)
        return made

    def func(args: argparse.Namespace) -> int:
        return run(typed(args))

    if side is not None:
        defaults["side_outputs"] = lambda args: side(typed(args))
    return command(sub, name, cls, func, help, **defaults)


def model_options(args: argparse.Namespace):
    """The model's specification from a parsed command line's model options (``api.model_spec``)."""
    from contextual_mt.api import model_spec

    return model_spec(from_namespace(ModelArgs, args))


def cxmi_side_outputs(options: Union[CxmiOptions, CxmiMergeOptions, AttributeOptions]) -> List[Tuple[str, str]]:
    """What cxmi (and attribute) write or remove beside --output (an input may be none of them)."""
    from contextual_mt.scored_corpus import summary_path

    output = options.output
    return [("--output's summary", summary_path(output)), ("--output's .partial", partial_path(output))]
