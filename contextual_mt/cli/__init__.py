"""``contextual-mt`` command line: a thin layer over the library functions."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import List, Optional, Sequence

from commandkit.command_outputs import run_subcommand
from commandkit.console import configure_logging, console_run, run_command

# each subcommand's module and the function that adds it, in `contextual-mt --help`'s order, with
# the command names it adds: a command line builds only its command's parser (the modules of the
# others are not imported; `contextual-mt align` starts in a tenth of a second)
COMMANDS = (
    ("add_symbols", "add", ("add-symbols",)),
    ("translate", "add", ("translate",)),
    ("score", "add", ("score",)),
    ("align", "add", ("align",)),
    ("demo", "add_demo_data", ("demo-data",)),
    ("cxmi", "add", ("cxmi",)),
    ("attribute", "add", ("attribute",)),
    ("cxmi", "add_merge", ("cxmi-merge",)),
    ("contrastive", "add", ("contrastive",)),
    ("report", "add", ("report",)),
    ("demo", "add_demos", ("demo", "cadec-demo")),
    ("testset", "add", ("testset",)),
    ("pipeline", "add", ("pipeline",)),
)


def build_parser(argv: Optional[Sequence[str]] = None) -> argparse.ArgumentParser:
    """Every subcommand, one module each (``contextual_mt/cli/``), its parser generated from its
    options dataclass (``commandkit.options``); given the command line ``argv`` whose first word
    is a command, only that command's."""
    import importlib

    command = argv[0] if argv else None
    wanted = [c for c in COMMANDS if command in c[2]] or COMMANDS
    parser = argparse.ArgumentParser(prog="contextual-mt", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for module, add, _ in wanted:
        getattr(importlib.import_module(f"contextual_mt.cli.{module}"), add)(sub)
    return parser


# what the line of an allocation that does not fit tells the user to lower (``commandkit.console.report``)
MEMORY_HINT = "lower --batch-size, --max-tokens or --beam, or use a larger machine"


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # the one boundary (``commandkit.console.report``): from parsing to the last output written, a
    # user's error is one line and an exit status
    return run_command(_run, argv, memory_hint=MEMORY_HINT)


def _run(argv: List[str]) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    import warnings

    # fairseq's log set-up, made here because the commands import it late; warnings, whoever
    # logs them (muda's readers, fairseq), read "warning: ..."
    configure_logging(logging.INFO)
    # torch's deprecation notice about fairseq 0.12's attention masks, printed on every run
    warnings.filterwarnings("ignore", message="Support for mismatched key_padding_mask and attn_mask")
    # fairseq logs every dictionary load at INFO; keep the terminal for progress and results
    logging.getLogger("fairseq").setLevel(logging.WARNING)
    # (the demo quiets it further: its text is tokenized on purpose, contextual_mt.demo.pipeline)
    logging.getLogger("sacrebleu").setLevel(logging.WARNING)
    return run_subcommand(args, parser)


def console() -> None:
    """The ``contextual-mt`` console script."""
    console_run(main)


if __name__ == "__main__":
    console()
