"""``contextual-mt pipeline contrastive`` (pipeline/contrastive_stage.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import List

from commandkit.options import from_namespace, option
from contextual_mt.cli.common import command, quiet_option
from contextual_mt.cli.pipeline.options import dtype_option
from contextual_mt.pipeline.contrastive_stage import CONTRASTIVE_SYSTEMS, ContrastiveStageOptions, markdown, run_stage


@dataclass
class ContrastiveStageArgs:
    lang: str = option(required=True)
    root: str = option(default=ContrastiveStageOptions.root)
    sets: List[str] = option(nargs="+", required=True, metavar="FORMAT:FILE[,CONTEXT_FILE...]")
    systems: List[str] = option(nargs="+", default=list(CONTRASTIVE_SYSTEMS), choices=list(CONTRASTIVE_SYSTEMS))
    batch_size: int = option(type=int, default=ContrastiveStageOptions.batch_size)
    cpu: bool = option(action="store_true", default=False)
    dtype: str = dtype_option()
    detokenize: str = option(
        choices=("auto", "yes", "no"),
        default=ContrastiveStageOptions.detokenize,
        help="sacremoses-detokenize Moses-tokenized sets (auto: yes; no where the pair's text "
        "is tokenized, as the demo's)",
    )
    quiet: bool = quiet_option()


def contrastive(args: argparse.Namespace) -> int:
    table = run_stage(from_namespace(ContrastiveStageOptions, args, progress=not args.quiet))
    print(markdown(table, args.systems))
    return 0


def add(sub) -> None:
    command(
        sub,
        "contrastive",
        ContrastiveStageArgs,
        contrastive,
        "accuracy of the sentence and context models on contrastive test sets",
        transaction=False,
    )  # one transaction per set and system, kept as each ends
