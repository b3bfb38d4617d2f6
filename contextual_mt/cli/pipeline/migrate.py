"""``contextual-mt pipeline migrate FOLDER`` (pipeline/migrate.py)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from commandkit.options import option
from contextual_mt.cli.common import command
from contextual_mt.pipeline.migrate import migrate


@dataclass
class MigrateArgs:
    folder: str = option(
        positional=True, help="the study folder (WORK: data/, checkpoints/, results/) or any folder in it"
    )


def run(args: argparse.Namespace) -> int:
    done, bad = migrate(args.folder)
    for path in done:
        print(f"rewrote {path}")
    for line in bad:
        print(f"error: {line}", file=sys.stderr)
    print(f"{len(done)} record(s) of earlier versions rewritten in {args.folder}", file=sys.stderr)
    return 1 if bad else 0


def add(sub) -> argparse.ArgumentParser:
    return command(
        sub,
        "migrate",
        MigrateArgs,
        run,
        "rewrite the records an earlier version left in a study folder into this version's (once)",
        transaction=False,
    )
