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
from typing import Any, Callable, Dict, List, Optional, Tuple

from commandkit.documents import check_line_count, document_spans, read_docids
from commandkit.options import check_required, option
from commandkit.outputs import atomic_write_lines, atomic_write_text, outputs
from commandkit.text import check_input_file, file_sha256, read_lines
from contextual_mt.errors import Code, InputError, check_number, given
from contextual_mt.inference.model_args import overwrite_option
from contextual_mt.testsets import alternatives
from contextual_mt.testsets.counterfactual import FOLDER as COUNTERFACTUAL
from contextual_mt.testsets.counterfactual import build_suite
from contextual_mt.testsets.counterfactual import output_names as counterfactual_names
from contextual_mt.testsets.lexicon import Lexicon
from contextual_mt.testsets.variants import Outcome, apply, closed_variants, cohesion_variants, verb_form_variants
from muda.annotation import Sentence
from muda.commands.options import ANNOTATORS, DEFAULT_ANNOTATOR, cache_dir_option
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
    """``contextual-mt testset build``: the suites of a tagged parallel document corpus (without
    ``tags``, the reference is tagged first, by ``muda tag``, into OUTPUT_DIR/reference.tags.json:
    ``tag_reference``). The first six fields keep the order of positional callers; the command
    line lists them in its own (``after``)."""

    source: str = option(required=True, help="English source, one sentence per line")
    reference: str = option(required=True, help="the reference translation, line by line")
    docids: str = option(required=True, help="document id of each line")
    # `muda tag` output for these files (its annotations beside it unless given); set when the
    # options are built: None is OUTPUT_DIR/reference.tags.json, tagged first (``tags_ready``)
    tags: str = option(
        after="output_dir",
        help="`muda tag` output for these files (its annotations beside it); default: tag "
        "the reference now (into OUTPUT_DIR/reference.tags.json) with --annotator",
    )
    output_dir: str = option(
        required=True,
        help="folder for voita.json, contrapro.json (+ text and context files), manifest.jsonl and summary.json",
    )
    lang: str = option(required=True, after="docids", help="target language (MuDA's code: fr, de, ...)")
    # without tags: what annotates the reference (muda tag's --annotator; its default, muda's)
    annotator: str = option(
        choices=ANNOTATORS,
        default=DEFAULT_ANNOTATOR,
        help="without --tags: what annotates the reference (spacy: target morphology only, so "
        "pronouns and lexical cohesion need --src-conllu/--alignments)",
    )
    tgt_conllu: Optional[str] = option(help="the reference's CoNLL-U (default: beside the tags)")
    # default: the tags file's .src.conllu (coreference: pronoun distances)
    src_conllu: Optional[str] = option(help="the source's CoNLL-U with CorefUD coreference (pronoun distances)")
    # default: the tags file's .align (lexical cohesion)
    alignments: Optional[str] = option(help="Pharaoh source-target word alignments (lexical cohesion)")
    cache_dir: Optional[str] = cache_dir_option()
    # more target CoNLL-U (e.g. the training split) to find agreeing forms in (None: none)
    lexicon: Tuple[str, ...] = option(
        nargs="+",
        metavar="CONLLU",
        help="more target CoNLL-U (e.g. the training split) where agreeing word forms are looked up",
    )
    phenomena: Tuple[str, ...] = option(nargs="+", choices=PHENOMENA, help="default: all")  # None: all
    # context sentences written with each group (Voita's sets: 3)
    context_size: int = option(
        default=3, help="context sentences written with each group (default %(default)s, as Voita's sets)"
    )
    seed: int = option(default=1, help="places the reference among the candidates")  # where it goes
    # also the counterfactual context suites (testsets.counterfactual)
    counterfactual: bool = option(
        action="store_true",
        default=False,
        help="also OUTPUT_DIR/counterfactual: each group with a known cue edited (cue flipped, a control word "
        "changed, the cue moved back, a distractor added), for `contrastive`, `testset evaluate` and `testset cues`",
    )
    # counterfactual: cues moved up to this many sentences back (None: context_size + 2)
    max_shift: Optional[int] = option(
        help="--counterfactual: the cue moved 1..N sentences further back (default: --context-size + 2)"
    )
    # remove what an earlier build left in output_dir that this one does not write
    overwrite: bool = overwrite_option(
        "remove the files an earlier build left in OUTPUT_DIR that this one does not "
        "write (its tags, another language's), instead of refusing the folder"
    )

    def __post_init__(self) -> None:
        check_required(self)
        self.lexicon = tuple(self.lexicon or ())
        self.phenomena = PHENOMENA if self.phenomena is None else tuple(self.phenomena)
        self.tags_ready = self.tags is not None  # else tagged first, into the output folder (tag_reference)
        if self.tags is None:
            self.tags = os.path.join(self.output_dir, "reference.tags.json")
        check_number("--context-size", self.context_size, minimum=0, maximum=100, integer=True)
        check_number("--seed", self.seed, minimum=0, integer=True)
        if self.max_shift is not None and not self.counterfactual:
            raise InputError("--max-shift: applies with --counterfactual only", code=Code.OPTIONS_CONFLICT)
        self.max_shift_given = self.max_shift is not None  # else the default, named as such in errors
        if self.max_shift is None:
            self.max_shift = self.context_size + 2
        check_number("--max-shift", self.max_shift, minimum=0, maximum=100, integer=True)
        unknown = set(self.phenomena) - set(PHENOMENA)
        if unknown:
            raise InputError(
                f"--phenomena: {', '.join(sorted(unknown))} has no test suite (phenomena: {', '.join(PHENOMENA)})",
                code=Code.OPTION_VALUE,
            )
        self.language = get_language(self.lang)  # a language MuDA does not cover: one line
        self.table = alternatives.load(self.language.code)
        if os.path.exists(self.output_dir) and not os.path.isdir(self.output_dir):
            raise InputError(f"--output-dir {self.output_dir}: is a file, not a folder", code=Code.CANNOT_WRITE)
        self.stale = stale_files(self.output_dir, self.language.code, self.tags, self.counterfactual)
        if self.stale and not self.overwrite:  # before anything is annotated or written
            raise InputError(
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
                raise InputError(
                    f"--max-shift {self.max_shift}{default}: beyond the longest document of {self.docids} ({longest} "
                    f"sentences): no document puts a cue that far back; give --max-shift {longest} or less",
                    code=Code.OPTION_VALUE,
                )
        if self.tags_ready:  # else once the reference is tagged (tag_reference)
            self.find_annotations()

    def find_annotations(self) -> None:
        """The annotations not given, beside the tags: the reference's CoNLL-U always, the
        source's and the alignments when they are there (again after ``tag_reference``)."""
        beside = annotation_paths(self.tags)
        self.tgt_conllu = self.tgt_conllu or beside["tgt_conllu"]
        if self.src_conllu is None and os.path.isfile(beside["src_conllu"]):
            self.src_conllu = beside["src_conllu"]
        if self.alignments is None and os.path.isfile(beside["alignments"]):
            self.alignments = beside["alignments"]


def tag_reference(options: BuildOptions, tag: Optional[Callable[[Any], Any]] = None) -> Any:
    """``muda tag`` of the reference, in this process, into ``options.tags`` in the output folder
    (made here, and removed again on failure when it was), then the annotations it wrote found
    beside the tags. ``tag``: what runs muda's ``TagOptions`` (default ``muda.api.tag``, which
    returns its summary, returned here; the command line gives muda's command, which prints it)."""
    import shutil

    from muda import api as muda_api
    from muda.commands.options import AnnotatorOptions
    from muda.tagger import TagOptions

    tag_args = TagOptions(
        src=options.source,
        tgt=options.reference,
        docids=options.docids,
        tgt_lang=options.lang,
        dump_tags=options.tags,
        src_conllu=options.src_conllu,
        tgt_conllu=options.tgt_conllu,
        alignments=options.alignments,
        annotators=AnnotatorOptions(annotator=options.annotator, cache_dir=options.cache_dir),
    )
    created = not os.path.exists(options.output_dir)
    try:
        os.makedirs(options.output_dir, exist_ok=True)
    except OSError as e:  # a file on the way (out/afile/sub)
        raise InputError(
            f"--output-dir {options.output_dir}: cannot be made ({e.strerror})", code=Code.CANNOT_WRITE
        ) from None
    try:
        made = (tag or muda_api.tag)(tag_args)
    except BaseException:
        if created:
            shutil.rmtree(options.output_dir, ignore_errors=True)
        raise
    options.tags_ready = True
    options.find_annotations()
    return made


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
    paths = [os.path.join(options.output_dir, n) for n in output_names(options.language.code, options.counterfactual)]
    inputs = {
        os.path.realpath(p): p
        for p in (
            options.source,
            options.reference,
            options.docids,
            options.tags,
            options.tgt_conllu,
            options.src_conllu,
            options.alignments,
            *options.lexicon,
        )
        if p
    }
    for path in paths:
        if os.path.realpath(path) in inputs:
            raise InputError(
                f"--output-dir {options.output_dir}: {os.path.basename(path)} would overwrite the "
                f"input {inputs[os.path.realpath(path)]}; choose another folder",
                code=Code.OUTPUT_IS_INPUT,
            )
    # the folder is made by the transaction: removed again, with everything else, on any failure
    folders = [options.output_dir] + (
        [os.path.join(options.output_dir, COUNTERFACTUAL)] if options.counterfactual else []
    )
    with outputs(*paths, directories=folders):
        summary = _build(options, _read(options))
    for path in options.stale:  # --overwrite: what an earlier build left that would pass for this one's
        os.remove(path)
    left = os.path.join(options.output_dir, COUNTERFACTUAL)
    if options.stale and not options.counterfactual and os.path.isdir(left) and not os.listdir(left):
        os.rmdir(left)  # the earlier build's counterfactual folder, emptied: not a suite any more
    return summary


def _read(options: BuildOptions):
    sources, references = read_lines(options.source), read_lines(options.reference)
    if len(sources) != len(references):
        raise InputError(
            f"{options.reference}: has {len(references)} lines but {options.source} has {len(sources)}",
            code=Code.LINE_COUNT,
        )
    ids = read_docids(options.docids)
    check_line_count(ids, options.docids, len(sources), options.source)
    summary = read_summary(options.tags)
    if summary is not None and summary.get("tgt_sha256") not in (None, text_hash(references)):
        raise InputError(
            f"{options.tags}: tags of another text (its summary's reference hash differs from "
            f"{options.reference}); tag this reference with `muda tag`",
            code=Code.MISMATCH,
        )
    if summary is not None and summary.get("language") not in (None, options.language.code):
        raise InputError(
            f"{options.tags}: tags for {summary['language']}, not {options.language.code} (its summary); tag "
            f"the reference with --tgt-lang {options.language.code}",
            code=Code.MISMATCH,
        )
    dump = read_tags(options.tags)
    flat = [sent for doc in dump for sent in doc]
    if len(flat) != len(references):
        raise InputError(
            f"{options.tags}: has {len(flat)} sentences but {options.reference} has {len(references)} lines",
            code=Code.LINE_COUNT,
        )
    tgt_conllu = given(options.tgt_conllu, "--tgt-conllu")  # set when the options are built
    if not os.path.isfile(tgt_conllu):
        raise InputError(
            f"{tgt_conllu}: not found; testset build needs the reference's annotations "
            "(`muda tag` writes them beside the tags; or give --tgt-conllu)",
            code=Code.NOT_FOUND,
        )
    tgt = read_conllu(tgt_conllu)
    if len(tgt) != len(references):
        raise InputError(
            f"{tgt_conllu}: has {len(tgt)} sentences but {options.reference} has {len(references)} lines",
            code=Code.LINE_COUNT,
        )
    for n, (sent, tags) in enumerate(zip(tgt, flat, strict=True), start=1):
        if [t.form for t in sent.tokens] != [t["token"] for t in tags]:
            raise InputError(
                f"{options.tags}: sentence {n}: its tokens are not those of {tgt_conllu} "
                "(tags and annotations of different runs)",
                code=Code.MISMATCH,
            )
    check_annotations_match(tgt, references, tgt_conllu, options.reference)  # of this very reference
    src = read_conllu(options.src_conllu) if options.src_conllu else None
    if src is not None and len(src) != len(sources):
        raise InputError(
            f"{options.src_conllu}: has {len(src)} sentences but {options.source} has {len(sources)} lines",
            code=Code.LINE_COUNT,
        )
    align = read_pharaoh(options.alignments) if options.alignments else None
    if align is not None and len(align) != len(sources):
        raise InputError(
            f"{options.alignments}: has {len(align)} lines but {options.source} has {len(sources)}",
            code=Code.LINE_COUNT,
        )
    return sources, references, ids, flat, tgt, src, align


def _build(options: BuildOptions, data) -> Dict:
    sources, references, ids, tags, tgt, src, align = data
    lexicon = Lexicon(tgt)
    for path in options.lexicon:
        lexicon.add(read_conllu(path))
    translations = _translation_table(src, tgt, align, sources)
    spans = document_spans(ids)
    doc_of = {i: (a, b) for a, b in spans for i in range(a, b)}
    corefs = (
        {a: CorefIndex(corefud_mentions(src[a:b], given(options.src_conllu, "--src-conllu"), a + 1)) for a, b in spans}
        if src
        else {}
    )
    rng = random.Random(options.seed)
    groups: List[Dict[str, Any]] = []
    counts: Dict[str, Counter] = defaultdict(Counter)
    for i, sent_tags in enumerate(tags):
        a, _b = doc_of[i]
        for j, tok in enumerate(sent_tags):
            for phenomenon in tok["tags"]:
                if phenomenon not in options.phenomena:
                    continue
                counts[phenomenon]["occurrences"] += 1
                outcome = _variants(
                    options, phenomenon, tgt[i], j, _aligned_sources(src, sources, align, i, j), lexicon, translations
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
                        "distance": _distance(options, phenomenon, i, a, j, tgt, corefs.get(a), align, src),
                        "variants": [
                            {"text": t, "replaced": [list(r) for r in v.replaced], "reason": v.reason} for t, v in made
                        ],
                        "_rng": rng.random(),
                    }
                )
    not_tagged = _not_tagged(options, read_summary(options.tags))
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
            for p in options.phenomena
            if p not in not_tagged
        )
        raise InputError(
            f"{options.tags}: no test group for {', '.join(options.phenomena)} ("
            + "; ".join(x for x in (tagged, said) if x)
            + "); nothing written",
            code=Code.EMPTY,
        )
    if not_tagged:  # no groups for them means "not tagged", not "nothing to test"
        logger.warning("%s: %s: no test suite for %s", options.tags, said, "them" if len(not_tagged) > 1 else "it")
    _write(options, groups, sources, references, ids, doc_of, counts)
    extra = build_suite(options, data, lexicon, translations, corefs, groups) if options.counterfactual else None
    return _summary(options, groups, counts, references, extra)


