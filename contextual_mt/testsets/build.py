"""``contextual-mt testset build``: contrastive test suites for any language pair, from MuDA's
tags of a parallel document corpus.

Every tagged occurrence whose phenomenon has closed alternatives becomes a group: the reference
sentence (with its context sentences) and its variants (``variants``). Occurrences for which no
grammatical, unambiguous variant can be made are skipped and counted by reason; a variant equal
to the reference is never written. Outputs, in ``--output-dir``:

- ``voita.json``: Voita et al.'s format (``contextual-mt contrastive --format voita`` reads it);
- ``contrapro.json`` with the text and context files of ContraPro's ``json2text_and_context.pl``
  (``contrapro.text.{en,xx}``, ``contrapro.context.{en,xx}``);
- ``manifest.jsonl``: per group, the phenomenon, the tagged word and its position, its
  alternatives, the antecedent or cue distance and why each variant was made (what
  ``testset evaluate`` reads);
- ``summary.json``: counts per phenomenon (groups, skipped by reason) and the inputs' hashes.
"""

from __future__ import annotations

import json
import logging
import os
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from commandkit.documents import check_line_count, document_spans, read_docids
from commandkit.outputs import atomic_write_lines, atomic_write_text, outputs
from commandkit.text import check_input_file, file_sha256, read_lines
from contextual_mt.errors import Code, ContextualMTError, check_option, given
from contextual_mt.testsets import alternatives
from contextual_mt.testsets.counterfactual import FOLDER as COUNTERFACTUAL
from contextual_mt.testsets.counterfactual import build_suite
from contextual_mt.testsets.counterfactual import output_names as counterfactual_names
from contextual_mt.testsets.lexicon import Lexicon
from contextual_mt.testsets.variants import Outcome, apply, closed_variants, cohesion_variants, verb_form_variants
from muda.annotation import Sentence
from muda.formats.conllu import read_conllu
from muda.formats.coref import CorefIndex, corefud_mentions
from muda.formats.pharaoh import read_pharaoh
from muda.formats.tags import read_tags
from muda.languages import get_language
from muda.tagger import (
    annotation_paths,
    check_annotations_match,
    output_paths,
    read_summary,
    skipped_phenomena,
    text_hash,
)

logger = logging.getLogger(__name__)

PHENOMENA = ("pronouns", "formality", "verb_form", "lexical_cohesion")
SEPARATOR = " _eos "


@dataclass
class BuildOptions:
    source: str
    reference: str
    docids: str
    tags: str  # `muda tag` output for these files (its annotations beside it unless given)
    output_dir: str
    lang: str  # the target language (MuDA's code)
    tgt_conllu: Optional[str] = None  # default: the tags file's .tgt.conllu
    src_conllu: Optional[str] = None  # default: the tags file's .src.conllu (coreference: pronoun distances)
    alignments: Optional[str] = None  # default: the tags file's .align (lexical cohesion)
    lexicon: Tuple[str, ...] = ()  # more target CoNLL-U (e.g. the training split) to find agreeing forms in
    context_size: int = 3  # context sentences written with each group (Voita's sets: 3)
    seed: int = 1  # where the reference goes among the candidates
    phenomena: Tuple[str, ...] = PHENOMENA
    overwrite: bool = False  # remove what an earlier build left in output_dir that this one does not write
    counterfactual: bool = False  # also the counterfactual context suites (testsets.counterfactual)
    max_shift: Optional[int] = None  # counterfactual: cues moved up to this many sentences back (context_size + 2)

    def __post_init__(self) -> None:
        check_option("--context-size", self.context_size, minimum=0, maximum=100, integer=True)
        check_option("--seed", self.seed, minimum=0, integer=True)
        if self.max_shift is not None and not self.counterfactual:
            raise ContextualMTError("--max-shift: applies with --counterfactual only", code=Code.OPTIONS_CONFLICT)
        self.max_shift_given = self.max_shift is not None  # else the default, named as such in errors
        if self.max_shift is None:
            self.max_shift = self.context_size + 2
        check_option("--max-shift", self.max_shift, minimum=0, maximum=100, integer=True)
        unknown = set(self.phenomena) - set(PHENOMENA)
        if unknown:
            raise ContextualMTError(
                f"--phenomena: {', '.join(sorted(unknown))} has no test suite (phenomena: {', '.join(PHENOMENA)})"
            )
        self.language = get_language(self.lang)  # a language MuDA does not cover: one line
        self.table = alternatives.load(self.language.code)
        if os.path.exists(self.output_dir) and not os.path.isdir(self.output_dir):
            raise ContextualMTError(f"--output-dir {self.output_dir}: is a file, not a folder", code=Code.CANNOT_WRITE)
        self.stale = stale_files(self.output_dir, self.language.code, self.tags, self.counterfactual)
        if self.stale and not self.overwrite:  # before anything is annotated or written
            raise ContextualMTError(
                f"--output-dir {self.output_dir}: holds "
                f"{', '.join(os.path.relpath(p, self.output_dir) for p in self.stale)} of an "
                "earlier build that this one would not replace (they would pass for this build's); give --overwrite "
                "to remove them, or another folder",
                code=Code.MISMATCH,
            )
        for path in self.lexicon:  # checked before anything is annotated or written
            check_input_file(path, "--lexicon CoNLL-U")
        if self.counterfactual:  # before the reference is tagged (without --tags) or anything is computed
            check_input_file(self.docids, "docids file")  # read again, and checked line by line, by the build
            longest = max((b - a for a, b in document_spans(read_lines(self.docids))), default=0)
            if self.max_shift > longest:
                default = "" if self.max_shift_given else f" (the default: --context-size {self.context_size} + 2)"
                raise ContextualMTError(
                    f"--max-shift {self.max_shift}{default}: beyond the longest document of {self.docids} ({longest} "
                    f"sentences): no document puts a cue that far back; give --max-shift {longest} or less",
                    code=Code.OPTION_VALUE,
                )
        beside = annotation_paths(self.tags)
        self.tgt_conllu = self.tgt_conllu or beside["tgt_conllu"]
        if self.src_conllu is None and os.path.isfile(beside["src_conllu"]):
            self.src_conllu = beside["src_conllu"]
        if self.alignments is None and os.path.isfile(beside["alignments"]):
            self.alignments = beside["alignments"]


