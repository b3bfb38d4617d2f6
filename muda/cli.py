"""The ``muda`` command: ``muda tag``, ``muda eval``, ``muda download`` and ``muda train-ellipsis``. A thin layer over
the API (``muda.commands``): each subcommand's parser is generated from its options dataclass, and the parsed
arguments become that options object."""

from __future__ import annotations

import argparse
from typing import List, Optional

from commandkit.command_outputs import run_subcommand
from commandkit.console import configure_logging, console_run, run_command
from commandkit.options import add_options, from_namespace

# the subcommands: name, options (muda.commands.options), help
SUBCOMMANDS = (
    ("tag", "TagOptions", "tag every target token with the discourse phenomena it involves"),
    (
        "eval",
        "EvalOptions",
        "per-tag word precision, recall and f-measure of systems against the tagged reference, "
        "with BLEU and paired bootstrap",
    ),
    (
        "download",
        "DownloadOptions",
        "get every model `muda tag` needs for a language (stanza for English and the "
        "target, the aligner); needs network",
    ),
    (
        "train-ellipsis",
        "TrainEllipsisOptions",
        "train the BERT ellipsis classifier on Penn Treebank trees (sentences with the *?* trace are positives)",
    ),
)


def _command(cls):
    """The subcommand of options ``cls``: the parsed arguments as that options object, to its function."""
    from muda.commands import COMMANDS

    def run(args: argparse.Namespace) -> int:
        return COMMANDS[cls](from_namespace(cls, args))

    return run


def build_parser() -> argparse.ArgumentParser:
    from muda.commands import options

    parser = argparse.ArgumentParser(
        prog="muda", description="MuDA: multilingual discourse-aware tagging and evaluation of document-level MT"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, cls_name, help in SUBCOMMANDS:
        cls = getattr(options, cls_name)
        p = add_options(sub.add_parser(name, help=help), cls)
        p.set_defaults(
            func=_command(cls),
            **{
                k: v
                for k, v in (
                    ("output_args", getattr(cls, "OUTPUT_ARGS", None)),
                    ("output_dir_args", getattr(cls, "OUTPUT_DIR_ARGS", None)),
                )
                if v
            },
        )
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    # the one boundary (``commandkit.console.report``): a user's error is one line and an exit status
    return run_command(_run, argv)


def _run(argv: Optional[List[str]]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging()
    return run_subcommand(args, parser)


def console() -> None:
    """The ``muda`` console script."""
    console_run(main)


if __name__ == "__main__":
    console()
