"""Registered phenomena: each module tags one phenomenon; ``PHENOMENA`` maps names to taggers.

A tagger is a function ``(document, language, settings) -> list of sets of target token indices``
(one set per sentence), registered with ``@register("name")``.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Set

PHENOMENA: Dict[str, Callable[..., List[Set[int]]]] = {}


def register(name: str):
    def wrap(fn):
        PHENOMENA[name] = fn
        return fn
    return wrap


from muda.phenomena import ellipsis, formality, lexical_cohesion, pronouns, verb_form  # noqa: E402,F401