def stale_files(output_dir: str, lang: str, tags: str, counterfactual: bool = False) -> List[str]:
    """The files an earlier build wrote in ``output_dir`` (its summary.json says which: the
    language's files, and the reference's tags when it tagged there) that a build for ``lang``
    from ``tags`` would not write again."""
    try:
        with open(os.path.join(output_dir, "summary.json"), encoding="utf-8") as f:
            earlier = json.load(f)
    except (OSError, ValueError):
        return []  # no earlier build here (or not one this command can read: nothing of it is removed)
    if not isinstance(earlier, dict):
        return []
    written = set(output_names(earlier["language"], True)) if isinstance(earlier.get("language"), str) else set()
    was = earlier.get("tags")
    if isinstance(was, str) and os.path.dirname(os.path.abspath(was)) == os.path.abspath(output_dir):
        written |= {os.path.basename(p) for p in output_paths(was)}  # tagged there (`testset build` without --tags)
    now = set(output_names(lang, counterfactual)) | {
        os.path.basename(p)
        for p in output_paths(tags)
        if os.path.dirname(os.path.abspath(p)) == os.path.abspath(output_dir)
    }
    return sorted(os.path.join(output_dir, n) for n in written - now if os.path.isfile(os.path.join(output_dir, n)))


def output_names(lang: str, counterfactual: bool = False) -> List[str]:
    return [
        *(counterfactual_names(lang) if counterfactual else []),
        "voita.json",
        "contrapro.json",
        "manifest.jsonl",
        "summary.json",
        *(f"contrapro.{kind}.{side}" for kind in ("text", "context") for side in ("en", lang)),
    ]


def run_build(options: BuildOptions) -> Dict:
    """Every input read and checked first; then the outputs, together (nothing on failure)."""
    o = options
    paths = [os.path.join(o.output_dir, n) for n in output_names(o.language.code, o.counterfactual)]
    inputs = {
        os.path.realpath(p): p
        for p in (o.source, o.reference, o.docids, o.tags, o.tgt_conllu, o.src_conllu, o.alignments, *o.lexicon)
        if p
    }
    for path in paths:
        if os.path.realpath(path) in inputs:
            raise ContextualMTError(
                f"--output-dir {o.output_dir}: {os.path.basename(path)} would overwrite the "
                f"input {inputs[os.path.realpath(path)]}; choose another folder"
            )
    # the folder is made by the transaction: removed again, with everything else, on any failure
    folders = [o.output_dir] + ([os.path.join(o.output_dir, COUNTERFACTUAL)] if o.counterfactual else [])
    with outputs(*paths, directories=folders):
        summary = _build(o, _read(o))
    for path in o.stale:  # --overwrite: what an earlier build left that would pass for this one's
        os.remove(path)
    left = os.path.join(o.output_dir, COUNTERFACTUAL)
    if o.stale and not o.counterfactual and os.path.isdir(left) and not os.listdir(left):
        os.rmdir(left)  # the earlier build's counterfactual folder, emptied: not a suite any more
    return summary


