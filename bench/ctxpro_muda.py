"""MuDA's tags held against ctxpro's examples (issue 54, item 4).

For a ctxpro formality set, each example becomes a document: its reference segment, after the
target-side context. ctxpro releases the context on the source side only, so the target context
is DeepL's translation of it (ctxpro's ``paper/outputs/deepl.NAME.contexts``, split into
sentences with ctxpro's splitter; used when it splits into as many sentences as the source
context has, else the example is tagged without context). The documents are tagged by `muda tag
--annotator spacy --phenomena formality` twice: with that context and with the reference segment
alone. Then:

- recall: of ctxpro's examples, how many MuDA tags as formality on the expected word (the word's
  form, compared case-insensitively; "t'" as spaCy's token "t'"); and on any word of the sentence;
- tags in the context sentences, which ctxpro did not select: how many have a source sentence
  without "you" (ctxpro's formality rules start from an English "you", so those it would not
  find), and a seeded sample of them written out to be read.

    python -m bench.ctxpro_muda --repo /work/.mirror/rewicks+ctxpro/repo \\
        --set mini.formality.opensubtitles.en-fr.test --max-examples 3000 --json muda.json --sample sample.md

``--repo``: a checkout or a bare git directory of ctxpro. Nothing here is read by the project at
run or test time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

from bench import harness
from bench.ctxpro_agreement import Repo

ROOT = Path(__file__).resolve().parents[1]
YOU = re.compile(r"\byou(rs?|rself|rselves)?\b", re.IGNORECASE)


def documents(examples, inputs, deepl, splitter, with_context: bool) -> Tuple[List[List[Tuple[str, str]]], int]:
    """Per example, its (source, target) sentence pairs, the example's last; and how many got a
    target context."""
    docs, contexted = [], 0
    for example, line, translation in zip(examples, inputs, deepl, strict=True):
        parts = [p.strip() for p in line.split("<eos>")]
        pairs = [(parts[-1], example["ref segment"].strip())]
        if with_context and len(parts) > 1:
            target = splitter.split(text=translation.strip())[:-1]
            if len(target) == len(parts) - 1:
                pairs = list(zip(parts[:-1], target, strict=True)) + pairs
                contexted += 1
        docs.append(pairs)
    return docs, contexted


def tag(docs: List[List[Tuple[str, str]]], lang: str, work: Path) -> List[List[List[Dict]]]:
    work.mkdir(parents=True, exist_ok=True)
    src, tgt, ids = [], [], []
    for k, pairs in enumerate(docs):
        for s, t in pairs:
            src.append(s)
            tgt.append(t)
            ids.append(f"ex{k}")
    for name, lines in (("src", src), ("tgt", tgt), ("docids", ids)):
        (work / name).write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    cmd = [sys.executable, "-m", "muda.cli", "tag", "--src", str(work / "src"), "--tgt", str(work / "tgt")]
    cmd += ["--docids", str(work / "docids"), "--tgt-lang", lang, "--dump-tags", str(work / "tags.json")]
    cmd += ["--annotator", "spacy", "--phenomena", "formality"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if proc.returncode != 0:
        raise SystemExit(f"muda tag failed: {proc.stderr.strip().splitlines()[-1]}")
    return json.loads((work / "tags.json").read_text(encoding="utf-8"))


def _gap_reason(form: str, level, context: List[str]) -> str:
    """Why MuDA did not tag the expected word, as far as the text tells."""
    if form == "t'":
        return "t' is not in MuDA's French T-V word list"
    if not context:
        return "no target context (none in ctxpro, or DeepL's sentences do not match the source's)"
    want = level(form)
    words = [w for sentence in context for w in re.findall(r"[\w'\u2019-]+", sentence)]
    if any(level(w) == want for w in words):
        return "a word of the same level is in the context (MuDA's tokens or tagger missed it)"
    if any(level(p) == want for w in words for p in w.split("-") if p):
        return "the context's word of the same level is hyphenated (avez-vous, as-tu)"
    return "no word of the same level in the context"


def measure(examples, docs, tags, lang: str) -> Dict:
    from muda.languages import get_language

    formality = get_language(lang).formality
    level = formality.level if formality is not None else (lambda w: None)
    reasons: Dict[str, int] = {}
    same_word = any_word = with_context = same_word_with_context = 0
    gaps: List[Dict] = []
    context_tags: List[Dict] = []
    per_form: Dict[str, List[int]] = {}
    for example, pairs, doc in zip(examples, docs, tags, strict=True):
        form = example["expected"].lower()
        last = doc[-1]
        words = [t["token"].lower().replace("\u2019", "'") for t in last if "formality" in t["tags"]]
        hit = form in words
        same_word += hit
        if len(pairs) > 1:
            with_context += 1
            same_word_with_context += hit
        any_word += bool(words)
        per_form.setdefault(form, [0, 0])
        per_form[form][0] += hit
        per_form[form][1] += 1
        if not hit:
            why = _gap_reason(form, level, [t for _, t in pairs[:-1]])
            reasons[why] = reasons.get(why, 0) + 1
            gaps.append({"expected": example["expected"], "rule": example["rule"], "reference": pairs[-1][1],
                         "tagged": words, "context": [t for _, t in pairs[:-1]], "why": why})  # fmt: skip
        for (s, t), sentence in zip(pairs[:-1], doc[:-1], strict=True):
            for tok in sentence:
                if "formality" in tok["tags"]:
                    context_tags.append({"word": tok["token"], "target": t, "source": s, "you": bool(YOU.search(s))})
    n = len(examples)
    return {
        "examples": n,
        "recall_same_word": same_word / n,
        "recall_any_word": any_word / n,
        "recall_same_word_given_context": same_word_with_context / with_context if with_context else None,
        "recall_by_form": {f: {"tagged": a, "examples": b, "recall": a / b} for f, (a, b) in sorted(per_form.items())},
        "context_tags": len(context_tags),
        "context_tags_without_you": sum(not t["you"] for t in context_tags),
        "gap_reasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
        "gaps": gaps,
        "context_tag_list": context_tags,
    }


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", required=True)
    p.add_argument("--set", default="mini.formality.opensubtitles.en-fr.test", help="a paper/ set (has DeepL)")
    p.add_argument("--max-examples", type=int, default=0, help="a seeded sample of the examples (0: all)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sample", help="write a seeded sample of context tags and of gaps here (Markdown) to read")
    p.add_argument("--json")
    args = p.parse_args(argv)
    from sentence_splitter import SentenceSplitter

    machine = harness.machine_info()
    print(harness.machine_line(machine), flush=True)
    repo = Repo(args.repo)
    lang = re.search(r"\.[a-z]{2}-([a-z]{2})\.", args.set).group(1)  # type: ignore[union-attr]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for path, dest in (
            (f"paper/jsons/{args.set}.json", work / "set.json"),
            (f"paper/inputs/{args.set}", work / "inputs"),
            (f"paper/outputs/deepl.{args.set}.contexts", work / "deepl"),
        ):
            if not repo.read(path, dest):
                raise SystemExit(f"{path}: absent from {args.repo}")
        examples = json.loads((work / "set.json").read_text(encoding="utf-8"))
        inputs = (work / "inputs").read_text(encoding="utf-8").splitlines()
        deepl = (work / "deepl").read_text(encoding="utf-8").splitlines()
        keep = list(range(len(examples)))
        if args.max_examples and args.max_examples < len(keep):
            keep = sorted(random.Random(args.seed).sample(keep, args.max_examples))
        examples, inputs, deepl = ([x[k] for k in keep] for x in (examples, inputs, deepl))
        splitter = SentenceSplitter(language=lang)
        result = {"set": args.set, "language": lang, "annotator": "spacy", "machine": machine}
        for name, with_context in (("with DeepL's context", True), ("reference alone", False)):
            docs, contexted = documents(examples, inputs, deepl, splitter, with_context)
            tags = tag(docs, lang, work / name.replace(" ", "_"))
            m = measure(examples, docs, tags, lang)
            m["examples_with_context"] = contexted
            result[name] = m
            print(
                f"{name}: recall {100 * m['recall_same_word']:.1f}% on the expected word, "
                f"{100 * m['recall_any_word']:.1f}% any word ({m['examples']} examples, {contexted} with context"
                + (
                    f", {100 * m['recall_same_word_given_context']:.1f}% of those"
                    if m["recall_same_word_given_context"] is not None
                    else ""
                )
                + "); "
                f"{m['context_tags']} tags in context sentences, {m['context_tags_without_you']} without 'you' "
                "in the source",
                flush=True,
            )
            print("  gaps: " + "; ".join(f"{k}: {v}" for k, v in m["gap_reasons"].items()))
            print("  by form: " + ", ".join(f"{f} {100 * v['recall']:.1f}%" for f, v in m["recall_by_form"].items()))
    if args.sample:
        rng = random.Random(args.seed)
        ctx = result["with DeepL's context"]
        lines = ["# MuDA formality tags in context sentences (a seeded sample)", ""]
        for t in rng.sample(ctx["context_tag_list"], min(25, len(ctx["context_tag_list"]))):
            lines.append(f"- **{t['word']}** | {t['target']} | src: {t['source']} | you: {t['you']}")
        lines += ["", "# ctxpro examples MuDA does not tag on the expected word (a seeded sample)", ""]
        for g in rng.sample(ctx["gaps"], min(25, len(ctx["gaps"]))):
            lines.append(f"- {g['rule']} **{g['expected']}** | {g['reference']} | tagged: {g['tagged']} | "
                         f"context: {' / '.join(g['context'])} | {g['why']}")  # fmt: skip
        Path(args.sample).write_text("\n".join(lines) + "\n", encoding="utf-8")
    if args.json:
        for m in (result["with DeepL's context"], result["reference alone"]):
            m.pop("context_tag_list")
            m["gaps"] = random.Random(args.seed).sample(m["gaps"], min(100, len(m["gaps"])))
        Path(args.json).write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
