"""Tagger thresholds and word classes (all configurable; defaults follow the MuDA paper)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import FrozenSet


@dataclass(frozen=True)
class TaggerSettings:
    # lexical cohesion: an aligned pair of lemmatized content words seen this many times before
    lexical_min_count: int = 3
    content_upos: FrozenSet[str] = frozenset({"NOUN", "PROPN", "VERB", "ADJ"})
    # ellipsis: target words that can carry an elided element
    ellipsis_upos: FrozenSet[str] = frozenset({"VERB", "NOUN", "PROPN", "PRON"})
    # formality / verb form: does an earlier word in the same sentence count as "previously"?
    same_sentence_counts: bool = False
    verb_upos: FrozenSet[str] = field(default_factory=lambda: frozenset({"VERB"}))
