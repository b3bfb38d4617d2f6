"""Whole-document output re-aligned (``docalign``, ``contextual-mt align``): link accuracy against
known links, the difference between evaluating through the alignment and through the true
alignment, and the time to align a 2,000-line test set.

    .venv/bin/python -m bench.alignment --json bench/out/alignment.json   # needs demo/ (make demo)

Document outputs whose links are known: the demo's test split translated line by line by the
context and the sentence model (``demo/results/fr/{context,sentence}.test.fr``) and the references
themselves, joined into documents after ``docalign.perturb`` merged 10% of the lines with the next,
split 5% at a comma, dropped 3% and added 2% from other documents (seeds 1-3).

1. Link accuracy: the share of source lines linked to exactly the output characters the truth
   links them to, for two pivots: the references (what the evaluations use by default) and another
   system's sentence-level translation (the sentence model's for the context model and the
   references, the context model's for the sentence model). Goal >= 0.97.
   Outputs far from their pivot: the references with 15% and 30% of their words replaced by other
   words of the test split (punctuation kept), aligned to the references.
2. Evaluation through the alignment against evaluation through the true links (both by docalign's
   rule for merges and additions), seed 1, pivot = references: BLEU, chrF, d-BLEU (sacreBLEU),
   MuDA's per-tag F (``muda eval`` with the demo's lexicon annotator) and the test suite's fraction
   correct per phenomenon (``contextual-mt testset evaluate``). Goal: within 1 point, the same
   ranking of the two models. The unperturbed lines' figures are shown beside them (what the
   perturbation itself changes).
3. With a model's link score (``contextual-mt align --path ... --source ...``; the demo's context
   model): link accuracy for the same outputs, the context model's output against the sentence
   model's pivot and the sentence model's against the references, and its time.
4. Time: ``contextual-mt align`` on the first 2,000-odd lines (whole documents) of the demo's
   training split, perturbed as above, pivot its references with every fourth word dropped; the
   whole command (start-up, sentence splitting, reading, writing) and the library call alone.
   Goal < 30 s. The output is split by docalign's rules (``--segmenter rules``, the default).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Sequence

from bench import harness
from commandkit.documents import document_spans
from commandkit.text import read_lines
from docalign.align import AlignOptions, align_documents
from docalign.links import resolve
from docalign.perturb import Perturbed, Rates, link_accuracy, perturb
from docalign.segmenter import RULES, Segmenter

SEEDS = (1, 2, 3)
NOISE = (0.15, 0.30)  # shares of the words replaced: outputs far from their pivot
BIN = Path(sys.executable).parent


def noised(lines: Sequence[str], share: float, seed: int = 5) -> List[str]:
    """``lines`` with ``share`` of their words (not punctuation) replaced by other words of theirs."""
    rng = random.Random(seed)
    vocabulary = sorted({w for line in lines for w in line.split() if w.isalpha()})
    return [" ".join(rng.choice(vocabulary) if w.isalpha() and rng.random() < share else w for w in line.split())
            for line in lines]  # fmt: skip


def gold_hypotheses(docs: Sequence[Perturbed], pivots: Sequence[str]) -> List[str]:
    """The true links turned into one hypothesis per line by the same rule as the aligner's."""
    out: List[str] = []
    for d in docs:
        a = d.alignment()
        resolve(a, pivots[d.first_line : d.first_line + d.lines], d.lines, list(range(d.lines)))
        out.extend(a.hypotheses)
    return out


def corpus_scores(hyps: Sequence[str], refs: Sequence[str], ids: Sequence[str]) -> Dict[str, float]:
    from sacrebleu.metrics import BLEU, CHRF

    logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # the demo's text is tokenized, as its references

    docs = [(" ".join(hyps[a:b]), " ".join(refs[a:b])) for a, b in document_spans(ids)]
    return {
        "BLEU": BLEU().corpus_score(list(hyps), [list(refs)]).score,
        "chrF": CHRF().corpus_score(list(hyps), [list(refs)]).score,
        "d-BLEU": BLEU().corpus_score([h for h, _ in docs], [[r for _, r in docs]]).score,
    }


