"""``contextual-mt align`` side by side with mweralign (mwerSegmenter, Matt Post's reimplementation:
what IWSLT and the speech-translation evaluations resegment with), on the same documents, at
several distances from the reference.

    python -m bench.alignment_versus --demo demo --mweralign /path/to/venv/bin/mweralign \\
        --json bench/out/alignment_versus.json

mweralign is a bench-only dependency (``pip install mweralign`` into a separate virtual
environment; the project never imports it): give its command with ``--mweralign``. It runs with
``-m none`` (whitespace words: the demo's text is tokenized; its default SentencePiece model is a
download from GitHub) and ``-d`` (each document aligned to its own references).

The documents: the demo context model's translations of the test split (``demo/results/fr/
context.test.fr``, 1,644 lines in 300 documents), moved away from the reference by

* word noise P (0, 0.15, 0.3, 0.5): per word, P/2 substitution, P/4 deletion, P/4 insertion of a
  random word of the test split (punctuation kept: the sentences stay sentences);
* paraphrase-like edits: clauses around a comma swapped (half the lines that have one), words
  replaced by a synonym from the corpus (a French word aligned to the same English word in the
  demo's training split, 30% of the words that have one), and function words dropped (half of the
  25 most frequent short words),

then made whole documents by ``docalign.perturb``: 9% of the lines merged with the next (about 150
merges, written with a comma, no sentence mark), 4% dropped, 2% sentences added from other
documents. Both tools align them to the references.

Per tool: the share of lines whose text is exactly their true text, and within chrF 80 of it
("near"; an added sentence counts as right with the line before or the line after); the share
of lines linked to exactly the right output characters (``align`` only: mweralign cuts words, not
links); omission F1 (empty lines against dropped lines) and addition F1 (``align``'s 0-1 links
against the added sentences; mweralign does not report additions); BLEU and chrF through the
alignment minus through the true lines; the CPU time of the whole command (user + system of the
process and its children, median of ``--repeats`` interleaved runs).

With ``--comet MODEL`` also COMET through the alignment minus through the true lines, scored by
the project's COMET scorer (``contextual_mt.metrics``; the model loaded once, before any
alignment runs; per distance the true lines and both tools' lines in one batch), the sources
being the demo's ``test.en``. ``--comet tiny`` builds the tests' tiny offline model
(``tests.hf_models.build_comet``: a random 2-layer encoder, its tokenizer trained on the demo's
lines) in a temporary folder: its scores measure how faithfully a line-level metric survives the
alignment (the same model through the alignment and through the truth), not translation quality.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from bench import harness
from commandkit.text import read_lines
from docalign.perturb import Perturbed, Rates, perturb

RATES = Rates(merge=0.09, split=0.0, drop=0.04, add=0.02)
NOISE = (0.0, 0.15, 0.3, 0.5)
PARAPHRASE = "paraphrase"
BIN = Path(sys.executable).parent
PUNCT = set(",.;:!?\"'()«»-")
TINY = "tiny"
COMET_NOTE = (
    "COMET - true: scored with a random tiny model (the tests' offline builder), so it measures how faithfully a "
    "line-level metric survives the alignment, not translation quality"
)


class Comet:
    """One loaded COMET model for the whole bench (the project's scorer, ``contextual_mt.metrics``)."""

    def __init__(self, model: str, srcs: Sequence[str], batch_size: int = 64) -> None:
        from contextual_mt import metrics

        self.model, self.srcs, self.batch_size = model, list(srcs), batch_size
        self.scorer = metrics.load_comet(model)

    def systems(self, hyps: Sequence[Sequence[str]], refs: Sequence[str]) -> List[float]:
        """The system score of each hypothesis list, all in one batch (a system's score is the
        mean of its segments' scores, as unbabel-comet's ``system_score``)."""
        from contextual_mt.metrics import comet_predict

        n = len(refs)
        flat = [h for system in hyps for h in system]
        out = comet_predict(self.scorer, self.srcs * len(hyps), flat, list(refs) * len(hyps), self.model,
                            self.batch_size)  # fmt: skip
        seg = out["segments"]
        return [statistics.fmean(seg[k * n : (k + 1) * n]) for k in range(len(hyps))]


def tiny_comet(folder: Path, lines: Sequence[str]) -> str:
    """The tests' tiny offline COMET model (random weights; tokenizer trained on ``lines``)."""
    from tests.hf_models import build_comet

    return str(build_comet(folder / "tiny-comet", lines))


def is_word(token: str) -> bool:
    return not all(c in PUNCT for c in token)


def word_noise(lines: Sequence[str], p: float, seed: int = 7) -> List[str]:
    """Per word: P/2 substitution, P/4 deletion, P/4 insertion (after it) of a random corpus word."""
    rng = random.Random(seed)
    vocabulary = sorted({w for line in lines for w in line.split() if is_word(w)})
    out = []
    for line in lines:
        words: List[str] = []
        for w in line.split():
            r = rng.random()
            if not is_word(w) or r >= p:
                words.append(w)
            elif r < p / 2:
                words.append(rng.choice(vocabulary))
            elif r < 3 * p / 4:
                continue
            else:
                words.extend((w, rng.choice(vocabulary)))
        out.append(" ".join(words))
    return out


def synonyms(demo: Path) -> Dict[str, List[str]]:
    """French words aligned to the same English word in the demo's training split (twice or more)."""
    corpus = demo / "corpus"
    en, fr, al = (read_lines(str(corpus / f"train.{x}")) for x in ("en", "fr", "align"))
    by_english: Dict[str, Counter] = defaultdict(Counter)
    english_of: Dict[str, Counter] = defaultdict(Counter)
    for e, f, a in zip(en, fr, al, strict=True):
        ew, fw = e.split(), f.split()
        for pair in a.split():
            i, j = map(int, pair.split("-"))
            if is_word(ew[i]) and is_word(fw[j]):
                by_english[ew[i].lower()][fw[j]] += 1
                english_of[fw[j]][ew[i].lower()] += 1
    out = {}
    for f, es in english_of.items():
        e = es.most_common(1)[0][0]
        others = sorted(g for g, c in by_english[e].items() if c >= 2 and g.lower() != f.lower())
        if others:
            out[f] = others
    return out


def paraphrased(lines: Sequence[str], demo: Path, seed: int = 11) -> List[str]:
    rng = random.Random(seed)
    table = synonyms(demo)
    counts = Counter(w.lower() for line in read_lines(str(demo / "corpus/train.fr")) for w in line.split())
    function = {w for w, _ in counts.most_common() if is_word(w) and len(w) <= 3}
    function = set(sorted(function, key=lambda w: -counts[w])[:25])
    out = []
    for line in lines:
        words = line.split()
        if " , " in line and words[-1] in (".", "!", "?") and rng.random() < 0.5:
            body, end = " ".join(words[:-1]), words[-1]
            first, second = body.split(" , ", 1)
            if second and first:
                second = second[0].upper() + second[1:]
                first = first[0].lower() + first[1:] if first[1:2].islower() else first
                words = f"{second} , {first} {end}".split()
        new = []
        for w in words:
            if w.lower() in function and rng.random() < 0.5 and len(words) > 3:
                continue
            if w in table and rng.random() < 0.3:
                w = rng.choice(table[w])
            new.append(w)
        out.append(" ".join(new))
    return out


def cpu_run(argv: List[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _join(*parts: str) -> str:
    return " ".join(" ".join(p.split()) for p in parts if p.strip())


def truths(docs: Sequence[Perturbed]) -> Tuple[List[str], List[Tuple[str, str]]]:
    """The true lines (an added sentence with the line before: docalign's rule) and, per line, the
    two texts that count as right (the added sentence with the line before, or with the line after)."""
    lines, accepted = [], []
    for d in docs:
        for k in range(d.lines):
            before = _join(d.truth[k], *d.added.get(k, []))
            after = _join(*d.added.get(k - 1, []), d.truth[k])
            lines.append(before)
            accepted.append((before, _join(d.truth[k], *d.added.get(k, [])) if k == 0 else after))
    return lines, accepted


def line_scores(hyps: Sequence[str], accepted: Sequence[Tuple[str, str]]) -> Dict[str, float]:
    from sacrebleu.metrics import CHRF

    metric = CHRF()
    exact = near = 0
    for h, options in zip(hyps, accepted, strict=True):
        h = " ".join(h.split())
        if h in options:
            exact += 1
            near += 1
        elif h and any(o and metric.sentence_score(h, [o]).score >= 80 for o in options):
            near += 1
    return {"exact": exact / len(hyps), "near": near / len(hyps)}


def f1(predicted: set, true: set) -> float:
    if not predicted and not true:
        return 1.0
    right = len(predicted & true)
    return 2 * right / (len(predicted) + len(true)) if predicted or true else 1.0


def corpus_scores(hyps: Sequence[str], refs: Sequence[str]) -> Dict[str, float]:
    import logging

    from sacrebleu.metrics import BLEU, CHRF

    logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # the demo's text is tokenized, as its references
    return {"BLEU": BLEU().corpus_score(list(hyps), [list(refs)]).score,
            "chrF": CHRF().corpus_score(list(hyps), [list(refs)]).score}  # fmt: skip


def align_records(path: str) -> Tuple[Dict[int, Any], set]:
    """From ``align``'s alignment file: per line (0-based), the output characters linked to it
    (document, first, last; None for an omission), and the added sentences (document, span)."""
    cover: Dict[int, Any] = {}
    additions = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["line"] is None:
                additions.update((r["doc"], tuple(s)) for s in r["spans"])
            elif r["spans"]:
                cover[r["line"] - 1] = (r["doc"], r["spans"][0][0], r["spans"][-1][1])
            else:
                cover[r["line"] - 1] = None
    return cover, additions


def true_links(docs: Sequence[Perturbed]) -> Tuple[Dict[int, Any], set]:
    cover: Dict[int, Any] = {}
    additions = set()
    for d in docs:
        for link in d.links:
            (i, a), (j, b) = link.lines, link.segments
            if not a:
                additions.add((d.doc, d.spans[j]))
            for q in range(a):
                cover[d.first_line + i + q] = (d.doc, d.spans[j][0], d.spans[j + b - 1][1]) if b else None
    return cover, additions


def distance(
    name: str,
    lines: Sequence[str],
    refs: Sequence[str],
    ids: Sequence[str],
    mweralign: str,
    work: str,
    repeats: int,
    comet: Optional[Comet] = None,
) -> Dict[str, Any]:
    docs = perturb(lines, ids, RATES, seed=1)
    true_lines, accepted = truths(docs)
    paths = {k: os.path.join(work, f"{k}.txt") for k in ("docids", "refs", "docs", "align.out", "mwer.out")}
    paths["jsonl"], paths["records"] = os.path.join(work, "docs.jsonl"), os.path.join(work, "align.jsonl")
    Path(paths["docids"]).write_text("".join(i + "\n" for i in ids))
    Path(paths["refs"]).write_text("".join(r + "\n" for r in refs))
    Path(paths["docs"]).write_text("".join(d.text + "\n" for d in docs))
    Path(paths["jsonl"]).write_text("".join(json.dumps({"doc": d.doc, "text": d.text}, ensure_ascii=False) + "\n"
                                            for d in docs))  # fmt: skip
    commands = {
        "align": [str(BIN / "contextual-mt"), "align", "--hyp-documents", paths["jsonl"], "--docids", paths["docids"],
                  "--pivot", paths["refs"], "--segmenter-lang", "fr", "--output", paths["align.out"],
                  "--alignment", paths["records"]],
        "mweralign": [mweralign, "-r", paths["refs"], "-t", paths["docs"], "-d", paths["docids"], "-m", "none",
                      "-o", paths["mwer.out"]],
    }  # fmt: skip
    seconds: Dict[str, List[float]] = {k: [] for k in commands}
    for _ in range(repeats):  # interleaved
        for tool, argv in commands.items():
            seconds[tool].append(cpu_run(argv))
    truth_scores = corpus_scores(true_lines, refs)
    dropped = {k for k, t in enumerate(true_lines) if not t}
    cover, added = true_links(docs)
    outputs = {}
    for tool, out in (("align", paths["align.out"]), ("mweralign", paths["mwer.out"])):
        outputs[tool] = [line.strip() for line in read_lines(out)]
        assert len(outputs[tool]) == len(refs), (tool, len(outputs[tool]))
    comets: Dict[str, float] = {}
    if comet is not None:  # the truth and both tools in one batch
        names = ["true", *outputs]
        comets = dict(zip(names, comet.systems([true_lines, *outputs.values()], refs), strict=True))
        truth_scores["COMET"] = comets["true"]
    rows = {}
    for tool, hyps in outputs.items():
        scores = corpus_scores(hyps, refs)
        row: Dict[str, Any] = {**line_scores(hyps, accepted),
                               "omission F1": f1({k for k, h in enumerate(hyps) if not h.strip()}, dropped),
                               "link accuracy": None, "addition F1": None,
                               "BLEU - true": scores["BLEU"] - truth_scores["BLEU"],
                               "chrF - true": scores["chrF"] - truth_scores["chrF"],
                               "COMET - true": comets[tool] - comets["true"] if comets else None,
                               "CPU s": statistics.median(seconds[tool]), "CPU s runs": seconds[tool]}  # fmt: skip
        if tool == "align":
            got, got_added = align_records(paths["records"])
            row["link accuracy"] = sum(got.get(k) == c for k, c in cover.items()) / len(cover)
            row["addition F1"] = f1(got_added, added)
        rows[tool] = row
    edits = {k: sum(d.edits[k] for d in docs) for k in ("merge", "split", "drop", "add")}
    return {"distance": name, "edits": edits, "true": truth_scores, "tools": rows}


COLUMNS = ("exact", "near", "link accuracy", "omission F1", "addition F1", "BLEU - true", "chrF - true", "COMET - true",
           "CPU s")  # fmt: skip


def table(results: Sequence[Dict[str, Any]]) -> str:
    """The results as a Markdown table; the COMET column only where COMET was scored."""
    columns = [c for c in COLUMNS if c != "COMET - true" or any(r["tools"]["align"][c] is not None for r in results)]
    head = "| distance | tool | " + " | ".join(columns) + " |"
    lines = [head, "|" + "---|" * (len(columns) + 2)]
    for r in results:
        for tool, row in r["tools"].items():
            cells = []
            for c in columns:
                v = row[c]
                if v is None:
                    cells.append("-")
                elif "true" in c:
                    cells.append(f"{v:+.4f}" if c == "COMET - true" else f"{v:+.2f}")
                else:
                    cells.append(f"{v:.2f}" if c == "CPU s" else f"{v:.3f}")
            lines.append(f"| {r['distance']} | `{tool}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo", default="demo", help="the demo's folder (make demo)")
    parser.add_argument("--mweralign", required=True, help="mweralign's command (a bench-only install)")
    parser.add_argument(
        "--lines",
        default=None,
        help="the line-aligned output to start from (default: the "
        "demo context model's, DEMO/results/fr/context.test.fr)",
    )
    parser.add_argument("--distances", nargs="*", default=None, help="only these (e.g. 0.3 paraphrase)")
    parser.add_argument(
        "--comet",
        default=None,
        metavar="MODEL",
        help="also COMET through each alignment minus through the true lines, with this COMET model (a local "
        f"folder or checkpoint); '{TINY}': build the tests' tiny offline model (random weights: it measures the "
        "metric's fidelity through the alignment, not translation quality)",
    )
    parser.add_argument("--comet-batch-size", type=int, default=64, help="COMET's batch size (default 64)")
    harness.add_arguments(parser, repeats=3, warmup=0)
    args = harness.parse(parser, argv)
    if args.comet is not None and args.comet != TINY:  # a bad model path before any work
        from commandkit.errors import InputError
        from contextual_mt.metrics import check_comet_model

        try:
            check_comet_model(args.comet)
        except InputError as e:
            parser.error(f"--comet: {e}")
    if args.comet_batch_size < 1:
        parser.error("--comet-batch-size must be at least 1")
    demo = Path(args.demo)
    ids, refs = read_lines(str(demo / "corpus/test.docids")), read_lines(str(demo / "corpus/test.fr"))
    base = read_lines(args.lines or str(demo / "results/fr/context.test.fr"))
    version = subprocess.run([args.mweralign, "-V"], capture_output=True, text=True).stdout.strip()
    wanted = [(f"noise {p}", p) for p in NOISE] + [(PARAPHRASE, None)]
    if args.distances:
        wanted = [(n, p) for n, p in wanted if n.split()[-1] in args.distances]
    results = []
    with tempfile.TemporaryDirectory() as work:
        comet = None
        if args.comet is not None:
            srcs = read_lines(str(demo / "corpus/test.en"))
            model = tiny_comet(Path(work), srcs + refs) if args.comet == TINY else args.comet
            comet = Comet(model, srcs, args.comet_batch_size)
        for name, p in wanted:
            lines = paraphrased(base, demo) if p is None else word_noise(base, p)
            results.append(distance(name, lines, refs, ids, args.mweralign, work, args.repeats, comet))
            print(table(results[-1:]).split("\n", 2)[-1], flush=True)
    print(f"{version}; {len(refs)} lines, {len(set(ids))} documents; edits {results[0]['edits']}")
    print(table(results))
    if comet is not None:
        print(COMET_NOTE if args.comet == TINY else f"COMET - true: model {args.comet}")
    record = {"mweralign": version, "rates": RATES.__dict__, "results": results}
    if args.comet is not None:
        record["comet"] = {"model": args.comet, "note": COMET_NOTE if args.comet == TINY else None}
    harness.finish(args, "alignment_versus", record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
