"""Lexical cohesion: an aligned pair of lemmatized content words that already occurred at least
``lexical_min_count`` times earlier in the document, not counting the current sentence."""

from __future__ import annotations

from collections import Counter
from typing import List, Optional, Set

from muda.annotation import Token
from muda.document import Document
from muda.languages import Language
from muda.phenomena.registry import register
from muda.phenomena.requirements import ALIGNMENT, SOURCE_PARSE, TARGET_MORPHOLOGY
from muda.settings import TaggerSettings


def _content_lemma(tok: Token, upos) -> Optional[str]:
    for w in tok.words:
        if w.upos in upos:
            return (w.lemma if w.lemma not in ("", "_") else w.form).lower()
    return None


@register(
    "lexical_cohesion",
    applies=lambda language: True,  # needs no language data
    requires={SOURCE_PARSE, TARGET_MORPHOLOGY, ALIGNMENT},
)
def tag(doc: Document, lang: Language, settings: TaggerSettings) -> List[Set[int]]:
    out: List[Set[int]] = []
    counts: Counter = Counter()
    for pair in doc.pairs:
        src = [_content_lemma(t, settings.content_upos) for t in pair.src.tokens]
        tgt = [_content_lemma(t, settings.content_upos) for t in pair.tgt.tokens]
        keys = [((src[i], tgt[j]), j) for i, j in pair.alignment if i < len(src) and j < len(tgt) and src[i] and tgt[j]]
        out.append({j for key, j in keys if counts[key] >= settings.lexical_min_count})
        counts.update(key for key, _ in keys)
    return out
