"""``contextual-mt demo-data``, ``demo`` and ``cadec-demo``: the offline demo."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Optional

from commandkit.options import option
from contextual_mt.cli.common import command, keyword_default
from contextual_mt.demo.cadec import run_cadec_demo
from contextual_mt.demo.corpus import generate_demo_data
from contextual_mt.demo.pipeline import run_demo


@dataclass
class DemoDataArgs:
    output: str = option(required=True, help="directory")
    train_docs: int = option(default=keyword_default(generate_demo_data, "train_docs"))
    valid_docs: int = option(default=keyword_default(generate_demo_data, "valid_docs"))
    test_docs: int = option(default=keyword_default(generate_demo_data, "test_docs"))
    seed: int = option(default=keyword_default(generate_demo_data, "seed"))
    ted: bool = option(
        action="store_true",
        default=False,
        help="also write OUTPUT/ted_talks.tar.gz: the corpus in "
        "the layout of the multilingual TED talks release, for `make all LANG=fr TED=...`",
    )


def demo_data(args: argparse.Namespace) -> int:
    from contextual_mt.demo.contrastive_set import write_planted_contrastive

    stats = generate_demo_data(args.output, args.train_docs, args.valid_docs, args.test_docs, args.seed)
    for split, s in stats.items():
        print(
            f"{split}: {s['documents']} documents, {s['sentences']} sentences, planted: "
            + ", ".join(f"{p} {s[p]}" for p in ("pronouns", "formality", "lexical_choice"))
        )
    contrastive = os.path.join(args.output, "test.contrastive.json")
    n = write_planted_contrastive(args.output, contrastive)
    print(f"contrastive set (Voita format): {contrastive}, {n} groups")
    if args.ted:
        from contextual_mt.demo.ted_layout import write_ted_layout

        tarball = os.path.join(args.output, "ted_talks.tar.gz")
        nulls = write_ted_layout(args.output, tarball, seed=args.seed)
        print(
            f"TED layout: {tarball} (missing-translation rows inserted: "
            + ", ".join(f"{split} {n}" for split, n in nulls.items())
            + ")"
        )
    return 0


@dataclass
class DemoArgs:
    workdir: str = option(default=keyword_default(run_demo, "workdir"))
    train_docs: int = option(default=keyword_default(run_demo, "train_docs"))
    sentence_epochs: Optional[int] = option(help="default: the demo preset's")
    context_epochs: Optional[int] = option(help="default: the demo preset's")


def demo(args: argparse.Namespace) -> int:
    run_demo(args.workdir, args.train_docs, sentence_epochs=args.sentence_epochs, context_epochs=args.context_epochs)
    return 0


@dataclass
class CadecDemoArgs:
    workdir: str = option(default=keyword_default(run_cadec_demo, "workdir"))
    epochs: int = option(default=keyword_default(run_cadec_demo, "epochs"))
    demo_first: bool = option(
        action="store_true",
        default=False,
        help="run the demo first when its sentence-level "
        "model is not there yet (make cadec-demo); without it, that is an error",
    )


def cadec_demo(args: argparse.Namespace) -> int:
    run_cadec_demo(args.workdir, epochs=args.epochs, demo_first=args.demo_first)
    return 0


def add_demo_data(sub) -> None:
    command(
        sub,
        "demo-data",
        DemoDataArgs,
        demo_data,
        "write the synthetic EN-FR demo corpus with planted phenomena",
        output_dir_args=("output",),
    )


def add_demos(sub) -> None:
    command(
        sub,
        "demo",
        DemoArgs,
        demo,
        "the offline demo: train a sentence-level and a contextual model on the "
        "demo corpus and compare them on the planted phenomena",
        transaction=False,
    )  # resumes step by step
    command(
        sub,
        "cadec-demo",
        CadecDemoArgs,
        cadec_demo,
        "after the demo: train CADec on its sentence-level model "
        "and compare the two-pass translations with the base model's",
        transaction=False,
    )  # resumes step by step
