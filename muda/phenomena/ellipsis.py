"""Ellipsis: in a pair whose source sentence is elliptical, a target VERB, NOUN, PROPN or PRON
that occurred in previous target sentences of the document and is aligned to no source word."""

from __future__ import annotations

from typing import List, Set

from muda.document import Document
from muda.languages import Language
from muda.phenomena.registry import register
from muda.phenomena.requirements import ALIGNMENT, ELLIPSIS_DETECTION, TARGET_MORPHOLOGY
from muda.settings import TaggerSettings


def _key(word) -> str:
    return (word.lemma if word.lemma not in ("", "_") else word.form).lower()


@register(
    "ellipsis",
    applies=lambda language: True,  # decided on the English side
    requires={ELLIPSIS_DETECTION, TARGET_MORPHOLOGY, ALIGNMENT},
)
def tag(doc: Document, lang: Language, settings: TaggerSettings) -> List[Set[int]]:
    out: List[Set[int]] = []
    seen: Set[str] = set()
    for pair in doc.pairs:
        tagged = set()
        if pair.src_elliptical:
            aligned = {j for _, j in pair.alignment}
            for j, tok in enumerate(pair.tgt.tokens):
                if j in aligned:
                    continue
                if any(w.upos in settings.ellipsis_upos and _key(w) in seen for w in tok.words):
                    tagged.add(j)
        seen.update(_key(w) for w in pair.tgt.words)
        out.append(tagged)
    return out