def _variants(options, phenomenon, sent, j, sources, lexicon, translations) -> Outcome:
    if phenomenon in ("pronouns", "formality"):
        return closed_variants(sent, j, phenomenon, options.table, lexicon)
    if phenomenon == "verb_form":
        return verb_form_variants(sent, j, set(options.language.verb_forms), lexicon)
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


def _distance(options, phenomenon, i, a, j, tgt, coref, align, src) -> Optional[int]:
    """Sentences back to what decides the word: the antecedent (pronouns, by source
    coreference), the last word of the same formality level, the last verb of the same tense,
    the last occurrence of the same lemma; None when it is not found."""
    word = tgt[i].tokens[j].words[0]
    for k in range(i - 1, a - 1, -1):
        if phenomenon == "formality":
            f = options.language.formality
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


def _write(options: BuildOptions, groups: List[Dict], sources, references, ids, doc_of, counts) -> None:
    voita, contrapro, manifest = [], [], []
    text_en, text_xx, ctx_en, ctx_xx = [], [], [], []
    for g in groups:
        i = g["line"] - 1
        a, _ = doc_of[i]
        first = max(a, i - options.context_size)
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
        pad = [""] * (options.context_size - len(src_ctx))  # the script's empty lines before a document's start
        for c in candidates:
            text_en.append(sources[i])
            text_xx.append(c)
            ctx_en.extend(pad + src_ctx)
            ctx_xx.extend(pad + tgt_ctx)
        manifest.append(json.dumps(g, ensure_ascii=False))
    d, lang = options.output_dir, options.language.code
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


def _not_tagged(options: BuildOptions, summary: Optional[Dict]) -> Dict[str, List[str]]:
    """The phenomena asked for that `muda tag` skipped (its summary), with what they lacked."""
    return {p: m for p, m in skipped_phenomena(summary).items() if p in options.phenomena}


def _summary(
    options: BuildOptions, groups: List[Dict], counts, references, counterfactual: Optional[Dict] = None
) -> Dict:
    summary = {
        "language": options.language.code,
        "source": options.source,
        "reference": options.reference,
        "docids": options.docids,
        "tags": options.tags,
        "reference_sha256": file_sha256(options.reference),
        "lines": len(references),
        "context_size": options.context_size,
        "seed": options.seed,
        "groups": len(groups),
        "candidates": sum(1 + len(g["variants"]) for g in groups),
        "phenomena": {p: dict(sorted(counts[p].items())) for p in options.phenomena if counts[p]},
    }
    not_tagged = _not_tagged(options, read_summary(options.tags))
    if not_tagged:
        summary["not_tagged"] = not_tagged
    if counterfactual is not None:
        summary["counterfactual"] = counterfactual
    atomic_write_text(
        os.path.join(options.output_dir, "summary.json"), json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
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