def run(argv: List[str]) -> None:
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def muda_figures(demo: Path, files: Dict[str, str], work: str) -> Dict[str, Dict[str, float]]:
    corpus, out = demo / "corpus", os.path.join(work, "muda.json")
    lexicon = [str(corpus / f) for f in ("train.en.conllu", "train.fr.conllu", "train.align")]
    run([str(BIN / "muda"), "eval", "--src", str(corpus / "test.en"), "--ref", str(corpus / "test.fr"),
         "--docids", str(corpus / "test.docids"), "--tgt-lang", "fr", "--hyps", *files.values(),
         "--names", *files, "--ref-tags", str(demo / "results/fr/muda/reference.tags.json"),
         "--lexicon", *lexicon, "--bootstrap", "0", "--output", out])  # fmt: skip
    systems = json.loads(Path(out).read_text())["systems"]
    return {name: {f"MuDA F {tag}": 100 * r["f"] for tag, r in s["tags"].items()} for name, s in systems.items()}


def testset_figures(demo: Path, files: Dict[str, str], work: str) -> Dict[str, Dict[str, float]]:
    out = os.path.join(work, "testset.json")
    manifest = demo / "results/fr/testset/manifest.jsonl"
    run([str(BIN / "contextual-mt"), "testset", "evaluate", "--manifest", str(manifest),
         *(a for path in files.values() for a in ("--hyp", path)),
         "--bootstrap", "0", "--output", out])  # fmt: skip
    result = json.loads(Path(out).read_text())
    figures: Dict[str, Dict[str, float]] = {}
    for name, path in files.items():
        system = result["systems"][os.path.basename(path)]
        cells = {"overall": system["overall"], **system["phenomena"]}
        figures[name] = {f"testset {p}": 100 * v["correct"] for p, v in cells.items()}
    return figures


def differences(figures: Dict[str, Dict[str, float]], systems: Sequence[str]) -> List[Dict[str, Any]]:
    rows = []
    for metric in figures[f"{systems[0]} gold"]:
        row: Dict[str, Any] = {"metric": metric}
        for s in systems:
            for kind in ("lines", "gold", "aligned"):
                row[f"{s} {kind}"] = figures[f"{s} {kind}"].get(metric)
            row[f"{s} difference"] = row[f"{s} aligned"] - row[f"{s} gold"]
        gold_order = sorted(systems, key=lambda s: -row[f"{s} gold"])
        aligned_order = sorted(systems, key=lambda s: -row[f"{s} aligned"])
        row["same ranking"] = gold_order == aligned_order
        rows.append(row)
    return rows


def with_model(demo: Path, ids: Sequence[str], outputs: Dict[str, List[str]], refs: Sequence[str]) -> Dict[str, Any]:
    from contextual_mt.backends.fairseq.model import FairseqModelOptions
    from contextual_mt.contrastive.link_model import link_model

    spec = FairseqModelOptions(
        str(demo / "checkpoints/fr/context/checkpoint_best.pt"), spm=str(demo / "data/fr/spm.model")
    )
    model = link_model(spec, progress=False)
    sources = read_lines(str(demo / "corpus/test.en"))
    segmenter = Segmenter(RULES, "fr")
    accuracy: Dict[str, List[float]] = {}
    seconds: List[float] = []
    for name, pivots in (("context", outputs["sentence"]), ("sentence", refs)):
        for seed in SEEDS:
            docs = perturb(outputs[name], ids, Rates(), seed=seed)
            t = harness.time_it(
                lambda docs=docs, pivots=pivots: align_documents(
                    [d.text for d in docs], pivots, ids, AlignOptions(language="fr"), segmenter=segmenter,
                    sources=sources, link_model=model,
                ),
                repeats=1,
                warmup=0,
            )  # fmt: skip
            seconds.append(t.median)
            accuracy.setdefault(f"{name} output", []).append(link_accuracy(t.result.documents, docs))
    for key, values in accuracy.items():
        print(f"link accuracy with the model's link score, {key}: {', '.join(f'{v:.4f}' for v in values)}")
    print(f"with the model: {min(seconds):.1f}-{max(seconds):.1f} s per alignment of the test split")
    return {"link_accuracy": accuracy, "seconds": seconds}