def _read(o: BuildOptions):
    sources, references = read_lines(o.source), read_lines(o.reference)
    if len(sources) != len(references):
        raise ContextualMTError(f"{o.reference}: has {len(references)} lines but {o.source} has {len(sources)}")
    ids = read_docids(o.docids)
    check_line_count(ids, o.docids, len(sources), o.source)
    summary = read_summary(o.tags)
    if summary is not None and summary.get("tgt_sha256") not in (None, text_hash(references)):
        raise ContextualMTError(
            f"{o.tags}: tags of another text (its summary's reference hash differs from "
            f"{o.reference}); tag this reference with `muda tag`"
        )
    if summary is not None and summary.get("language") not in (None, o.language.code):
        raise ContextualMTError(
            f"{o.tags}: tags for {summary['language']}, not {o.language.code} (its summary); tag "
            f"the reference with --tgt-lang {o.language.code}"
        )
    dump = read_tags(o.tags)
    flat = [sent for doc in dump for sent in doc]
    if len(flat) != len(references):
        raise ContextualMTError(f"{o.tags}: has {len(flat)} sentences but {o.reference} has {len(references)} lines")
    tgt_conllu = given(o.tgt_conllu, "--tgt-conllu")  # set when the options are built
    if not os.path.isfile(tgt_conllu):
        raise ContextualMTError(
            f"{tgt_conllu}: not found; testset build needs the reference's annotations "
            "(`muda tag` writes them beside the tags; or give --tgt-conllu)"
        )
    tgt = read_conllu(tgt_conllu)
    if len(tgt) != len(references):
        raise ContextualMTError(f"{tgt_conllu}: has {len(tgt)} sentences but {o.reference} has {len(references)} lines")
    for n, (sent, tags) in enumerate(zip(tgt, flat, strict=True), start=1):
        if [t.form for t in sent.tokens] != [t["token"] for t in tags]:
            raise ContextualMTError(
                f"{o.tags}: sentence {n}: its tokens are not those of {tgt_conllu} "
                "(tags and annotations of different runs)"
            )
    check_annotations_match(tgt, references, tgt_conllu, o.reference)  # of this very reference
    src = read_conllu(o.src_conllu) if o.src_conllu else None
    if src is not None and len(src) != len(sources):
        raise ContextualMTError(f"{o.src_conllu}: has {len(src)} sentences but {o.source} has {len(sources)} lines")
    align = read_pharaoh(o.alignments) if o.alignments else None
    if align is not None and len(align) != len(sources):
        raise ContextualMTError(f"{o.alignments}: has {len(align)} lines but {o.source} has {len(sources)}")
    return sources, references, ids, flat, tgt, src, align


