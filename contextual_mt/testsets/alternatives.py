"""The closed alternatives of tagged words, per language, from validated files
(``alternatives/xx.yaml``): for pronouns and formality, each word's alternatives and the
features that change with them (which the words agreeing with it must follow). Verb forms and
lexical cohesion take their alternatives from the corpus itself (``variants``). The optional
``agreement`` section says how agreement works in the language (see ``Agreement``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Optional, Tuple

import yaml

from contextual_mt.errors import Code, InputError

DIRECTORY = os.path.join(os.path.dirname(__file__), "alternatives")
ROLES = ("nsubj", "obj", "other")
PHENOMENA = ("pronouns", "formality")


@dataclass(frozen=True)
class Swap:
    """``word`` -> ``alternative``: the features that change, the role the word must have (for
    forms that depend on it) and features the word itself must have (``if``)."""

    alternative: str
    changes: Tuple[Tuple[str, str], ...]
    role: Optional[str] = None
    requires: Tuple[Tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Agreement:
    """How agreement works in the language, beyond verbs following their subject."""

    # a participle agrees with the subject only with these auxiliaries (fr: être; avoir: no)
    participle_auxiliaries: FrozenSet[str] = frozenset()
    # the polite plural makes predicative adjectives plural too (ru: вы правы; fr: vous êtes gentil)
    polite_plural_adjectives: bool = False
    # before a vowel an alternative takes another form (fr: ta -> ton), or none: skipped (fr: te)
    before_vowel: Tuple[Tuple[str, Optional[str]], ...] = ()


@dataclass
class Table:
    swaps: Dict[str, Dict[str, Tuple[Swap, ...]]] = field(default_factory=dict)  # phenomenon -> word -> swaps
    agreement: Agreement = field(default_factory=Agreement)

    def get(self, phenomenon: str, default=None):
        return self.swaps.get(phenomenon, default if default is not None else {})


def available() -> Tuple[str, ...]:
    return tuple(sorted(f[:-5] for f in os.listdir(DIRECTORY) if f.endswith(".yaml")))


def load(lang: str) -> Table:
    """The table of ``lang``; one line naming the file when it is malformed, or the languages
    that have one when it has none."""
    path = os.path.join(DIRECTORY, f"{lang}.yaml")
    if not os.path.isfile(path):
        raise InputError(
            f"testset build has no alternatives for '{lang}' (languages: "
            f"{', '.join(available())}); add {path} (see fr.yaml)",
            code=Code.OPTION_VALUE,
        )
    with open(path, encoding="utf-8") as f:
        data = yaml.safe_load(f) or {}
    if not isinstance(data, dict) or set(data) - set(PHENOMENA) - {"agreement"}:
        raise InputError(f"{path}: expected the keys {', '.join(PHENOMENA)} and agreement", code=Code.FORMAT)
    table = Table(agreement=_agreement(data.pop("agreement", None) or {}, path))
    for phenomenon, words in data.items():
        if not isinstance(words, dict):
            raise InputError(
                f"{path}: {phenomenon}: expected word: {{alternative: {{feature: value}}}}", code=Code.FORMAT
            )
        table.swaps[phenomenon] = {}
        for word, alternatives in words.items():
            if not isinstance(alternatives, dict) or not alternatives:
                raise InputError(
                    f"{path}: {phenomenon}.{word}: expected {{alternative: {{feature: value}}}}", code=Code.FORMAT
                )
            swaps = []
            for alt, changes in alternatives.items():
                changes = dict(changes or {})
                role = changes.pop("role", None)
                requires = changes.pop("if", None) or {}
                if not isinstance(requires, dict):
                    raise InputError(
                        f"{path}: {phenomenon}.{word}.{alt}: 'if' takes Name: Value features", code=Code.FORMAT
                    )
                if role is not None and role not in ROLES:
                    raise InputError(
                        f"{path}: {phenomenon}.{word}.{alt}: role must be one of {', '.join(ROLES)}", code=Code.FORMAT
                    )
                if not all(isinstance(k, str) and isinstance(v, str) for k, v in [*changes.items(), *requires.items()]):
                    raise InputError(
                        f"{path}: {phenomenon}.{word}.{alt}: features are Name: Value strings", code=Code.FORMAT
                    )
                swaps.append(Swap(str(alt), tuple(sorted(changes.items())), role, tuple(sorted(requires.items()))))
            table.swaps[phenomenon][str(word).lower()] = tuple(swaps)
    return table


def _agreement(data: dict, path: str) -> Agreement:
    keys = {"participle_auxiliaries", "polite_plural_adjectives", "before_vowel"}
    if not isinstance(data, dict) or set(data) - keys:
        raise InputError(f"{path}: agreement: expected the keys {', '.join(sorted(keys))}", code=Code.FORMAT)
    aux = data.get("participle_auxiliaries") or []
    vowel = data.get("before_vowel") or {}
    if (
        not isinstance(aux, list)
        or not all(isinstance(a, str) for a in aux)
        or not isinstance(vowel, dict)
        or not isinstance(data.get("polite_plural_adjectives", False), bool)
    ):
        raise InputError(
            f"{path}: agreement: participle_auxiliaries is a list of lemmas, "
            "polite_plural_adjectives true or false, before_vowel word: form (or null)",
            code=Code.FORMAT,
        )
    return Agreement(
        frozenset(a.lower() for a in aux),
        bool(data.get("polite_plural_adjectives", False)),
        tuple(sorted((str(k).lower(), None if v is None else str(v)) for k, v in vowel.items())),
    )
