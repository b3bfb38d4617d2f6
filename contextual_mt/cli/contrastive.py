"""``contextual-mt contrastive``: its options are ``ContrastiveOptions`` (``contrastive.evaluate``),
its run ``contextual_mt.api.contrastive``."""

from __future__ import annotations

from typing import Dict

from contextual_mt.cli.common import typed_command
from contextual_mt.contrastive.evaluate import ContrastiveOptions
from contextual_mt.stage_record import partial_path


def contrastive(options: ContrastiveOptions) -> int:
    from contextual_mt import api
    from contextual_mt.contrastive.evaluate import format_contrastive_table

    summary = api.contrastive(options).summary
    print(format_contrastive_table(summary))
    if options.output is not None:  # scored with a model (not --scores)
        print(scores_line(summary, options.output, options.summary))
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
    typed_command(
        sub,
        "contrastive",
        ContrastiveOptions,
        contrastive,
        "accuracy on a contrastive test set (Voita, Bawden, "
        "ContraPro, SCAT): score every candidate and write the scores file the set's own scorer reads",
        output_args=("output", "summary"),
        side_outputs=lambda options: [("--output's .partial", partial_path(options.output))] if options.output else [],
    )
