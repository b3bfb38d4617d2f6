"""The variants of one tagged occurrence: the reference sentence with the tagged word replaced
by each of its closed alternatives, and the words that agree with it changed to match, or the
reason no variant can be made (then the occurrence is skipped and counted).

Agreement follows the annotation's dependencies: a subject pronoun's predicate (its head: a
verb, a predicative adjective or participle) and that predicate's copula and auxiliaries. Each
of them takes the form of its lemma with the changed features, as seen in the corpus
(``Lexicon``); when the corpus never shows that form, no variant is made (it could be
ungrammatical). A possessive (DET) instead follows its noun: the alternative whose conditions
its noun's features meet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

from contextual_mt.testsets.alternatives import Agreement, Swap, Table
from contextual_mt.testsets.lexicon import Lexicon
from muda.annotation import Sentence, Word

FINITE = ("VERB", "AUX")
AGREEING = {"formality": FINITE, "pronouns": (*FINITE, "ADJ")}


@dataclass
class Variant:
    alternative: str  # what the tagged word becomes
    replaced: List[Tuple[int, str, str]]  # (token index, old form, new form), the tagged word first
    reason: str


@dataclass
class Outcome:
    variants: List[Variant] = field(default_factory=list)
    skipped: Optional[str] = None  # why no variant (one of a few stable reasons, counted)


def _cased(like: str, form: str) -> str:
    return form[:1].upper() + form[1:] if like[:1].isupper() else form


def _single_word(sent: Sentence, j: int) -> Optional[Word]:
    tok = sent.tokens[j]
    return tok.words[0] if len(tok.words) == 1 else None


def _token_of(sent: Sentence) -> Dict[int, int]:
    """Word id -> surface token index (a multi-word token's words all map to it)."""
    return {w.id: t for t, tok in enumerate(sent.tokens) for w in tok.words}


def _linked(sent: Sentence, w: Word) -> List[Word]:
    """The words that agree with subject ``w``: its head, the head's copula and auxiliaries, and
    the verbs coordinated with the head that have no subject of their own (il mange et boit)."""
    if not w.deprel.startswith("nsubj") or w.head == 0:
        return []
    words = {x.id: x for x in sent.words}
    head = words.get(w.head)
    if head is None:
        return []
    with_subject = {x.head for x in sent.words if x.deprel.startswith("nsubj")}
    heads = [head] + [
        x for x in sent.words if x.head == head.id and x.deprel.split(":")[0] == "conj" and x.id not in with_subject
    ]
    return heads + [
        x for x in sent.words if x.head in {h.id for h in heads} and x.deprel.split(":")[0] in ("cop", "aux")
    ]


def _participle_agrees(sent: Sentence, x: Word, agreement: Agreement) -> bool:
    """A participle agrees with the subject with the listed auxiliaries (fr: être) or in the
    passive, not otherwise (fr: avoir)."""
    return any(
        a.head == x.id and (a.deprel == "aux:pass" or a.lemma.lower() in agreement.participle_auxiliaries)
        for a in sent.words
    )


VOWELS = "aeiouyàâäéèêëîïôöùûü"


def _before_vowel(sent: Sentence, j: int, alternative: str, agreement: Agreement) -> Tuple[bool, str]:
    """(usable, form) of ``alternative`` given the next token: a form listed for a vowel (fr: ta
    -> ton), none (an elided word: skipped), or not sure (a word in h: skipped)."""
    rules = dict(agreement.before_vowel)
    if alternative.lower() not in rules or j + 1 >= len(sent.tokens):
        return True, alternative
    first = sent.tokens[j + 1].form[:1].lower()
    if first == "h":  # h muet or aspiré: the corpus does not say which
        return False, alternative
    if first in VOWELS:
        form = rules[alternative.lower()]
        return form is not None, form or alternative
    return True, alternative


def _role(w: Word) -> str:
    rel = w.deprel.split(":")[0]
    return "nsubj" if rel == "nsubj" else "obj" if rel in ("obj", "iobj") else "other"


def _plural_agreement(x: Word) -> bool:
    """A plural participle or adjective: the subject is plural, not a polite singular."""
    return x.feats.get("Number") == "Plur" and "Person" not in x.feats and x.upos in ("ADJ", "VERB", "AUX")


def closed_variants(sent: Sentence, j: int, phenomenon: str, table: Table, lexicon: Lexicon) -> Outcome:
    """Pronouns and formality: the alternatives listed for the tagged word."""
    w = _single_word(sent, j)
    if w is None:
        return Outcome(skipped="multi-word token")
    swaps: Sequence[Swap] = table.get(phenomenon, {}).get(w.form.lower(), ())
    if not swaps:
        return Outcome(skipped="no alternatives listed for the word")
    agreement = table.agreement
    if w.feats.get("Poss") == "Yes":  # a possessive follows its noun
        return _possessive(sent, j, w, swaps, agreement)
    if w.upos != "PRON":  # the annotation disagrees with the word list: agreement cannot be trusted
        return Outcome(skipped="not a pronoun in the annotation")
    token_of = _token_of(sent)
    linked = _linked(sent, w)
    # a subject whose person or number changes needs its verb found, or the variant may not agree
    verb_found = any(x.upos in FINITE and "Person" in x.feats for x in linked)
    if phenomenon == "formality" and any(_plural_agreement(x) for x in linked):
        return Outcome(skipped="plural agreement: not a polite singular")
    agreeing = AGREEING[phenomenon] + (
        ("ADJ",) if phenomenon == "formality" and agreement.polite_plural_adjectives else ()
    )
    out = Outcome()
    missing = None
    for swap in swaps:
        if swap.role is not None and swap.role != _role(w):
            continue
        if any(w.feats.get(k) != v for k, v in swap.requires):
            missing = missing or "the word's own features rule the alternative out"
            continue
        usable, alternative = _before_vowel(sent, j, swap.alternative, agreement)
        if not usable:
            missing = missing or "elision before the next word"
            continue
        changes = dict(swap.changes)
        if w.deprel.startswith("nsubj") and not verb_found and changes.keys() & {"Person", "Number"}:
            missing = missing or "no finite verb found for the subject"
            continue
        replaced = [(j, w.form, _cased(w.form, alternative))]
        notes = []
        for x in linked:
            if x.upos not in agreeing:
                continue
            if phenomenon == "formality" and x.upos != "ADJ" and "Person" not in x.feats:
                continue  # not a finite verb form
            if x.feats.get("VerbForm") == "Part" and not _participle_agrees(sent, x, agreement):
                continue
            needed = {k: v for k, v in changes.items() if k in x.feats and x.feats[k] != v}
            if not needed:
                continue
            if len(sent.tokens[token_of[x.id]].words) > 1:
                missing = f"agreeing word in a multi-word token ({sent.tokens[token_of[x.id]].form})"
                break
            form = lexicon.form(x, needed)
            if form is None:
                missing = "agreeing form not in the corpus"
                break
            t = token_of[x.id]
            replaced.append((t, x.form, _cased(x.form, form)))
            notes.append(f"{x.form} -> {form} ({'|'.join(f'{k}={v}' for k, v in sorted(needed.items()))})")
        else:
            reason = f"{w.form} -> {alternative}" + (f"; agreement: {', '.join(notes)}" if notes else "")
            out.variants.append(Variant(alternative, replaced, reason))
    if not out.variants:
        out.skipped = missing or "no alternative for the word's role"
    return out


def _possessive(sent: Sentence, j: int, w: Word, swaps: Sequence[Swap], agreement: Agreement) -> Outcome:
    words = {x.id: x for x in sent.words}
    noun = words.get(w.head)
    for swap in swaps:
        conditions = dict(swap.changes)
        if noun is not None and all(noun.feats.get(k) == v for k, v in conditions.items()):
            usable, alternative = _before_vowel(sent, j, swap.alternative, agreement)
            if not usable:
                return Outcome(skipped="elision before the next word")
            reason = f"{w.form} -> {alternative}" + (
                f" (its noun {noun.form}: {'|'.join(f'{k}={v}' for k, v in conditions.items())})" if conditions else ""
            )
            return Outcome([Variant(alternative, [(j, w.form, _cased(w.form, alternative))], reason)])
    return Outcome(skipped="possessive: no alternative matches its noun")


def verb_form_variants(sent: Sentence, j: int, tenses: Set[str], lexicon: Lexicon) -> Outcome:
    """The tagged finite verb in the language's other ambiguous tenses (and the present), as
    the corpus shows them."""
    w = _single_word(sent, j)
    if w is None or w.upos not in FINITE:
        return Outcome(skipped="not a single-word verb")
    if w.feats.get("VerbForm") != "Fin":
        return Outcome(skipped="compound tense (participle)")
    own = w.feats.get("Tense")
    out = Outcome()
    for tense in sorted((set(tenses) | {"Pres"}) - {own}):
        form = lexicon.form(w, {"Tense": tense})
        if form is not None and form != w.form.lower():
            out.variants.append(
                Variant(form, [(j, w.form, _cased(w.form, form))], f"{w.form} ({own}) -> {form} ({tense})")
            )
    if not out.variants:
        out.skipped = "no other tense of the verb in the corpus"
    return out


def cohesion_variants(
    sent: Sentence, j: int, sources: Sequence[str], translations: Dict[str, Dict[str, int]], lexicon: Lexicon
) -> Outcome:
    """The repeated word replaced by another translation of its source word(s) found in the
    corpus's alignments, of the same part of speech, gender and number (so that its
    determiners and adjectives still agree)."""
    w = _single_word(sent, j)
    if w is None:
        return Outcome(skipped="multi-word token")
    if not sources:
        return Outcome(skipped="not aligned")
    counts: Dict[str, int] = {}
    for s in sources:
        for form, n in translations.get(s.lower(), {}).items():
            counts[form] = counts.get(form, 0) + n
    for form, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if form == w.form.lower():
            continue
        feats = lexicon.feats_of(form, w.upos)
        if feats is None or any(feats.get(k) != w.feats.get(k) for k in ("Gender", "Number") if k in w.feats):
            continue
        return Outcome(
            [
                Variant(
                    form,
                    [(j, w.form, _cased(w.form, form))],
                    f"{w.form} -> {form} (another translation of {'/'.join(sources)} in the corpus)",
                )
            ]
        )
    return Outcome(skipped="no other translation of the source word with the same gender and number")


def apply(text: str, sent: Sentence, replaced: Sequence[Tuple[int, str, str]]) -> Optional[str]:
    """``text`` with the tokens replaced, found by their characters (whitespace between tokens
    may differ from the annotation's); None when the annotation does not match the text."""
    spans, at = [], 0
    for tok in sent.tokens:
        while at < len(text) and text[at].isspace():
            at += 1
        if text[at : at + len(tok.form)] != tok.form:
            return None
        spans.append((at, at + len(tok.form)))
        at += len(tok.form)
    out = text
    for t, _, new in sorted(replaced, key=lambda r: -spans[r[0]][0]):
        a, b = spans[t]
        out = out[:a] + new + out[b:]
    return out
