"""Coreference as mentions of entities, from CorefUD ``Entity`` values in CoNLL-U MISC."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from commandkit.errors import Code, InputError
from muda.annotation import Sentence

_PART = re.compile(r"\([^()]+\)|\([^()]+|[^()]+\)")


@dataclass(frozen=True)
class Mention:
    entity: str
    sentence: int  # index of the sentence in its document
    start: int  # surface token indices, inclusive
    end: int


def corefud_mentions(doc: Sequence[Sentence], where: str = "CoNLL-U", first_sentence: int = 1) -> List[Mention]:
    """Mentions of a document's sentences; entity ids are only meaningful within the document.
    Errors name ``where`` and the sentence, numbered from ``first_sentence`` (the document's
    first sentence in the file)."""
    mentions: List[Mention] = []
    for s, sent in enumerate(doc):
        n = first_sentence + s
        open_: Dict[str, List[int]] = {}
        for t, tok in enumerate(sent.tokens):
            for word in tok.words:
                value = word.misc.get("Entity")
                if not value:
                    continue
                for part in _PART.findall(value):
                    eid = part.strip("()").split("-")[0]
                    if part.startswith("(") and part.endswith(")"):
                        mentions.append(Mention(eid, s, t, t))
                    elif part.startswith("("):
                        open_.setdefault(eid, []).append(t)
                    else:
                        if not open_.get(eid):
                            raise InputError(
                                f"{where}: sentence {n}: entity {eid} closed but not opened", code=Code.FORMAT
                            )
                        mentions.append(Mention(eid, s, open_[eid].pop(), t))
        if any(open_.values()):
            raise InputError(f"{where}: sentence {n}: entity mention not closed within the sentence", code=Code.FORMAT)
    return mentions


class CorefIndex:
    """Answers: does the antecedent of the mention at (sentence, token) lie in an earlier sentence?"""

    def __init__(self, mentions: Sequence[Mention]):
        self.mentions = sorted(mentions, key=lambda m: (m.sentence, m.start, m.end))

    def mention_at(self, sentence: int, token: int) -> Optional[Mention]:
        covering = [m for m in self.mentions if m.sentence == sentence and m.start <= token <= m.end]
        return min(covering, key=lambda m: m.end - m.start) if covering else None

    def antecedent(self, mention: Mention) -> Optional[Mention]:
        """The nearest earlier mention of the same entity."""
        before = [
            m
            for m in self.mentions
            if m.entity == mention.entity and m != mention and (m.sentence, m.end) < (mention.sentence, mention.start)
        ]
        return before[-1] if before else None

    def antecedent_outside_sentence(self, sentence: int, token: int) -> bool:
        m = self.mention_at(sentence, token)
        a = self.antecedent(m) if m else None
        return a is not None and a.sentence < sentence


def add_corefud(sentences: Sequence[Sentence], mentions: Sequence[Mention]) -> None:
    """Write mentions into the sentences' MISC as CorefUD Entity values (e.g. to store them as CoNLL-U)."""
    for m in sorted(mentions, key=lambda m: (m.sentence, m.start, -m.end)):
        tokens = sentences[m.sentence].tokens
        first, last = tokens[m.start].words[0], tokens[m.end].words[-1]
        if m.start == m.end and first is last:
            first.misc["Entity"] = first.misc.get("Entity", "") + f"(e{m.entity})"
        else:
            first.misc["Entity"] = first.misc.get("Entity", "") + f"(e{m.entity}"
            last.misc["Entity"] = f"e{m.entity})" + last.misc.get("Entity", "")
