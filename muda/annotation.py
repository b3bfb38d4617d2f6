"""The annotation of one sentence: surface tokens with UD morphology, as CoNLL-U or stanza give it.

Multi-word tokens (French "du" = "de le") are kept as one surface token carrying its syntactic
words, so that token indices match what a reader of the text sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional


@dataclass
class Word:
    """A syntactic word (a CoNLL-U line with an integer id)."""

    id: int
    form: str
    lemma: str = "_"
    upos: str = "_"
    feats: Dict[str, str] = field(default_factory=dict)
    head: int = 0
    deprel: str = "_"
    misc: Dict[str, str] = field(default_factory=dict)


@dataclass
class Token:
    """A surface token: one word, or a multi-word token with its words."""

    form: str
    words: List[Word]

    @property
    def upos(self) -> str:
        return "+".join(w.upos for w in self.words)


@dataclass
class Sentence:
    tokens: List[Token]
    sent_id: Optional[str] = None
    newdoc: Optional[str] = None  # the document id when this sentence starts a document
    text: Optional[str] = None

    @property
    def forms(self) -> List[str]:
        return [t.form for t in self.tokens]

    @property
    def words(self) -> List[Word]:
        return [w for t in self.tokens for w in t.words]


def parse_feats(text: str) -> Dict[str, str]:
    if text in ("", "_"):
        return {}
    out = {}
    for item in text.split("|"):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"bad feature {item!r}")
        out[key] = value
    return out


def format_feats(feats: Dict[str, str]) -> str:
    return "|".join(f"{k}={v}" for k, v in sorted(feats.items(), key=lambda kv: kv[0].lower())) or "_"
