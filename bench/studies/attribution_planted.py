"""Context attribution on the demo's planted phenomena: does CTI select the planted tokens, and is
the top cue of each the context word that decides it (known by construction)?

The test split is regenerated from the demo's generator (and checked line by line against
``--data``), so each planted token's cue is known:
  pronouns        the antecedent in the previous sentence: "the NOUN" / "le|la NOUN_fr";
  formality       a token of the document's greeting (Hi NAME, my friend / Bonjour, monsieur NAME)
                  or the pronoun and verb of an earlier you-sentence (Tu vois / Vous voyez);
  lexical_choice  the earlier mention of the ambiguous noun ("the bank" / "la banque") in the
                  cue sentence.
Two levels are counted: the top cue is one of these words ("word"), or lies in the sentence that
holds them ("sentence": for lexical choice, the cue sentence's other words, e.g. "argent" in
"Je garde mon argent dans la banque", also decide the sense).
Tokens fixed by an earlier token of their own sentence (a verb agreeing with tu/vous) are left
out, as in the P-CXMI study. A planted word counts as selected when one of its pieces is; its top
cue is the highest-scoring cue of its highest-CTI selected piece. The chance level of the top-cue
fraction is the mean share of cue words among the context words of the planted tokens.

    python -m bench.studies.attribution_planted --demo demo --methods saliency input_x_gradient attention \\
        [--json bench/studies/attribution_planted.json]

on a finished ``make demo`` (its layout: ``demo/data/fr``, ``demo/checkpoints/fr/context``, the
planted tokens in ``demo/corpus``). docs/examples/refresh.py runs it and the attribution page
quotes its figures.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Set, Tuple

from bench import harness
from contextual_mt.analysis.pcxmi_scorer import split_words
from contextual_mt.attribution.attribute import AttributeOptions, run_attribute
from contextual_mt.backends.fairseq.model import FairseqModelOptions
from contextual_mt.demo.corpus import generate_split
from contextual_mt.pipeline.layout import DEMO_LANG, PairLayout, demo_corpus


def cue_words(docs) -> Dict[int, Dict[str, Set[Tuple[str, int, int]]]]:
    """Per 1-based line with planted tokens: per phenomenon, the cue words as (side, sentence
    counting back, word index)."""
    out: Dict[int, Dict[str, Set]] = {}
    line = 0
    for doc in docs:
        for s, pair in enumerate(doc):
            line += 1
            cues: Dict[str, Set] = defaultdict(set)
            for p in pair.planted:
                if p.phenomenon == "pronouns":
                    a, b = doc[s - 1].mention
                    cues["pronouns"] |= {(side, -1, w) for side in ("source", "target") for w in range(a, b + 1)}
                elif p.phenomenon == "formality":
                    for j in range(s):
                        prev = doc[j]
                        if prev.kind.startswith("greeting"):
                            for side, toks in (("source", prev.src), ("target", prev.tgt)):
                                cues["formality"] |= {(side, j - s, w) for w in range(len(toks))}
                        elif prev.kind == "you":
                            cues["formality"] |= {("target", j - s, 0), ("target", j - s, 1)}
                elif p.phenomenon == "lexical_choice":
                    j = max(k for k in range(s) if doc[k].kind == "cue")
                    a, b = doc[j].mention
                    src_words = set(range(a, b + 1))
                    cues["lexical_choice"] |= {("source", j - s, w) for w in src_words}
                    cues["lexical_choice"] |= {("target", j - s, t) for sw, t in doc[j].align if sw in src_words}
            if cues:
                out[line] = dict(cues)
    return out


def word_of_pieces(tokens: List[str]) -> List[int]:
    """The word index of each piece."""
    index = [0] * len(tokens)
    for w, (_, pieces) in enumerate(split_words(tokens)):
        for p in pieces:
            index[p] = w
    return index


def evaluate(records: List[Dict], planted: List[Dict], cues: Dict) -> Dict:
    by_line = {r["line"]: r for r in records}
    per: Dict[str, Dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for p in planted:
        if p["agrees_with"] is not None:
            continue
        r, ph = by_line[p["line"]], p["phenomenon"]
        stats = per[ph]
        stats["planted"] += 1
        words = split_words(r["tokens"][:-1])
        pieces = words[p["index"]][1]
        context_words = {(c["side"], c["sentence"]): word_of_pieces(c["tokens"]) for c in r["context"]}
        n_context = sum(len(set(w)) for w in context_words.values())
        wanted = cues[p["line"]][ph]
        present = {(side, s, w) for (side, s), ws in context_words.items() for w in set(ws)} & wanted
        stats["chance"] += len(present) / n_context if n_context else 0.0
        stats["cue_in_context"] += bool(present)
        chosen = [t for t in pieces if t in r["selected"]]
        if not chosen:
            continue
        stats["selected"] += 1
        metric = r["cti"]["kl"]
        t = max(chosen, key=lambda t: metric[t])
        mine = [c for c in r["cues"] if c["target"] == t]
        if not mine:
            continue
        top = max(mine, key=lambda c: c["score"])
        word = context_words[(top["side"], top["sentence"])][top["position"]]
        stats["top_cue_planted"] += (top["side"], top["sentence"], word) in wanted
        stats["top_cue_in_cue_sentence"] += any((top["side"], top["sentence"]) == (side, s) for side, s, _ in wanted)
    # precision: the selected tokens that are pieces of planted words (agreement ones included)
    planted_pieces = {
        (p["line"], t) for p in planted for t in split_words(by_line[p["line"]]["tokens"][:-1])[p["index"]][1]
    }
    selected = [(r["line"], t) for r in records for t in r["selected"]]
    precision = sum(x in planted_pieces for x in selected) / len(selected) if selected else None
    table = {}
    totals = defaultdict(float)
    for ph, s in sorted(per.items()):
        for k, v in s.items():
            totals[k] += v
        table[ph] = s
    table["all"] = totals
    return {
        ph: {
            "planted": int(s["planted"]),
            "cti_selected": round(s["selected"] / s["planted"], 4),
            "top_cue_planted": round(s["top_cue_planted"] / s["planted"], 4),
            "top_cue_planted_of_selected": round(s["top_cue_planted"] / s["selected"], 4) if s["selected"] else None,
            "top_cue_in_cue_sentence": round(s["top_cue_in_cue_sentence"] / s["planted"], 4),
            "cue_in_context": round(s["cue_in_context"] / s["planted"], 4),
            "chance_top_cue": round(s["chance"] / s["planted"], 4),
            **({"precision_of_selection": round(precision, 4)} if ph == "all" and precision is not None else {}),
        }
        for ph, s in table.items()
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demo", default="demo")
    ap.add_argument("--methods", nargs="+", default=["saliency", "input_x_gradient", "attention"])
    ap.add_argument("--contrast", default="foil")
    ap.add_argument("--scopes", nargs="+", default=["corpus", "sentence"], help="CTI threshold scopes")
    ap.add_argument("--test-docs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=13)
    harness.add_arguments(ap, repeats=None)
    args = harness.parse(ap, argv)
    layout = PairLayout(DEMO_LANG, args.demo)
    data = layout.data
    docs = generate_split(args.test_docs, args.seed * 1000 + 2, "test")  # the test split of generate_demo_data
    lines = [" ".join(t.form for t in pair.src) for doc in docs for pair in doc]
    with open(os.path.join(data, "test.en"), encoding="utf-8") as f:
        if [x.rstrip("\n") for x in f] != lines:
            raise SystemExit(f"{data}/test.en is not the regenerated test split (--test-docs/--seed?)")
    cues = cue_words(docs)
    planted_file = Path(demo_corpus(args.demo), "test.planted.jsonl")
    planted = [json.loads(x) for x in planted_file.read_text(encoding="utf-8").splitlines()]
    model = FairseqModelOptions(layout.checkpoint("context"), spm=layout.spm)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for method, scope in [(m, s) for s in args.scopes for m in args.methods]:
            out = os.path.join(tmp, f"{method}-{scope}.jsonl")
            options = AttributeOptions(
                model,
                layout.text("test", "en"),
                layout.text("test", "docids"),
                out,
                reference=layout.text("test", DEMO_LANG),
                method=method,
                contrast=args.contrast,
                cti_scope=scope,
                progress=False,
            )
            timed = harness.time_it(lambda options=options: run_attribute(options), repeats=1)
            summary, seconds = timed.result, timed.median
            records = [json.loads(x) for x in Path(out).read_text(encoding="utf-8").splitlines()]
            key = f"{method}, CTI threshold per {scope}"
            results[key] = {
                "seconds": round(seconds, 2),
                "cti_threshold": summary["cti"]["threshold"],
                "selected_tokens": summary["selected_tokens"],
                "tokens": summary["tokens"],
                "phenomena": evaluate(records, planted, cues),
            }
            print(f"{key}: {seconds:.1f} s, {summary['selected_tokens']} of {summary['tokens']} tokens selected")
            for ph, s in results[key]["phenomena"].items():
                print(
                    f"  {ph:15s} planted {s['planted']:4d}  CTI selected {s['cti_selected']:.3f}  top cue planted "
                    f"{s['top_cue_planted']:.3f} (of selected {s['top_cue_planted_of_selected']}), in the cue "
                    f"sentence {s['top_cue_in_cue_sentence']:.3f}  "
                    f"chance {s['chance_top_cue']:.3f}"
                    + (f"  precision {s['precision_of_selection']:.3f}" if "precision_of_selection" in s else "")
                )
    if args.json:  # the figures alone, as bench/studies/attribution_planted.json holds them
        harness.write_json(args.json, results)


if __name__ == "__main__":
    main()