def speed(demo: Path, args: argparse.Namespace, work: str) -> Dict[str, Any]:
    corpus = demo / "corpus"
    ids, refs = read_lines(str(corpus / "train.docids")), read_lines(str(corpus / "train.fr"))
    end = next(b for _, b in document_spans(ids) if b >= 2000)
    ids, refs = ids[:end], refs[:end]
    pivots = [" ".join(w for k, w in enumerate(line.split()) if k % 4 != 3) for line in refs]
    docs = perturb(refs, ids, Rates(), seed=1)
    paths = {name: os.path.join(work, f"speed.{name}") for name in ("docids", "pivot", "jsonl")}
    Path(paths["docids"]).write_text("".join(i + "\n" for i in ids))
    Path(paths["pivot"]).write_text("".join(p + "\n" for p in pivots))
    Path(paths["jsonl"]).write_text(
        "".join(json.dumps({"doc": d.doc, "text": d.text}, ensure_ascii=False) + "\n" for d in docs)
    )
    argv = [str(BIN / "contextual-mt"), "align", "--hyp-documents", paths["jsonl"], "--docids", paths["docids"],
            "--pivot", paths["pivot"], "--segmenter-lang", "fr", "--output", os.path.join(work, "speed.out"),
            "--alignment", os.path.join(work, "speed.alignment.jsonl")]  # fmt: skip
    command = harness.time_it(lambda: run(argv), repeats=args.repeats, warmup=args.warmup)
    segmenter = Segmenter(RULES, "fr")
    texts = [d.text for d in docs]
    library = harness.time_it(
        lambda: align_documents(texts, pivots, ids, AlignOptions(language="fr"), segmenter=segmenter),
        repeats=args.repeats,
        warmup=args.warmup,
    )
    accuracy = link_accuracy(library.result.documents, docs)
    baseline = harness.time_it(
        lambda: with_sacrebleu_chrf(
            lambda: align_documents(texts, pivots, ids, AlignOptions(language="fr"), segmenter=segmenter)
        ),
        repeats=args.repeats,
        warmup=0,
    )
    same = baseline.result.hypotheses == library.result.hypotheses
    rows = [harness.Row("align_documents, 2,000 lines: sacreBLEU's chrF (baseline) / batched n-gram sets", "s",
                        baseline.median, library.median, higher_is_better=False)]  # fmt: skip
    print(harness.table(rows))
    print(
        f"the same hypotheses with sacreBLEU's chrF: {same}; the goal's 30 s / the command: {30 / command.median:.1f}x"
    )
    print(
        f"speed: {len(ids)} lines, {len(docs)} documents: `contextual-mt align` {harness.describe(command)}; "
        f"align_documents {harness.describe(library, items=len(ids), unit='lines')}; link accuracy {accuracy:.4f}"
    )
    return {"lines": len(ids), "documents": len(docs), "command": command.to_dict(), "library": library.to_dict(),
            "sacrebleu_chrf": baseline.to_dict(), "same_hypotheses": same, "rows": harness.compare(rows),
            "link_accuracy": accuracy}  # fmt: skip


