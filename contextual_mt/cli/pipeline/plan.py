"""``contextual-mt pipeline plan`` (pipeline/stages.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Optional

from commandkit.options import option
from contextual_mt.cli.common import command, keyword_default
from contextual_mt.cli.pipeline.options import ROOT_HELP
from contextual_mt.pipeline.presets import PRESETS
from contextual_mt.pipeline.stages import format_plan, jobs


@dataclass
class PlanArgs:
    lang: str = option(required=True)
    root: str = option(default=keyword_default(jobs, "root"), help=ROOT_HELP)
    shards: int = option(
        type=int, default=keyword_default(jobs, "shards"), help="tasks of the P-CXMI job array (default: 4)"
    )
    json: bool = option(action="store_true", default=False, help="one JSON object per job (default: one line of words)")
    # the plan does not depend on the preset; submit.sh passes PRESET here so that the presets
    # module, not the script, says which names exist
    preset: Optional[str] = option(
        choices=sorted(PRESETS),
        help="check that the train jobs' preset exists (submit.sh's PRESET); the plan is the same for every preset",
    )


def plan(args: argparse.Namespace) -> int:
    print(format_plan(jobs(args.lang, args.root, args.shards, every=True), args.json))
    return 0


def add(sub) -> argparse.ArgumentParser:
    return command(
        sub,
        "plan",
        PlanArgs,
        plan,
        "print the job graph of a language pair (what recipes/slurm/submit.sh submits)",
        transaction=False,
    )
