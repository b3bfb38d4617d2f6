"""Pronoun choice: an aligned English pronoun / target pronoun pair from the language's list of
ambiguous pronouns, whose antecedent (by source-side coreference) is not in the sentence."""

from __future__ import annotations

from typing import List, Set

from muda.document import Document
from muda.languages import Language
from muda.phenomena.registry import register
from muda.phenomena.requirements import ALIGNMENT, COREFERENCE, SOURCE_PARSE, TARGET_MORPHOLOGY
from muda.settings import TaggerSettings


def _is_pron(tok) -> bool:
    return any(w.upos == "PRON" for w in tok.words)


@register(
    "pronouns",
    applies=lambda language: bool(language.pronouns),  # ambiguous pronouns listed
    requires={SOURCE_PARSE, COREFERENCE, TARGET_MORPHOLOGY, ALIGNMENT},
)
def tag(doc: Document, lang: Language, settings: TaggerSettings) -> List[Set[int]]:
    out: List[Set[int]] = []
    for s, pair in enumerate(doc.pairs):
        tagged = set()
        for i, j in pair.alignment:
            if i >= len(pair.src.tokens) or j >= len(pair.tgt.tokens):
                continue
            src, tgt = pair.src.tokens[i], pair.tgt.tokens[j]
            forms = lang.pronouns.get(src.form.lower())
            if not forms or tgt.form.lower() not in forms or not (_is_pron(src) and _is_pron(tgt)):
                continue
            if doc.coref is not None and doc.coref.antecedent_outside_sentence(s, i):
                tagged.add(j)
        out.append(tagged)
    return out