def with_sacrebleu_chrf(fn):
    """``fn()`` with the dynamic program scoring links by sacreBLEU's own sentence chrF (beta 1)
    on the texts, the baseline that docalign's batched n-gram sets replace."""
    import numpy as np
    from sacrebleu.metrics import CHRF

    from docalign import dp

    metric, real = CHRF(beta=1), dp.link_chrf
    dp.link_chrf = lambda runs, hyps, refs: np.array(
        [metric.sentence_score(runs.text(h), [runs.text(r)]).score / 100 for h, r in zip(hyps, refs, strict=True)]
    )
    try:
        return fn()
    finally:
        dp.link_chrf = real


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo", default="demo", help="the demo's folder (make demo)")
    harness.add_arguments(parser, repeats=3, warmup=1)
    args = harness.parse(parser, argv)
    demo = Path(args.demo)
    corpus = demo / "corpus"
    ids, refs = read_lines(str(corpus / "test.docids")), read_lines(str(corpus / "test.fr"))
    outputs = {
        "context": read_lines(str(demo / "results/fr/context.test.fr")),
        "sentence": read_lines(str(demo / "results/fr/sentence.test.fr")),
        "references": refs,
    }
    other = {"context": "sentence", "sentence": "context", "references": "sentence"}
    segmenter = Segmenter(RULES, "fr")
    options = AlignOptions(language="fr")
    accuracy: Dict[str, Any] = {}
    aligned: Dict[str, List[str]] = {}
    statistics: Dict[str, Any] = {}
    for name, lines in outputs.items():
        for seed in SEEDS:
            docs = perturb(lines, ids, Rates(), seed=seed)
            texts = [d.text for d in docs]
            for pivot_name, pivots in (("references", refs), (f"{other[name]} model", outputs[other[name]])):
                if name == "references" and pivot_name == "references":
                    continue  # the output is its own pivot: no test
                a = align_documents(texts, pivots, ids, options, segmenter=segmenter)
                acc = link_accuracy(a.documents, docs)
                accuracy.setdefault(f"{name} output, pivot {pivot_name}", []).append(acc)
                if seed == 1 and pivot_name == "references":
                    aligned[name], statistics[name] = a.hypotheses, a.statistics
                    aligned[f"{name} gold"] = gold_hypotheses(docs, refs)
    for share in NOISE:
        noisy = noised(refs, share)
        for seed in SEEDS:
            docs = perturb(noisy, ids, Rates(), seed=seed)
            a = align_documents([d.text for d in docs], refs, ids, options, segmenter=segmenter)
            accuracy.setdefault(f"references with {share:.0%} of the words changed, pivot references", []).append(
                link_accuracy(a.documents, docs)
            )
    for key, values in accuracy.items():
        print(f"link accuracy, {key}: {', '.join(f'{v:.4f}' for v in values)} (seeds {SEEDS})")
    systems = ("context", "sentence")
    with tempfile.TemporaryDirectory() as work:
        files = {}
        for s in systems:
            for kind, lines in (("lines", outputs[s]), ("gold", aligned[f"{s} gold"]), ("aligned", aligned[s])):
                files[f"{s} {kind}"] = os.path.join(work, f"{s}.{kind}.fr")
                Path(files[f"{s} {kind}"]).write_text("".join(line + "\n" for line in lines))
        figures = {k: corpus_scores(read_lines(p), refs, ids) for k, p in files.items()}
        for source in (muda_figures(demo, files, work), testset_figures(demo, files, work)):
            for k, v in source.items():
                figures[k].update(v)
        rows = differences(figures, systems)
        model = with_model(demo, ids, outputs, refs)
        timing = speed(demo, args, work)
    columns = [f"{s} {k}" for s in systems for k in ("lines", "gold", "aligned", "difference")]
    print(f"{'metric':<28}" + "".join(f"{c:>20}" for c in columns))
    for r in rows:
        cells = "".join(f"{r[c]:>20.2f}" for c in columns)
        print(f"{r['metric']:<28}{cells}" + ("" if r["same ranking"] else "  ranking differs"))
    worst = max(abs(r[f"{s} difference"]) for r in rows for s in systems)
    print(
        f"largest difference: {worst:.3f} points; same ranking on every figure: {all(r['same ranking'] for r in rows)}"
    )
    harness.finish(args, "alignment", {
        "link_accuracy": accuracy, "statistics": statistics, "figures": rows, "largest_difference": worst,
        "speed": timing, "with_model": model, "rates": Rates().__dict__, "seeds": SEEDS,
    })  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
