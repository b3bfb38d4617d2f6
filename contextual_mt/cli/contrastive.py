"""``contextual-mt contrastive``."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Dict, List, Optional

from commandkit.errors import Code
from commandkit.options import from_namespace, group, option
from contextual_mt.cli.common import (
    ModelArgs,
    command,
    max_tokens_option,
    model_options,
    overwrite_option,
    quiet_option,
)
from contextual_mt.contrastive.evaluate import ContrastiveOptions
from contextual_mt.stage_record import partial_path


@dataclass
class ContrastiveArgs:
    format: str = option(required=True, help="voita | bawden | contrapro | scat")
    input: str = option(
        required=True,
        help="the test set (voita: *.json; bawden: anaphora.json or "
        "lexical-choice.json; contrapro: contrapro.json; scat: highlighted.test.fr; docs/explanations/testsets.md)",
    )
    context_files: Optional[List[str]] = option(
        nargs="+",
        metavar="FILE",
        help="contrapro: the text and context files of "
        "json2text_and_context.pl; bawden: the four *.{prev,current}.{en,fr} "
        "files, to score their (preprocessed) text",
    )
    output: Optional[str] = option(help="scores file: one loss per candidate, in the order the set's scorer reads")
    scores: Optional[str] = option(
        help="instead of a model: the accuracy of this scores file (one per candidate, "
        "in the set's order; lower = better unless --maximize)"
    )
    maximize: bool = option(action="store_true", default=False, help="with --scores: higher scores are better")
    summary: str = option(required=True, help="JSON: accuracy overall and by category, and the settings")
    normalize: bool = option(action="store_true", default=False, help="loss per token instead of the sentence's sum")
    detokenize: str = option(
        choices=("auto", "yes", "no"),
        default=ContrastiveOptions.detokenize,
        help="sacremoses-detokenize a Moses-tokenized set (auto: when --spm is given)",
    )
    batch_size: int = option(default=ContrastiveOptions.batch_size, help="candidates per batch")
    max_tokens: Optional[int] = max_tokens_option()
    overwrite: bool = overwrite_option("discard OUTPUT.partial instead of resuming from it")
    quiet: bool = quiet_option()
    model: ModelArgs = group(ModelArgs)


def contrastive(args: argparse.Namespace) -> int:
    from contextual_mt.contrastive.evaluate import (
        ExternalScoresOptions,
        evaluate_scores,
        format_contrastive_table,
        run_contrastive,
    )
    from contextual_mt.errors import ContextualMTError

    if args.scores is not None:
        if args.path or args.hf_model or args.output:
            raise ContextualMTError(
                "--scores evaluates existing scores: give it without --path/--hf-model and --output"
            )
        summary = evaluate_scores(
            ExternalScoresOptions(
                args.format,
                args.input,
                args.scores,
                args.summary,
                tuple(args.context_files or ()),
                maximize=args.maximize,
            )
        )
        print(format_contrastive_table(summary))
        return 0
    if not ((args.path or args.hf_model) and args.output):
        raise ContextualMTError(
            "give --path or --hf-model, and --output (score with a model), or --scores (evaluate existing scores)",
            code=Code.OPTION_MISSING,
        )
    if args.maximize:
        raise ContextualMTError("--maximize applies to --scores only (this command writes losses: lower is better)")
    summary = run_contrastive(
        from_namespace(
            ContrastiveOptions,
            args,
            model=model_options(args),
            context_files=tuple(args.context_files or ()),
            resume=not args.overwrite,
            progress=not args.quiet,
        )
    )
    print(format_contrastive_table(summary))
    print(scores_line(summary, args.output, args.summary))
    return 0


def scores_line(summary: Dict, scores: str, summary_path: str) -> str:
    """Where the scores and the summary are, and how to score them with the set's published
    scorer; where none reads the set (a set of `testset build`, SCAT), what the accuracy counts."""
    from contextual_mt.contrastive.sets import RULE_WORDS

    scorer = summary["official_scorer"]
    if scorer:
        return f"scores: {scores} (the set's published scorer reads them: {scorer}); summary: {summary_path}"
    return (
        f"scores: {scores}; summary: {summary_path} (no published scorer reads this set; the accuracy above: "
        f"{RULE_WORDS[summary['rule']]})"
    )


def add(sub) -> None:
    command(
        sub,
        "contrastive",
        ContrastiveArgs,
        contrastive,
        "accuracy on a contrastive test set (Voita, Bawden, "
        "ContraPro, SCAT): score every candidate and write the scores file the set's own scorer reads",
        output_args=("output", "summary"),
        side_outputs=lambda a: [("--output's .partial", partial_path(a.output))] if a.output else [],
    )
