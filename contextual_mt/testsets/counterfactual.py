"""Counterfactual context suites (``testset build --counterfactual``): does a model follow the cue?

For every group of the build whose cue is known (the antecedent of a pronoun, through source
coreference and the word alignments; the last earlier word of the same T-V level for formality;
the earlier mention of the same lemma for lexical cohesion), the context is cut to the cue's
sentence and the sentences between it and the tagged one, and edited:

- ``original``: unedited (the baseline every other edit is paired with);
- ``cue_flip``: the cue changed so that the correct target changes: the antecedent noun replaced,
  on both sides, by a noun of the other gender from the corpus's aligned lexicon (its determiners,
  adjectives and predicate following it, as the corpus shows their forms); the T-V word switched (its verb
  agreeing); the earlier mention replaced by the other translation. The expected target is then
  the group's variant (no flip when another T-V word or mention would keep the old cue);
- ``control``: another word of the cue's sentence (same part of speech and features, so nothing
  agrees differently) replaced on both sides by another lemma from the corpus: the correct target
  must not change;
- ``distance``: the cue moved 1..``max_shift`` sentences further back by inserting neutral
  sentences (no noun, no T-V word, no tagged word) taken from other documents of the corpus;
- ``distractor`` (pronouns): a sentence of another document with one noun of the other gender
  inserted between the cue and the tagged sentence; the expected target stays the original.

Every edit is a two-candidate group (the reference sentence and the variant that the flip makes
correct), written in Voita's format (``contrastive --format voita``), as a manifest that
``testset evaluate`` reads (its ``word`` is the expected form), and as documents (``source.en``,
``reference.xx``, ``docids``: the context and the current sentence of each edit, the reference
holding the expected translation) that ``translate --gold-target-context`` translates. An edit
that cannot be made cleanly is skipped and counted by reason; nothing is guessed.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from commandkit.documents import document_spans
from commandkit.outputs import atomic_write_lines, atomic_write_text
from contextual_mt.errors import Code, InputError
from contextual_mt.testsets.lexicon import Lexicon
from contextual_mt.testsets.suite_files import FILES_KEY, hashes
from contextual_mt.testsets.variants import VOWELS, _cased, apply, closed_variants
from muda.annotation import Sentence, Word

FOLDER = "counterfactual"
EDITS = ("original", "cue_flip", "control", "distance", "distractor")
OTHER_GENDER = {"Masc": "Fem", "Fem": "Masc"}
CONTROL_POS = ("NOUN", "VERB", "ADJ", "ADV")
NEUTRAL_MAX_TOKENS = 15
DOMINANT = 0.9  # a replacement noun's translation: at least this share of its aligned forms


def output_names(lang: str) -> List[str]:
    """The files of the suite, relative to the build's output folder."""
    return [
        os.path.join(FOLDER, n) for n in ("voita.json", "manifest.jsonl", "summary.json", "source.en", "docids")
    ] + [os.path.join(FOLDER, f"reference.{lang}")]


@dataclass(frozen=True)
class Cue:
    sentence: int  # 0-based line of the cue's sentence
    token: int  # its target token


@dataclass
class Edit:
    kind: str
    source: List[str]  # context sentences
    target: List[str]
    expected: int  # 0: the reference sentence, 1: the group's variant
    distance: int
    shift: int = 0
    changed: List[Dict[str, Any]] = field(default_factory=list)
    inserted: List[str] = field(default_factory=list)


class Skip(Exception):
    """An edit (or a group) that cannot be made cleanly: its reason is counted."""


def _lemma(w: Word) -> str:
    return (w.lemma if w.lemma not in ("", "_") else w.form).lower()


def _single(sent: Sentence, t: int) -> Word:
    tok = sent.tokens[t]
    if len(tok.words) != 1:
        raise Skip("multi-word token")
    return tok.words[0]


