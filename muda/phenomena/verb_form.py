"""Verb form: a target verb whose tense is ambiguous for the language, when a verb of the same
tense appeared earlier in the document."""

from __future__ import annotations

from typing import List, Set

from muda.document import Document
from muda.languages import Language
from muda.phenomena.registry import register, seen_before
from muda.phenomena.requirements import TARGET_MORPHOLOGY
from muda.settings import TaggerSettings


@register(
    "verb_form",
    applies=lambda language: bool(language.verb_forms),  # ambiguous tenses listed
    requires={TARGET_MORPHOLOGY},
)
def tag(doc: Document, lang: Language, settings: TaggerSettings) -> List[Set[int]]:
    out: List[Set[int]] = []
    seen: Set[str] = set()
    for pair in doc.pairs:
        tenses = []
        for tok in pair.tgt.tokens:
            t = next(
                (
                    w.feats.get("Tense")
                    for w in tok.words
                    if w.upos in settings.verb_upos and w.feats.get("Tense") in lang.verb_forms
                ),
                None,
            )
            tenses.append(t)
        out.append(seen_before(tenses, seen, settings.same_sentence_counts))
    return out
