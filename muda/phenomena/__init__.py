"""Registered phenomena: each module tags one phenomenon; ``PHENOMENA`` maps names to taggers.

A tagger is a function ``(document, language, settings) -> list of sets of target token indices``
(one set per sentence), registered with ``@register("name")``.
"""
from __future__ import annotations

from typing import Callable, Dict, Hashable, List, Optional, Sequence, Set

PHENOMENA: Dict[str, Callable[..., List[Set[int]]]] = {}


def register(name: str):
    def wrap(fn):
        PHENOMENA[name] = fn
        return fn
    return wrap


def seen_before(values: Sequence[Optional[Hashable]], seen: Set, same_sentence: bool) -> Set[int]:
    """Indices of tokens whose value (a formality level, a tense) occurred earlier in the
    document: in previous sentences (``seen``), or earlier in this one if ``same_sentence``.
    ``seen`` is updated with this sentence's values."""
    tagged, local = set(), set(seen)
    for j, value in enumerate(values):
        if value is not None and value in local:
            tagged.add(j)
        if value is not None and same_sentence:
            local.add(value)
    seen.update(v for v in values if v is not None)
    return tagged


from muda.phenomena import ellipsis, formality, lexical_cohesion, pronouns, verb_form  # noqa: E402,F401
