"""The closed alternatives of tagged words, per language, from validated files
(``alternatives/xx.yaml``): for pronouns and formality, each word's alternatives and the
features that change with them (which the words agreeing with it must follow). Verb forms and
lexical cohesion take their alternatives from the corpus itself (``variants``)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import yaml

from contextual_mt.errors import ContextualMTError

DIRECTORY = os.path.join(os.path.dirname(__file__), "alternatives")
ROLES = ("nsubj", "obj", "other")
PHENOMENA = ("pronouns", "formality")


@dataclass(frozen=True)
class Swap:
    """``word`` -> ``alternative``: the features that change, and (for forms that depend on
    the word's syntactic role) the role it must have."""

    alternative: str
    changes: Tuple[Tuple[str, str], ...]
    role: Optional[str] = None


Table = Dict[str, Dict[str, Tuple[Swap, ...]]]  # phenomenon -> lowercased word -> swaps


def available() -> Tuple[str, ...]:
    return tuple(sorted(f[:-5] for f in os.listdir(DIRECTORY) if f.endswith(".yaml")))


def load(lang: str) -> Table:
    """The table of ``lang``; one line naming the file when it is malformed, or the languages
    that have one when it has none."""
    path = os.path.join(DIRECTORY, f"{lang}.yaml")
    if not os.path.isfile(path):
        raise ContextualMTError(f"testset build has no alternatives for '{lang}' (languages: "
                                f"{', '.join(available())}); add {path} (see fr.yaml)")
    with open(path, encoding="utf-8") as f:
        data = yaml.safe_load(f) or {}
    if not isinstance(data, dict) or set(data) - set(PHENOMENA):
        raise ContextualMTError(f"{path}: expected the keys {', '.join(PHENOMENA)}")
    table: Table = {}
    for phenomenon, words in data.items():
        if not isinstance(words, dict):
            raise ContextualMTError(f"{path}: {phenomenon}: expected word: {{alternative: {{feature: value}}}}")
        table[phenomenon] = {}
        for word, alternatives in words.items():
            if not isinstance(alternatives, dict) or not alternatives:
                raise ContextualMTError(f"{path}: {phenomenon}.{word}: expected {{alternative: {{feature: value}}}}")
            swaps = []
            for alt, changes in alternatives.items():
                changes = dict(changes or {})
                role = changes.pop("role", None)
                if role is not None and role not in ROLES:
                    raise ContextualMTError(f"{path}: {phenomenon}.{word}.{alt}: role must be one of {', '.join(ROLES)}")
                if not all(isinstance(k, str) and isinstance(v, str) for k, v in changes.items()):
                    raise ContextualMTError(f"{path}: {phenomenon}.{word}.{alt}: features are Name: Value strings")
                swaps.append(Swap(str(alt), tuple(sorted(changes.items())), role))
            table[phenomenon][str(word).lower()] = tuple(swaps)
    return table
