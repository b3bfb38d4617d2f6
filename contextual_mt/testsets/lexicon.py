"""Word forms by lemma and features, read off annotated text (CoNLL-U): where a variant finds
the form a word takes when its features change (``voir`` + 2nd person plural -> ``voyez``).
Only forms seen in the corpus are used: nothing is inflected by rule."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Dict, FrozenSet, Iterable, Optional, Tuple

from muda.annotation import Sentence, Word

Key = Tuple[str, str, FrozenSet[Tuple[str, str]]]


def key(lemma: str, upos: str, feats: Dict[str, str]) -> Key:
    return lemma.lower(), upos, frozenset(feats.items())


class Lexicon:
    def __init__(self, sentences: Iterable[Sentence] = ()):
        self.forms: Dict[Key, Counter] = defaultdict(Counter)
        self.add(sentences)

    def add(self, sentences: Iterable[Sentence]) -> None:
        for s in sentences:
            for tok in s.tokens:
                if len(tok.words) == 1:  # a multi-word token's surface is not one word's form
                    w = tok.words[0]
                    if w.lemma not in ("", "_"):
                        self.forms[key(w.lemma, w.upos, w.feats)][w.form.lower()] += 1

    def form(self, word: Word, changes: Dict[str, str]) -> Optional[str]:
        """The most frequent form of ``word``'s lemma with its features changed (None: not seen)."""
        feats = {**word.feats, **changes}
        seen = self.forms.get(key(word.lemma, word.upos, feats))
        return seen.most_common(1)[0][0] if seen else None

    def feats_of(self, form: str, upos: str) -> Optional[Dict[str, str]]:
        """The features a form most often has with this UPOS (for a replacement noun's gender)."""
        best: Optional[Tuple[int, Key]] = None
        for k, forms in self.forms.items():
            if k[1] == upos and forms.get(form.lower()) and (best is None or forms[form.lower()] > best[0]):
                best = (forms[form.lower()], k)
        return dict(best[1][2]) if best else None
