"""``contextual-mt attribute``, and its method options (also ``make attribute``'s ATTRIBUTE_ARGS)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Dict, Optional

from commandkit.options import group, option
from contextual_mt.attribution.attribute import METRICS, SCOPES, AttributeOptions
from contextual_mt.attribution.interface import CONTRASTS, METHODS
from contextual_mt.attribution.selection import Rule
from contextual_mt.cli.common import (
    RESUME_HELP,
    ModelArgs,
    command,
    cxmi_side_outputs,
    max_tokens_option,
    model_options,
    overwrite_option,
    quiet_option,
)
from contextual_mt.errors import ContextualMTError
from contextual_mt.inference.decoding import DecodingOptions

CTI = "context-sensitive tokens (CTI)"
CCI = "contextual cues (CCI)"


@dataclass
class AttributionMethodArgs:
    """How attribute selects tokens and attributes them: `contextual-mt attribute`'s options and
    `make attribute`'s ATTRIBUTE_ARGS."""

    cti_metric: str = option(
        choices=METRICS,
        default=AttributeOptions.cti_metric,
        group=CTI,
        help="what selects tokens: KL(p_C || p_A) of the next-token distributions, or P-CXMI (both are written)",
    )
    cti_std: Optional[float] = option(
        group=CTI,
        help="λ: a token is selected when its score exceeds "
        f"mean + λ·std over the run's tokens read with context (default {Rule.std:g})",
    )
    cti_top_k: Optional[int] = option(group=CTI, help="instead: the k highest-scoring tokens of each sentence")
    cti_scope: str = option(
        choices=SCOPES,
        default=AttributeOptions.cti_scope,
        group=CTI,
        help="the tokens whose mean and std set the threshold: the whole run (corpus, default) or "
        "each sentence (sentence: as per-example tools such as Inseq's attribute-context)",
    )
    method: str = option(
        choices=METHODS,
        default=AttributeOptions.method,
        group=CCI,
        help="saliency: |gradient| of the input embedding; input_x_gradient: |embedding x gradient|; "
        "attention: last decoder layer, mean over heads (no backward pass)",
    )
    contrast: str = option(
        choices=CONTRASTS,
        default=AttributeOptions.contrast,
        group=CCI,
        help="what is attributed: foil = log p_C(y) - log p_C(ỹ), ỹ the no-context prediction "
        "(its second choice when it is y); logprob = log p_C(y)",
    )
    cue_std: Optional[float] = option(
        group=CCI,
        help="λ: a context token is a cue when its score "
        "exceeds mean + λ·std over the context tokens of that target token (default "
        f"{Rule.std:g})",
    )
    cue_top_k: Optional[int] = option(group=CCI, help="instead: the k highest-scoring context tokens")
    log_base: str = option(
        choices=["e", "2"],
        default=AttributeOptions.log_base,
        help="units of P-CXMI and KL: e = nats (default), 2 = bits",
    )

    def options(self) -> Dict[str, Any]:
        """The AttributeOptions fields these select."""
        return {
            "cti_metric": self.cti_metric,
            "cti": _rule("cti", self.cti_std, self.cti_top_k),
            "cti_scope": self.cti_scope,
            "method": self.method,
            "contrast": self.contrast,
            "cci": _rule("cue", self.cue_std, self.cue_top_k),
            "log_base": self.log_base,
        }


def _rule(name: str, std, top_k) -> Rule:
    """The selection rule: λ (default 1) or top k, not both (one would be ignored)."""
    if std is not None and top_k is not None:
        raise ContextualMTError(f"give --{name}-std or --{name}-top-k, not both")
    return Rule(top_k=top_k) if top_k is not None else Rule(std if std is not None else Rule().std)


TARGET = "target"  # the mutually exclusive group: exactly one of --reference, --hypotheses, --translate


@dataclass
class AttributeArgs:
    source: str = option(required=True, help="source text, one sentence per line")
    reference: Optional[str] = option(
        exclusive=TARGET, exclusive_required=True, help="reference translations: scored by forced decoding"
    )
    hypotheses: Optional[str] = option(
        exclusive=TARGET,
        help="the model's own translations (`contextual-mt "
        "translate`): scored, and read as target context, as the model produced them",
    )
    translate: bool = option(
        action="store_true",
        default=False,
        exclusive=TARGET,
        help="translate the source first with the same model (predicted target context, "
        "--beam), then attribute its translations",
    )
    beam: int = option(default=DecodingOptions.beam, help="with --translate")
    docids: str = option(required=True, help="document id of each line (a document: equal consecutive ids)")
    output: str = option(required=True, help="JSONL, one record per sentence (a .summary.json is written beside it)")
    method: AttributionMethodArgs = group(AttributionMethodArgs)
    shard: Optional[str] = option(
        empty_ok=True,
        help="i/n: the i-th of n parts of the documents (with --cti-scope sentence or "
        "--cti-top-k: the corpus threshold would be each shard's own)",
    )
    batch_size: int = option(default=AttributeOptions.batch_size, help="sentences per batch of records")
    max_tokens: Optional[int] = max_tokens_option()
    overwrite: bool = overwrite_option(RESUME_HELP, "--no-resume")
    quiet: bool = quiet_option()
    model: ModelArgs = group(ModelArgs)


def attribute(args: argparse.Namespace) -> int:
    from commandkit.options import from_namespace
    from contextual_mt.attribution.attribute import run_attribute, summary_line

    if args.beam != DecodingOptions.beam and not args.translate:
        raise ContextualMTError("--beam goes with --translate (the translations attribute makes)")
    model = model_options(args)
    summary = run_attribute(
        from_namespace(
            AttributeOptions,
            args,
            model=model,
            translate=DecodingOptions(beam=args.beam) if args.translate else None,
            **from_namespace(AttributionMethodArgs, args).options(),
            resume=not args.overwrite,
            progress=not args.quiet,
        )
    )
    print(summary_line(summary, args.output))
    return 0


def add(sub) -> None:
    command(
        sub,
        "attribute",
        AttributeArgs,
        attribute,
        "context attribution: which target tokens depend on context "
        "(CTI: P-CXMI / KL) and on which context tokens (CCI: gradients or attention), PECoRe batched",
        output_args=("output",),
        side_outputs=cxmi_side_outputs,
    )
