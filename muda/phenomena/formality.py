"""Formality: T-V pronouns and possessives (and honorifics for ja, ko), tagged when a word of the
same formality level appeared earlier in the document. For pro-drop languages (es, it, pt, ro)
also verbs whose source subject is "you", conjugated in the 2nd (T) or 3rd (V) person."""

from __future__ import annotations

from typing import FrozenSet, List, Optional, Set

from muda.annotation import Token
from muda.document import Document, SentencePair
from muda.languages import Formality, Language
from muda.phenomena.registry import register, seen_before
from muda.phenomena.requirements import ALIGNMENT, SOURCE_PARSE, TARGET_MORPHOLOGY
from muda.settings import TaggerSettings


def _pronoun_level(f: Formality, tok: Token, index: int) -> Optional[str]:
    level = f.level(tok.form)
    # sentence-initial "Sie" may be she/they: formal only if the annotation says so
    if (
        level
        and index == 0
        and tok.form in f.sentence_initial_needs_feats
        and not any(w.feats.get("Person") == "2" or w.feats.get("Polite") == "Form" for w in tok.words)
    ):
        return None
    return level


def _subject_is_you(pair: SentencePair, j: int) -> bool:
    src_words = pair.src.words
    for i in pair.aligned_sources(j):
        if i >= len(pair.src.tokens):
            continue
        heads = {w.id for w in pair.src.tokens[i].words}
        if any(w.head in heads and w.deprel.startswith("nsubj") and w.form.lower() == "you" for w in src_words):
            return True
    return False


def _verb_level(pair: SentencePair, tok: Token, j: int) -> Optional[str]:
    for w in tok.words:
        if w.upos in ("VERB", "AUX") and w.feats.get("Person") in ("2", "3") and _subject_is_you(pair, j):
            return "T" if w.feats["Person"] == "2" else "V"
    return None


def _requires(language: Language) -> FrozenSet[str]:
    # the T-V words are read on the target alone; a pro-drop language's verbs also need the
    # English subject ("you") they are aligned to
    if language.formality is not None and language.formality.subject_drop:
        return frozenset({TARGET_MORPHOLOGY, SOURCE_PARSE, ALIGNMENT})
    return frozenset({TARGET_MORPHOLOGY})


@register(
    "formality",
    applies=lambda language: language.formality is not None,  # T-V words listed
    requires=_requires,
)
def tag(doc: Document, lang: Language, settings: TaggerSettings) -> List[Set[int]]:
    f = lang.formality
    if f is None:  # the registry applies the tagger only where T-V words are listed
        raise ValueError("the formality tagger needs a language with T-V words")
    out: List[Set[int]] = []
    seen: Set[str] = set()
    for pair in doc.pairs:
        levels = []
        for j, tok in enumerate(pair.tgt.tokens):
            level = _pronoun_level(f, tok, j)
            if level is None and f.subject_drop:
                level = _verb_level(pair, tok, j)
            levels.append(level)
        out.append(seen_before(levels, seen, settings.same_sentence_counts))
    return out