def _build(o: BuildOptions, data) -> Dict:
    sources, references, ids, tags, tgt, src, align = data
    lexicon = Lexicon(tgt)
    for path in o.lexicon:
        lexicon.add(read_conllu(path))
    translations = _translation_table(src, tgt, align, sources)
    spans = document_spans(ids)
    doc_of = {i: (a, b) for a, b in spans for i in range(a, b)}
    corefs = (
        {a: CorefIndex(corefud_mentions(src[a:b], given(o.src_conllu, "--src-conllu"), a + 1)) for a, b in spans}
        if src
        else {}
    )
    rng = random.Random(o.seed)
    groups: List[Dict[str, Any]] = []
    counts: Dict[str, Counter] = defaultdict(Counter)
    for i, sent_tags in enumerate(tags):
        a, _b = doc_of[i]
        for j, tok in enumerate(sent_tags):
            for phenomenon in tok["tags"]:
                if phenomenon not in o.phenomena:
                    continue
                counts[phenomenon]["occurrences"] += 1
                outcome = _variants(
                    o, phenomenon, tgt[i], j, _aligned_sources(src, sources, align, i, j), lexicon, translations
                )
                made: List[Tuple[str, Any]] = []  # (text, variant)
                for v in outcome.variants:
                    text = apply(references[i], tgt[i], v.replaced)
                    if text is None:
                        made, outcome = [], Outcome(skipped="annotation does not match the text")
                        break
                    if text != references[i] and text not in [t for t, _ in made]:  # never the reference
                        made.append((text, v))
                if not made:
                    counts[phenomenon]["skipped: " + (outcome.skipped or "variant equals the reference")] += 1
                    continue
                counts[phenomenon]["groups"] += 1
                variants = [v for _, v in made]
                groups.append(
                    {
                        "group": len(groups),
                        "line": i + 1,
                        "doc": ids[i],
                        "sentence": i - a,
                        "phenomenon": phenomenon,
                        "position": j,
                        "word": tgt[i].tokens[j].form,
                        "alternatives": sorted({v.alternative for v in variants}),
                        "distance": _distance(o, phenomenon, i, a, j, tgt, corefs.get(a), align, src),
                        "variants": [
                            {"text": t, "replaced": [list(r) for r in v.replaced], "reason": v.reason} for t, v in made
                        ],
                        "_rng": rng.random(),
                    }
                )
    not_tagged = _not_tagged(o, read_summary(o.tags))
    said = (
        (
            f"{', '.join(not_tagged)} not tagged (for lack of "
            f"{', '.join(sorted(set().union(*map(set, not_tagged.values()))))})"
        )
        if not_tagged
        else ""
    )
    if not groups:  # empty suites would be refused by contrastive and evaluate, with their own hints
        tagged = "; ".join(
            f"{p} {counts[p]['occurrences']} tagged"
            + "".join(
                f", {n} skipped: {k[len('skipped: ') :]}"
                for k, n in sorted(counts[p].items())
                if k.startswith("skipped: ")
            )
            for p in o.phenomena
            if p not in not_tagged
        )
        raise ContextualMTError(
            f"{o.tags}: no test group for {', '.join(o.phenomena)} ("
            + "; ".join(x for x in (tagged, said) if x)
            + "); nothing written",
            code=Code.EMPTY,
        )
    if not_tagged:  # no groups for them means "not tagged", not "nothing to test"
        logger.warning("%s: %s: no test suite for %s", o.tags, said, "them" if len(not_tagged) > 1 else "it")
    _write(o, groups, sources, references, ids, doc_of, counts)
    extra = build_suite(o, data, lexicon, translations, corefs, groups) if o.counterfactual else None
    return _summary(o, groups, counts, references, extra)


def _variants(o, phenomenon, sent, j, sources, lexicon, translations) -> Outcome:
    if phenomenon in ("pronouns", "formality"):
        return closed_variants(sent, j, phenomenon, o.table, lexicon)
    if phenomenon == "verb_form":
        return verb_form_variants(sent, j, set(o.language.verb_forms), lexicon)
    if translations is None:
        return Outcome(skipped="no word alignments")
    return cohesion_variants(sent, j, sources, translations, lexicon)


def _aligned_sources(src, sources, align, i: int, j: int) -> List[str]:
    if align is None:
        return []
    words = [t.form for t in src[i].tokens] if src is not None else sources[i].split()
    return [words[s] for s, t in sorted(align[i]) if t == j and s < len(words)]


def _translation_table(src, tgt, align, sources) -> Optional[Dict[str, Counter]]:
    """Source word -> target forms aligned to it in the corpus, with counts."""
    if align is None:
        return None
    table: Dict[str, Counter] = defaultdict(Counter)
    for i, pairs in enumerate(align):
        words = [t.form for t in src[i].tokens] if src is not None else sources[i].split()
        for s, t in pairs:
            if s < len(words) and t < len(tgt[i].tokens) and len(tgt[i].tokens[t].words) == 1:
                table[words[s].lower()][tgt[i].tokens[t].form.lower()] += 1
    return table


def _lemmas(sent: Sentence) -> set:
    return {(w.lemma if w.lemma not in ("", "_") else w.form).lower() for w in sent.words}


def _distance(o, phenomenon, i, a, j, tgt, coref, align, src) -> Optional[int]:
    """Sentences back to what decides the word: the antecedent (pronouns, by source
    coreference), the last word of the same formality level, the last verb of the same tense,
    the last occurrence of the same lemma; None when it is not found."""
    word = tgt[i].tokens[j].words[0]
    for k in range(i - 1, a - 1, -1):
        if phenomenon == "formality":
            f = o.language.formality
            level = f.level(word.form)
            if level and any(f.level(t.form) == level for t in tgt[k].tokens):
                return i - k
        elif phenomenon == "verb_form":
            tense = word.feats.get("Tense")
            if any(w.upos in ("VERB", "AUX") and w.feats.get("Tense") == tense for w in tgt[k].words):
                return i - k
        elif phenomenon == "lexical_cohesion" and (
            word.lemma if word.lemma not in ("", "_") else word.form
        ).lower() in _lemmas(tgt[k]):
            return i - k
    if phenomenon == "pronouns" and coref is not None and align is not None:
        for s, t in sorted(align[i]):
            if t == j:
                m = coref.mention_at(i - a, s)
                ante = coref.antecedent(m) if m else None
                if ante is not None:
                    return i - a - ante.sentence
    return None


