"""The registry of phenomena: each phenomenon module registers its tagger with ``@register``,
saying which languages it applies to. The registry is the only list of phenomenon names; its
order (the order in which ``muda.phenomena`` imports the modules) is the order of tags in every
output. Also the helper that several taggers share (``seen_before``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, AbstractSet, Callable, Dict, FrozenSet, Hashable, List, Optional, Sequence, Set, Union

from commandkit.errors import Code, InputError

if TYPE_CHECKING:
    from muda.document import Document
    from muda.languages import Language
    from muda.settings import TaggerSettings

# (document, language, settings) -> one set of tagged target token indices per sentence
Tagger = Callable[["Document", "Language", "TaggerSettings"], List[Set[int]]]


@dataclass(frozen=True)
class Phenomenon:
    name: str
    tag: Tagger
    applies: Callable[[Language], bool]
    # the annotations (muda.phenomena.requirements) the tagger reads, for a language
    requires: Callable[[Language], FrozenSet[str]]


_REGISTRY: Dict[str, Phenomenon] = {}


Requires = Union[AbstractSet[str], Callable[["Language"], FrozenSet[str]]]


def register(name: str, applies: Callable[[Language], bool], requires: Requires) -> Callable[[Tagger], Tagger]:
    """Decorator: register ``fn`` as the tagger of phenomenon ``name``, which applies to the
    languages for which ``applies(language)`` is true and reads the annotations ``requires``
    (a set of ``muda.phenomena.requirements`` names, or a function of the language giving one)."""
    needs = requires if callable(requires) else (lambda language, fixed=frozenset(requires): fixed)

    def wrap(fn: Tagger) -> Tagger:
        if name in _REGISTRY:
            raise ValueError(f"phenomenon {name!r} registered twice")
        _REGISTRY[name] = Phenomenon(name, fn, applies, needs)
        return fn

    return wrap


def phenomenon_names() -> List[str]:
    """Every registered phenomenon, in canonical order."""
    return list(_REGISTRY)


def applicable(language: Language) -> List[str]:
    """The phenomena that apply to ``language``, in canonical order."""
    return [p.name for p in _REGISTRY.values() if p.applies(language)]


def required_annotations(name: str, language: Language) -> FrozenSet[str]:
    """The annotations phenomenon ``name`` reads for ``language``."""
    return _REGISTRY[name].requires(language)


def get_tagger(name: str) -> Tagger:
    """The tagger of a registered phenomenon (KeyError for an unknown name)."""
    return _REGISTRY[name].tag


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


def check_phenomena(phenomena: Optional[Sequence[str]]) -> None:
    """Every name must be a registered phenomenon: one error naming the first unknown one."""
    known = phenomenon_names()
    if isinstance(phenomena, str):  # a bare string would be read letter by letter
        raise InputError(f"phenomena must be a list of names (got the string {phenomena!r})", code=Code.OPTION_VALUE)
    unknown = [p for p in phenomena or () if p not in known]
    if unknown:
        raise InputError(f"unknown phenomenon {unknown[0]!r}; known: {', '.join(known)}", code=Code.OPTION_VALUE)
