"""``contextual-mt demo-data``, ``demo`` and ``cadec-demo``: the offline demo. Their options are
the demo's (``DemoDataOptions``, ``DemoOptions``, ``CadecDemoOptions``)."""

from __future__ import annotations

from contextual_mt.cli.common import typed_command
from contextual_mt.demo.cadec import CadecDemoOptions
from contextual_mt.demo.corpus import DemoDataOptions
from contextual_mt.demo.pipeline import DemoOptions


def demo_data(options: DemoDataOptions) -> int:
    from contextual_mt.demo.demo_data import write_demo_data

    made = write_demo_data(options)
    for split, s in made.stats.items():
        print(
            f"{split}: {s['documents']} documents, {s['sentences']} sentences, planted: "
            + ", ".join(f"{p} {s[p]}" for p in ("pronouns", "formality", "lexical_choice"))
        )
    print(f"contrastive set (Voita format): {made.contrastive}, {made.groups} groups")
    if made.ted is not None and made.nulls is not None:
        print(
            f"TED layout: {made.ted} (missing-translation rows inserted: "
            + ", ".join(f"{split} {n}" for split, n in made.nulls.items())
            + ")"
        )
    return 0


def demo(options: DemoOptions) -> int:
    from contextual_mt.demo.pipeline import run_demo

    run_demo(options)
    return 0


def cadec_demo(options: CadecDemoOptions) -> int:
    from contextual_mt.demo.cadec import run_cadec_demo

    run_cadec_demo(options)
    return 0


def add_demo_data(sub) -> None:
    typed_command(
        sub,
        "demo-data",
        DemoDataOptions,
        demo_data,
        "write the synthetic EN-FR demo corpus with planted phenomena",
        output_dir_args=("output",),
    )


def add_demos(sub) -> None:
    typed_command(
        sub,
        "demo",
        DemoOptions,
        demo,
        "the offline demo: train a sentence-level and a contextual model on the "
        "demo corpus and compare them on the planted phenomena",
        transaction=False,
    )  # resumes step by step
    typed_command(
        sub,
        "cadec-demo",
        CadecDemoOptions,
        cadec_demo,
        "after the demo: train CADec on its sentence-level model "
        "and compare the two-pass translations with the base model's",
        transaction=False,
    )  # resumes step by step
