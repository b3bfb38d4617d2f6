"""Aligning without a reference (``contextual-mt align --pivot none``, SEGALE's mode) against aligning
to the references, on the same documents: link accuracy.

    .venv/bin/python -m bench.no_reference [--demo demo] --json bench/out/no_reference.json   # after make demo

The documents: the demo's test split as the context and the sentence model translated it
(``demo/results/fr/{context,sentence}.test.fr``) and the references themselves, each made into
whole documents by ``docalign.perturb`` (10% of the lines merged with the next, 5% split at a
comma, 3% dropped, 2% added from other documents; seeds 1-3), so that the true links are known;
and the references with 15% and 30% of their words replaced (outputs far from any pivot). Each is
aligned twice with the default segmenter: to the references (the evaluations' default) and to the
source lines glossed by the IBM Model 1 table learned from the demo pair's training split, with
the weights of ``--pivot none --lexical-train`` (the table learned in a temporary folder, its
time shown).
Goal: link accuracy within 2 points of the reference pivot's.

``--with-model``: also the demo's context model's link score (``--path``), on the context model's
output (seed 1): with the gloss (``--pivot none --lexical-train ... --path ...``), and, to show why
the table is needed, with the source lines themselves as the pivot and the model's score alone.
Minutes on CPU.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List

from bench import harness
from bench.alignment import noised
from commandkit.text import read_lines
from docalign.align import AlignOptions, align_documents
from docalign.dp import Weights
from docalign.lexical.gloss import WEIGHTS, gloss_lines
from docalign.lexical.model1 import lexical_table
from docalign.perturb import Rates, link_accuracy, perturb
from docalign.segmenter import Segmenter

SEEDS = (1, 2, 3)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo", default="demo", help="a finished demo's folder (make demo)")
    parser.add_argument("--with-model", action="store_true", help="also the context model's link score (slow)")
    harness.add_arguments(parser, repeats=1)
    args = harness.parse(parser, argv)
    demo = Path(args.demo)
    data, results = demo / "data" / "fr", demo / "results" / "fr"
    ids, refs = read_lines(str(data / "test.docids")), read_lines(str(data / "test.fr"))
    sources = read_lines(str(data / "test.en"))
    with tempfile.TemporaryDirectory() as work:  # the table is cached beside its data: not in demo/
        for name in ("train.en", "train.fr"):
            shutil.copy(data / name, Path(work) / name)
        start = time.process_time()
        table = lexical_table(str(Path(work) / "train.en"), str(Path(work) / "train.fr"))
        learned = time.process_time() - start
    glosses = gloss_lines(sources, table)
    print(
        f"IBM Model 1 learned from {data}/train.{{en,fr}}: {len(table.translations)} source words, {learned:.1f} CPU-s"
    )
    outputs = {
        "context model": read_lines(str(results / "context.test.fr")),
        "sentence model": read_lines(str(results / "sentence.test.fr")),
        "references": refs,
        "references, 15% of words replaced": noised(refs, 0.15),
        "references, 30% of words replaced": noised(refs, 0.30),
    }
    segmenter = Segmenter(language="fr")
    no_pivot = replace(Weights(), **WEIGHTS)  # what contextual-mt align --pivot none aligns with
    rows: List[Dict[str, Any]] = []
    print(f"\n{'output':36} {'pivot: references':>18} {'pivot none':>11} {'difference':>11}")
    for name, lines in outputs.items():
        accuracy: Dict[str, List[float]] = {"references": [], "none": []}
        for seed in SEEDS:
            docs = perturb(lines, ids, Rates(), seed=seed)
            texts = [d.text for d in docs]
            for pivot, pivots, weights, line_texts in (
                ("references", refs, Weights(), None),
                ("none", glosses, no_pivot, sources),  # as the command: a gloss has no sentence marks to count
            ):
                options = AlignOptions(language="fr", weights=weights)
                a = align_documents(texts, pivots, ids, options, segmenter=segmenter, line_texts=line_texts)
                accuracy[pivot].append(link_accuracy(a.documents, docs))
        mean = {k: sum(v) / len(v) for k, v in accuracy.items()}
        diff = 100 * (mean["none"] - mean["references"])
        print(f"{name:36} {mean['references']:18.4f} {mean['none']:11.4f} {diff:+10.2f}")
        rows.append({"output": name, "accuracy": accuracy, "mean": mean, "difference_points": diff})
    model_rows = with_model(demo, ids, sources, glosses, outputs["context model"], no_pivot) if args.with_model else []
    harness.finish(args, "no_reference", {"table_cpu_seconds": learned, "rows": rows, "with_model": model_rows})
    return 0


def with_model(demo: Path, ids, sources, glosses, output, no_pivot: Weights) -> List[Dict[str, Any]]:
    from contextual_mt.backends.fairseq.model import FairseqModelOptions
    from contextual_mt.contrastive.link_model import link_model

    spec = FairseqModelOptions(
        str(demo / "checkpoints/fr/context/checkpoint_best.pt"), spm=str(demo / "data/fr/spm.model")
    )
    model = link_model(spec, progress=False)
    docs = perturb(output, ids, Rates(), seed=1)
    texts = [d.text for d in docs]
    segmenter = Segmenter(language="fr")
    rows = []
    for name, pivots, weights in (
        ("pivot none, the gloss and the model", glosses, no_pivot),
        ("the source lines as the pivot, the model's score alone", sources, replace(Weights(), model=1.0)),
    ):
        options = AlignOptions(language="fr", weights=weights)

        def run(options=options, pivots=pivots):
            return align_documents(texts, pivots, ids, options, segmenter=segmenter, sources=sources, link_model=model)

        timing = harness.time_it(run, repeats=1)
        a, seconds = timing.results[0], timing.times[0]
        accuracy = link_accuracy(a.documents, docs)
        print(f"context model's output, seed 1, {name}: link accuracy {accuracy:.4f} ({seconds:.0f} s)")
        rows.append({"pivot": name, "accuracy": accuracy, "seconds": seconds})
    return rows


if __name__ == "__main__":
    sys.exit(main())