def _write(o: BuildOptions, groups: List[Dict], sources, references, ids, doc_of, counts) -> None:
    voita, contrapro, manifest = [], [], []
    text_en, text_xx, ctx_en, ctx_xx = [], [], [], []
    for g in groups:
        i = g["line"] - 1
        a, _ = doc_of[i]
        first = max(a, i - o.context_size)
        src_ctx, tgt_ctx = sources[first:i], references[first:i]
        candidates = [references[i]] + [v["text"] for v in g["variants"]]
        true_ind = int(g.pop("_rng") * len(candidates))
        order = [*candidates[1 : true_ind + 1], candidates[0], *candidates[true_ind + 1 :]]
        voita.append(
            {
                "src": SEPARATOR.join([*src_ctx, sources[i]]),
                "dst": [SEPARATOR.join([*tgt_ctx, c]) for c in order],
                "true_ind": true_ind,
                "ctx_dist": g["distance"],
                "phenomenon": g["phenomenon"],
                "line": g["line"],
            }
        )
        contrapro.append(
            {
                "document id": ids[i],
                "segment id": g["sentence"] + 1,
                "src segment": sources[i],
                "ref segment": references[i],
                "src pronoun": None,
                "ref pronoun": g["word"],
                "ante distance": g["distance"] if g["distance"] is not None else -1,
                "intrasegmental": False,
                "phenomenon": g["phenomenon"],
                "errors": [{"contrastive": v["text"], "replacement": v["replaced"][0][2]} for v in g["variants"]],
            }
        )
        pad = [""] * (o.context_size - len(src_ctx))  # the script's empty lines before a document's start
        for c in candidates:
            text_en.append(sources[i])
            text_xx.append(c)
            ctx_en.extend(pad + src_ctx)
            ctx_xx.extend(pad + tgt_ctx)
        manifest.append(json.dumps(g, ensure_ascii=False))
    d, lang = o.output_dir, o.language.code
    atomic_write_text(os.path.join(d, "voita.json"), json.dumps(voita, ensure_ascii=False, indent=1) + "\n")
    atomic_write_text(os.path.join(d, "contrapro.json"), json.dumps(contrapro, ensure_ascii=False, indent=1) + "\n")
    for name, lines in (
        ("contrapro.text.en", text_en),
        (f"contrapro.text.{lang}", text_xx),
        ("contrapro.context.en", ctx_en),
        (f"contrapro.context.{lang}", ctx_xx),
    ):
        atomic_write_lines(os.path.join(d, name), lines)
    atomic_write_lines(os.path.join(d, "manifest.jsonl"), manifest)


def _not_tagged(o: BuildOptions, summary: Optional[Dict]) -> Dict[str, List[str]]:
    """The phenomena asked for that `muda tag` skipped (its summary), with what they lacked."""
    return {p: m for p, m in skipped_phenomena(summary).items() if p in o.phenomena}


def _summary(o: BuildOptions, groups: List[Dict], counts, references, counterfactual: Optional[Dict] = None) -> Dict:
    summary = {
        "language": o.language.code,
        "source": o.source,
        "reference": o.reference,
        "docids": o.docids,
        "tags": o.tags,
        "reference_sha256": file_sha256(o.reference),
        "lines": len(references),
        "context_size": o.context_size,
        "seed": o.seed,
        "groups": len(groups),
        "candidates": sum(1 + len(g["variants"]) for g in groups),
        "phenomena": {p: dict(sorted(counts[p].items())) for p in o.phenomena if counts[p]},
    }
    not_tagged = _not_tagged(o, read_summary(o.tags))
    if not_tagged:
        summary["not_tagged"] = not_tagged
    if counterfactual is not None:
        summary["counterfactual"] = counterfactual
    atomic_write_text(
        os.path.join(o.output_dir, "summary.json"), json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    )
    return summary


def summary_lines(summary: Dict) -> List[str]:
    lines = [f"{summary['groups']} groups ({summary['candidates']} candidates) from {summary['reference']}"]
    for p, c in summary["phenomena"].items():
        skipped = {k[len("skipped: ") :]: v for k, v in c.items() if k.startswith("skipped: ")}
        lines.append(
            f"  {p:17s} {c.get('occurrences', 0):5d} tagged, {c.get('groups', 0):5d} groups"
            + (", skipped: " + "; ".join(f"{k} {v}" for k, v in skipped.items()) if skipped else "")
        )
    return lines