class SuiteBuilder:
    """What the edits draw on, read once from the build's inputs."""

    def __init__(
        self,
        o: Any,  # BuildOptions (build.py imports this module)
        sources: List[str],
        references: List[str],
        ids: List[str],
        tags: List[Any],
        tgt: List[Sentence],
        src: Optional[List[Sentence]],
        align: Optional[List[Any]],
        corefs: Dict[int, Any],
        lexicon: Lexicon,
        translations: Optional[Dict[str, Counter]],
    ) -> None:
        self.o, self.sources, self.references, self.ids = o, sources, references, ids
        self.tags, self.tgt, self.src, self.align, self.corefs = tags, tgt, src, align, corefs
        self.lexicon, self.translations = lexicon, translations or {}
        self.formality = o.language.formality
        self.doc_of = {i: (a, b) for a, b in document_spans(ids) for i in range(a, b)}
        self.rng = random.Random(o.seed)
        self.reverse: Dict[str, Counter] = defaultdict(Counter)  # target form -> source words
        for s, forms in self.translations.items():
            for form, n in forms.items():
                self.reverse[form][s] += n
        self.nouns = self._noun_pool()
        self.by_feats: Dict[Tuple[str, frozenset], Dict[str, str]] = defaultdict(dict)  # (upos, feats) -> lemma: form
        for (lemma, upos, feats), forms in sorted(lexicon.forms.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            self.by_feats[(upos, feats)].setdefault(lemma, forms.most_common(1)[0][0])
        self.neutral, self.single_noun = self._sentence_pools()

    # ------------------------------------------------------------------ pools
    def _noun_pool(self) -> Dict[Tuple[str, str], List[Tuple[str, str]]]:
        """(gender, number) -> (source noun, its dominant target noun), from the aligned corpus."""
        pool: Dict[Tuple[str, str], List[Tuple[str, str]]] = defaultdict(list)
        for s, forms in sorted(self.translations.items()):
            form, n = forms.most_common(1)[0]
            if not s.isalpha() or n < DOMINANT * sum(forms.values()):
                continue
            feats = self.lexicon.feats_of(form, "NOUN")
            if feats and feats.get("Gender") in OTHER_GENDER:
                pool[(feats["Gender"], feats.get("Number", ""))].append((s, form))
        return pool

    def _sentence_pools(self) -> Tuple[List[int], Dict[Tuple[str, str], List[int]]]:
        """Neutral sentences (no noun in the target, no T-V word, no tag) and sentences with one gendered noun
        and nothing else that is tagged, as line indices."""
        neutral: List[int] = []
        single: Dict[Tuple[str, str], List[int]] = defaultdict(list)
        for i, sent in enumerate(self.tgt):
            if any(t["tags"] for t in self.tags[i]) or len(sent.tokens) > NEUTRAL_MAX_TOKENS:
                continue
            if self.formality and any(self.formality.level(t.form) for t in sent.tokens):
                continue
            nouns = [w for w in sent.words if w.upos in ("NOUN", "PROPN")]
            if not nouns:
                neutral.append(i)
            elif len(nouns) == 1 and nouns[0].feats.get("Gender") in OTHER_GENDER:
                single[(nouns[0].feats["Gender"], nouns[0].feats.get("Number", ""))].append(i)
        return neutral, single

    def _draw(self, pool: Sequence[int], doc: str, n: int) -> List[int]:
        """``n`` sentences of other documents than ``doc``, each distinct text as likely."""
        distinct: Dict[Tuple[str, str], int] = {}
        for i in pool:
            if self.ids[i] != doc:
                distinct.setdefault((self.sources[i], self.references[i]), i)
        others = list(distinct.values())
        if not others:
            raise Skip("no sentence of another document to insert")
        return [self.rng.choice(others) for _ in range(n)]

    # ------------------------------------------------------------------ cues
    def cue(self, g: Dict) -> Cue:
        i, j, phenomenon = g["line"] - 1, g["position"], g["phenomenon"]
        a, _ = self.doc_of[i]
        word = self.tgt[i].tokens[j].words[0]
        if phenomenon == "pronouns":
            return self._antecedent(i, a, j)
        for k in range(i - 1, a - 1, -1):
            for c, tok in enumerate(self.tgt[k].tokens):
                if phenomenon == "formality" and self.formality.level(tok.form) == self.formality.level(word.form):
                    return Cue(k, c)
                if phenomenon == "lexical_cohesion" and len(tok.words) == 1 and _lemma(tok.words[0]) == _lemma(word):
                    return Cue(k, c)
        if phenomenon == "verb_form":
            raise Skip("no cue edit for verb forms (the tense cue is not one word)")
        raise Skip("no earlier cue in the document")

    def _antecedent(self, i: int, a: int, j: int) -> Cue:
        coref = self.corefs.get(a)
        if coref is None or self.align is None:
            raise Skip("no source coreference and alignments")
        for s, t in sorted(self.align[i]):
            if t != j:
                continue
            m = coref.mention_at(i - a, s)
            ante = coref.antecedent(m) if m else None
            if ante is None or a + ante.sentence >= i:
                continue
            k = a + ante.sentence
            aligned = sorted({t2 for s2, t2 in self.align[k] if ante.start <= s2 <= ante.end})
            nouns = [
                t2 for t2 in aligned if t2 < len(self.tgt[k].tokens) and self.tgt[k].tokens[t2].words[0].upos == "NOUN"
            ]
            if len(nouns) != 1:
                raise Skip("the antecedent is not one aligned noun")
            return Cue(k, nouns[0])
        raise Skip("no antecedent in an earlier sentence")

    # ------------------------------------------------------------------ helpers
    def _source_index(self, k: int, t: int) -> int:
        """The one source token aligned to target token t of line k (and to nothing else)."""
        pairs = self.align[k] if self.align is not None else []
        sources = [s for s, t2 in pairs if t2 == t]
        if len(sources) != 1 or len([s2 for s2, _ in pairs if s2 == sources[0]]) != 1:
            raise Skip("the word is not aligned one to one")
        return sources[0]

    def _source_word(self, k: int, s: int) -> str:
        words = [t.form for t in self.src[k].tokens] if self.src is not None else self.sources[k].split()
        return words[s] if 0 <= s < len(words) else ""

    def _replace_source(self, k: int, s: int, new: str) -> Tuple[str, str]:
        text = self.sources[k]
        if self.src is not None:
            old = self.src[k].tokens[s].form
            out = apply(text, self.src[k], [(s, old, _cased(old, new))])
        else:
            words = text.split()
            old = words[s] if s < len(words) else ""
            out = " ".join([*words[:s], _cased(old, new), *words[s + 1 :]]) if s < len(words) else None
        if out is None:
            raise Skip("annotation does not match the text")
        return old, out

    def _replace_target(self, k: int, replaced: List[Tuple[int, str, str]]) -> str:
        out = apply(self.references[k], self.tgt[k], replaced)
        if out is None:
            raise Skip("annotation does not match the text")
        return out

    def _elides(self, sent: Sentence, w: Word, forms: Sequence[str]) -> bool:
        """A determiner before a noun whose first letter may elide it (l'arbre): not edited."""
        has_det = any(x.head == w.id and x.upos == "DET" for x in sent.words)
        return has_det and any(f[:1].lower() in VOWELS + "h" for f in forms)

    # ------------------------------------------------------------------ edits
    def contrast(self, g: Dict, cue: Cue) -> int:
        """The variant (index into g's variants) the cue flip makes correct."""
        if g["phenomenon"] != "pronouns":
            return 0
        w = self.tgt[cue.sentence].tokens[cue.token].words[0]
        gender = OTHER_GENDER.get(w.feats.get("Gender", ""))
        if gender is None:
            raise Skip("the antecedent has no masculine or feminine gender")
        swaps = self.o.table.get("pronouns").get(g["word"].lower(), ())
        wanted = {s.alternative.lower() for s in swaps if dict(s.changes) == {"Gender": gender}}
        for n, v in enumerate(g["variants"]):
            if v["replaced"][0][2].lower() in wanted:
                return n
        raise Skip("no variant of the other gender")

    def flip(self, g: Dict, cue: Cue, src: List[str], tgt: List[str]) -> Edit:
        k, d = cue.sentence, g["line"] - 1 - cue.sentence
        sent = self.tgt[k]
        changed: List[Dict[str, Any]] = []
        if g["phenomenon"] == "pronouns":
            w = _single(sent, cue.token)
            gender, number = OTHER_GENDER[w.feats["Gender"]], w.feats.get("Number", "")
            pool = [p for p in self.nouns.get((gender, number), []) if p[1] != w.form.lower()]
            if not pool:
                raise Skip("no noun of the other gender in the aligned lexicon")
            if self._elides(sent, w, (w.form,)):
                raise Skip("elision before the noun")
            pool = [p for p in pool if not self._elides(sent, w, (p[1],))]
            if not pool:
                raise Skip("elision before every noun of the other gender")
            s = self._source_index(k, cue.token)
            article = self._source_word(k, s - 1).lower() if s > 0 else ""
            if article in ("a", "an"):  # an apple -> a garden, never an garden: the nouns the article fits
                pool = [p for p in pool if (p[0][:1].lower() in "aeiou") == (article == "an")]
                if not pool:
                    raise Skip(f"no noun of the other gender after '{article}' in the source")
            new_src, new_tgt = self.rng.choice(pool)
            replaced = [(cue.token, w.form, _cased(w.form, new_tgt))]
            token_of = {x.id: t for t, tok in enumerate(sent.tokens) for x in tok.words}
            for x in sent.words:
                # its determiners and adjectives (and participles), and the predicate it is the subject of
                # (la maison est grande -> le jardin est grand): each would be a cue of the old gender
                modifier = x.head == w.id and x.upos in ("DET", "ADJ", "VERB")
                predicate = x.id == w.head and w.deprel.split(":")[0] == "nsubj" and x.upos in ("ADJ", "VERB")
                if (modifier or predicate) and "Gender" in x.feats:
                    form = self.lexicon.form(x, {"Gender": gender})
                    if form is None or len(sent.tokens[token_of[x.id]].words) != 1:
                        raise Skip("agreeing form not in the corpus")
                    replaced.append((token_of[x.id], x.form, _cased(x.form, form)))
            old_src, src[0] = self._replace_source(k, s, new_src)
            changed.append({"side": "source", "back": d, "from": old_src, "to": new_src})
        elif g["phenomenon"] == "formality":
            out = closed_variants(sent, cue.token, "formality", self.o.table, self.lexicon)
            if not out.variants:
                raise Skip(f"the cue: {out.skipped}")
            replaced = out.variants[0].replaced
            expected = g["variants"][0]["replaced"][0][2]
            if self.formality.level(replaced[0][2]) != self.formality.level(expected):
                raise Skip("the switched cue and the variant differ in level")
        else:
            # the alternative has the tagged word's part of speech, gender and number: the earlier mention must too
            # (les banques -> les rive otherwise)
            was, tagged = _single(sent, cue.token), self.tgt[g["line"] - 1].tokens[g["position"]].words[0]
            if was.upos != tagged.upos or any(was.feats.get(f) != tagged.feats.get(f) for f in ("Gender", "Number")):
                raise Skip("the earlier mention differs from the tagged word in part of speech, gender or number")
            alternative = g["variants"][0]["replaced"][0][2]
            old = sent.tokens[cue.token].form
            replaced = [(cue.token, old, _cased(old, alternative))]
        if g["phenomenon"] != "pronouns":
            self._one_cue(g, cue, {t for t, _, _ in replaced})
        tgt[0] = self._replace_target(k, replaced)
        changed += [{"side": "target", "back": d, "from": a, "to": b} for _, a, b in replaced]
        return Edit("cue_flip", src, tgt, 1, d, changed=changed)

    def _one_cue(self, g: Dict, cue: Cue, changed: set) -> None:
        """Formality and cohesion: the flipped cue must be the context's only cue. Another T-V word
        (ton beside tu, or of the other level) or another mention (or the other translation) left
        unchanged would keep the old form's cue beside the new one: the flipped context would
        prefer neither."""
        i = g["line"] - 1
        lemma = _lemma(self.tgt[i].tokens[g["position"]].words[0])
        alternative = g["variants"][0]["replaced"][0][2].lower()
        for k in range(cue.sentence, i):
            for t, tok in enumerate(self.tgt[k].tokens):
                if k == cue.sentence and t in changed:
                    continue
                if g["phenomenon"] == "formality" and self.formality.level(tok.form):
                    raise Skip("another T-V word in the context (it would keep the old level)")
                if g["phenomenon"] == "lexical_cohesion" and (
                    tok.form.lower() == alternative or (len(tok.words) == 1 and _lemma(tok.words[0]) == lemma)
                ):
                    raise Skip("another mention in the context (it would keep the old translation)")

    def control(self, g: Dict, cue: Cue, src: List[str], tgt: List[str]) -> Edit:
        k, d = cue.sentence, g["line"] - 1 - cue.sentence
        sent = self.tgt[k]
        tagged = _lemma(self.tgt[g["line"] - 1].tokens[g["position"]].words[0])
        reasons = []
        for upos in CONTROL_POS:
            for t, tok in enumerate(sent.tokens):
                if t == cue.token or len(tok.words) != 1 or tok.words[0].upos != upos:
                    continue
                x = tok.words[0]
                if _lemma(x) == tagged or (self.formality and self.formality.level(x.form)):
                    continue
                try:
                    return self._control_at(k, t, x, d, src, tgt)
                except Skip as e:
                    reasons.append(str(e))
        raise Skip(reasons[0] if reasons else "no other content word in the cue's sentence")

    def _control_at(self, k: int, t: int, x: Word, d: int, src: List[str], tgt: List[str]) -> Edit:
        s = self._source_index(k, t)
        options = []
        for lemma, form in sorted(self.by_feats.get((x.upos, frozenset(x.feats.items())), {}).items()):
            if lemma == _lemma(x) or form == x.form.lower():
                continue
            sources = [w for w, _ in self.reverse.get(form, Counter()).most_common() if w.isalpha()]
            if sources and not self._elides(self.tgt[k], x, (x.form, form)):
                options.append((sources[0], form))
        if not options:
            raise Skip("no other word of the same part of speech and features in the aligned lexicon")
        new_src, new_tgt = self.rng.choice(options)
        old_src, src[0] = self._replace_source(k, s, new_src)
        tgt[0] = self._replace_target(k, [(t, x.form, _cased(x.form, new_tgt))])
        changed = [
            {"side": "source", "back": d, "from": old_src, "to": new_src},
            {"side": "target", "back": d, "from": x.form, "to": new_tgt},
        ]
        return Edit("control", src, tgt, 0, d, changed=changed)

    def inserted(self, kind: str, g: Dict, cue: Cue, src, tgt, lines: List[int], at: int, shift: int) -> Edit:
        src[at:at] = [self.sources[n] for n in lines]
        tgt[at:at] = [self.references[n] for n in lines]
        d = g["line"] - 1 - cue.sentence + len(lines)
        return Edit(kind, src, tgt, 0, d, shift=shift, inserted=[self.references[n] for n in lines])

    def edits(self, g: Dict, counts: Counter) -> List[Tuple[Edit, int]]:
        """The edits of group g, each with the variant it contrasts; skips counted."""
        try:
            cue = self.cue(g)
            variant = self.contrast(g, cue)
        except Skip as e:
            counts[f"no cue: {e}"] += 1
            return []
        counts["groups with a cue"] += 1
        i = g["line"] - 1
        window = (self.sources[cue.sentence : i], self.references[cue.sentence : i])
        d = i - cue.sentence

        def fresh() -> Tuple[List[str], List[str]]:
            return list(window[0]), list(window[1])

        made = [Edit("original", list(window[0]), list(window[1]), 0, d)]
        for kind, make in (("cue_flip", self.flip), ("control", self.control)):
            try:
                made.append(make(g, cue, *fresh()))
            except Skip as e:
                counts[f"{kind} skipped: {e}"] += 1
        for shift in range(1, self.o.max_shift + 1):
            try:
                lines = self._draw(self.neutral, g["doc"], shift)
                src, tgt = fresh()
                made.append(self.inserted("distance", g, cue, src, tgt, lines, d, shift))
            except Skip as e:
                counts[f"distance skipped: {'no neutral sentence in the corpus' if not self.neutral else e}"] += 1
        try:
            if g["phenomenon"] != "pronouns":
                raise Skip("a distractor is made for pronouns only (another T-V word or translation would be a cue)")
            w = self.tgt[cue.sentence].tokens[cue.token].words[0]
            pool = self.single_noun.get((OTHER_GENDER[w.feats["Gender"]], w.feats.get("Number", "")), [])
            if not pool:
                raise Skip("no sentence with one noun of the other gender in the corpus")
            src, tgt = fresh()
            made.append(self.inserted("distractor", g, cue, src, tgt, self._draw(pool, g["doc"], 1), 1, 0))
        except Skip as e:
            counts[f"distractor skipped: {e}"] += 1
        for edit in made:
            counts[edit.kind] += 1
        return [(edit, variant) for edit in made]


def _reasons(counts: Dict[str, Counter], prefix: str) -> Counter:
    """The skips of every phenomenon whose reason starts with ``prefix``, summed over phenomena."""
    return sum((Counter({k: n for k, n in c.items() if k.startswith(prefix)}) for c in counts.values()), Counter())


def build_suite(o, data, lexicon, translations, corefs, groups: Sequence[Dict]) -> Dict:
    """Write the suite into OUTPUT_DIR/counterfactual; its summary (also in the build's)."""
    sources, references, ids, tags, tgt, src, align = data
    builder = SuiteBuilder(o, sources, references, ids, tags, tgt, src, align, corefs, lexicon, translations)
    counts: Dict[str, Counter] = defaultdict(Counter)
    voita: List[Dict[str, Any]] = []
    manifest: List[str] = []
    src_lines: List[str] = []
    tgt_lines: List[str] = []
    doc_lines: List[str] = []
    order_rng = random.Random(o.seed + 1)
    for g in groups:
        made = builder.edits(g, counts[g["phenomenon"]])
        flip = order_rng.random() < 0.5
        for edit, variant in made:
            i = g["line"] - 1
            v = g["variants"][variant]
            candidates = [references[i], v["text"]]
            forms = [g["word"], v["replaced"][0][2]]
            order = [1, 0] if flip else [0, 1]
            k = len(manifest)
            doc = f"cf-{k:06d}"
            src_lines += [*edit.source, sources[i]]
            tgt_lines += [*edit.target, candidates[edit.expected]]
            doc_lines += [doc] * (len(edit.source) + 1)
            voita.append(
                {
                    "src": " _eos ".join([*edit.source, sources[i]]),
                    "dst": [" _eos ".join([*edit.target, candidates[c]]) for c in order],
                    "true_ind": order.index(edit.expected),
                    "ctx_dist": edit.distance,
                    "phenomenon": g["phenomenon"],
                    "edit": edit.kind,
                    "line": len(src_lines),
                }
            )
            record = {
                "group": k,
                "base": g["group"],
                "line": len(src_lines),
                "doc": doc,
                "source_doc": g["doc"],
                "source_line": g["line"],
                "phenomenon": g["phenomenon"],
                "edit": edit.kind,
                "distance": edit.distance,
                "shift": edit.shift,
                "word": forms[edit.expected],
                "alternatives": [forms[1 - edit.expected]],
                "expected": candidates[edit.expected],
                "changed": edit.changed,
                "inserted": edit.inserted,
            }
            manifest.append(json.dumps(record, ensure_ascii=False))
    if not any(c["groups with a cue"] for c in counts.values()):
        reasons = _reasons(counts, "no cue: ")
        said = "; ".join(f"{k[len('no cue: ') :]} {n}" for k, n in reasons.most_common(3))
        raise InputError(
            f"{o.tags}: no group has a known cue ({said}); no counterfactual suite written", code=Code.EMPTY
        )
    if not any(c["cue_flip"] for c in counts.values()):
        reasons = _reasons(counts, "cue_flip skipped")
        raise InputError(
            f"{o.tags}: no cue could be flipped ("
            + "; ".join(f"{k[len('cue_flip skipped: ') :]} {n}" for k, n in reasons.most_common(3))
            + "); no counterfactual suite written",
            code=Code.EMPTY,
        )
    folder, lang = os.path.join(o.output_dir, FOLDER), o.language.code
    atomic_write_text(os.path.join(folder, "voita.json"), json.dumps(voita, ensure_ascii=False, indent=1) + "\n")
    atomic_write_lines(os.path.join(folder, "manifest.jsonl"), manifest)
    atomic_write_lines(os.path.join(folder, "source.en"), src_lines)
    atomic_write_lines(os.path.join(folder, f"reference.{lang}"), tgt_lines)
    atomic_write_lines(os.path.join(folder, "docids"), doc_lines)
    summary = {
        "language": lang,
        "counterfactual": True,
        "built_from": os.path.join(o.output_dir, "manifest.jsonl"),
        "reference": o.reference,
        "lines": len(src_lines),
        "groups": len(manifest),
        "candidates": 2 * len(manifest),
        "max_shift": o.max_shift,
        "seed": o.seed,
        "phenomena": {p: dict(sorted(c.items())) for p, c in counts.items()},
        FILES_KEY: hashes(folder, ["manifest.jsonl", "voita.json", "source.en", f"reference.{lang}", "docids"]),
    }
    atomic_write_text(os.path.join(folder, "summary.json"), json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary


def summary_lines(summary: Dict) -> List[str]:
    lines = [f"counterfactual: {summary['groups']} edited groups ({summary['lines']} lines of documents)"]
    for p, c in summary["phenomena"].items():
        made = ", ".join(f"{k} {c[k]}" for k in EDITS if c.get(k))
        skipped = [f"{k} {n}" for k, n in c.items() if "skipped" in k or k.startswith("no cue")]
        lines.append(f"  {p:17s} {c.get('groups with a cue', 0):5d} with a cue: {made or 'no edit'}")
        lines += [f"    {s}" for s in skipped]
    return lines
