"""Command lines generated from option dataclasses: each option is a dataclass field declared once,
with its default, help and argparse settings (as fairseq's ``field(default=..., metadata={"help":
...})`` with ``gen_parser_from_dataclass``, or inseq's ``cli_arg``); shared groups of options are
nested dataclasses. This module is the only place that calls ``add_argument``.

    @dataclass
    class Run:
        overwrite: bool = option(help="discard OUTPUT.partial", action="store_true")
        quiet: bool = option(action="store_true")

    @dataclass
    class Args:
        source: str = option(required=True, help="source text")
        beam: int = option(default=5)  # argparse's type=int from the annotation
        run: Run = group(Run)  # its options join Args's; ``group(Run, "title")``: an argument group

    add_options(parser, Args)          # the parser's arguments, in declaration order
    args = from_namespace(Args, ns)    # Args(source=..., beam=..., run=Run(...))

A field's flags default to ``--field-name``; ``positional=True`` makes it positional; ``exclusive``
puts it in a mutually exclusive group of that name (``exclusive_required`` marks the group
required); ``argparse.SUPPRESS`` and every other ``add_argument`` keyword pass through unchanged.
argparse's ``type`` comes from the annotation where it is a number (``int``, ``float``,
``Optional[int]``, ``List[float]``: text stays text, and an explicit ``type=`` wins).

The options class of a command is also its library's: a field the command line shows another
way is declared so (``inverse=True``: the field ``resume`` shown as the flag ``--overwrite``;
``group(ModelArgs, last=True, given=True)``: the field holds what the caller makes of the group's
options, e.g. a model specification, and the group's options close the command's list).
"""

from __future__ import annotations

import argparse
from dataclasses import MISSING, Field, field, fields
from typing import (
    Any,
    Callable,
    ClassVar,
    Dict,
    List,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
    get_args,
    get_origin,
)


class _Dataclass(Protocol):
    """What every dataclass is (as typeshed's DataclassInstance): for the options classes."""

    __dataclass_fields__: ClassVar[Dict[str, Any]]


Dataclass = _Dataclass  # what an options class is, for type variables of code built on this module
T = TypeVar("T", bound=_Dataclass)  # an options dataclass

_OPTION = "commandkit.option"
_GROUP = "commandkit.group"


def option(
    *flags: str,
    default: Any = None,
    help: Union[str, Callable[[], str], None] = None,
    positional: bool = False,
    exclusive: Optional[str] = None,
    exclusive_required: bool = False,
    group: Optional[str] = None,
    empty_ok: bool = False,
    inverse: bool = False,
    after: Optional[str] = None,
    **argparse_settings: Any,
) -> Any:
    """A dataclass field that is a command-line option. ``default`` is the field's default and the
    parser's (a list default is copied for each instance); ``group``: the title of the argument group
    it is listed under (``help`` a function: called when the parser is built, for a help that names
    this machine's default); ``empty_ok``: an empty value is the command's to read (a text option with no
    default is otherwise refused empty, naming it: see ``commandkit.command_outputs``); ``inverse``:
    a ``bool`` field whose flag (the first of ``flags``, a ``store_true`` switch, default off) says
    the opposite (``resume`` is True unless ``--overwrite`` is given); ``after``: listed right
    after that field's options, not where declared (the class's positional arguments keep their
    order); the remaining keywords go to ``add_argument`` as they are."""
    meta = {
        "flags": flags,
        "help": help,
        "positional": positional,
        "exclusive": exclusive,
        "exclusive_required": exclusive_required,
        "group": group,
        "empty_ok": empty_ok,
        "inverse": inverse,
        "after": after,
        "argparse": argparse_settings,
    }
    if inverse:
        if not flags or argparse_settings or positional:
            raise ValueError("an inverse option is a switch named by its flag: option('--flag', inverse=True)")
        meta["argparse"] = {"action": "store_true", "default": False}
        return field(default=True, metadata={_OPTION: meta})
    if isinstance(default, (list, dict, set)):
        value = default
        return field(default_factory=lambda: type(value)(value), metadata={_OPTION: meta})
    return field(default=default, metadata={_OPTION: meta})


def group(
    cls: Type[Any],
    title: Optional[str] = None,
    description: Optional[str] = None,
    last: bool = False,
    given: bool = False,
    make: Optional[Callable[[Any], Any]] = None,
    after: Optional[str] = None,
) -> Any:
    """A nested dataclass of options: with a title, an argument group of the parser; without, its
    options are listed with the enclosing ones. ``last``: listed after every other option of the
    class; ``given``: the field holds not the group's options but what the caller makes of them
    (``from_namespace`` is given it; the field has no default); ``make``: the field holds
    ``make(group options)`` (e.g. a selection rule made of ``--cti-std`` and ``--cti-top-k``);
    ``after`` as ``option``'s."""
    meta = {
        _GROUP: {
            "title": title,
            "description": description,
            "cls": cls,
            "last": last,
            "given": given,
            "make": make,
            "after": after,
        }
    }
    if given:
        return field(metadata=meta)
    if make is not None:
        return field(default_factory=lambda: make(cls()), metadata=meta)
    return field(default_factory=cls, metadata=meta)


def _group_class(cls: Type[Any], f: Field) -> Type[Any]:
    return f.metadata[_GROUP]["cls"]


def _in_order(cls: Type[Any]) -> List[Field]:
    """``cls``'s fields in the order the parser lists them: declared order, a field declared
    ``after`` another right after it (and after those moved there before it), ``last`` groups last."""
    meta = lambda f: f.metadata.get(_GROUP) or f.metadata.get(_OPTION) or {}  # noqa: E731
    every = fields(cls)
    late = [f for f in every if meta(f).get("last")]
    order = [f for f in every if f not in late and not meta(f).get("after")]
    moved: Dict[str, int] = {}
    for f in every:
        target = meta(f).get("after")
        if target:
            at = next(i for i, g in enumerate(order) if g.name == target) + 1 + moved.get(target, 0)
            order.insert(at, f)
            moved[target] = moved.get(target, 0) + 1
    return order + late


_NUMBERS = (int, float)


def _annotation_type(cls: Type[Any], f: Field) -> Optional[Callable[[str], Any]]:
    """argparse's ``type`` for a field: its annotation's number type (int, float; within
    Optional[...] or List[...]), else None (text, switches, anything else)."""
    hint: Any = f.type
    if isinstance(hint, str):  # ``from __future__ import annotations``: read in the class's module
        import sys
        import typing

        scope = {**vars(typing), **vars(sys.modules[cls.__module__])}
        try:
            hint = eval(hint, scope)  # an annotation of the package's own source
        except Exception:  # a name only a type checker sees (imported under TYPE_CHECKING): no number
            return None
    if get_origin(hint) is Union:
        inner = [a for a in get_args(hint) if a is not type(None)]
        hint = inner[0] if len(inner) == 1 else None
    if get_origin(hint) in (list, List, tuple):
        inner = [a for a in get_args(hint) if a is not Ellipsis]
        hint = inner[0] if len(set(inner)) == 1 else None
    return hint if hint in _NUMBERS else None


def _default(f: Field) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return None


def add_options(
    parser: argparse.ArgumentParser, cls: Type[Any], container: Any = None, _groups: Optional[Dict[Any, Any]] = None
) -> argparse.ArgumentParser:
    """Add every option field of ``cls`` (nested groups included), in declaration order, to
    ``parser`` (or to ``container``, an argument group of it)."""
    container = parser if container is None else container
    groups: Dict[Any, Any] = {} if _groups is None else _groups
    for f in _in_order(cls):
        if _GROUP in f.metadata:
            meta = f.metadata[_GROUP]
            inner = container
            if meta["title"] is not None:
                inner = groups.get(meta["title"]) or parser.add_argument_group(meta["title"], meta["description"])
                groups[meta["title"]] = inner
            add_options(parser, _group_class(cls, f), inner, groups)
            continue
        if _OPTION not in f.metadata:
            continue
        meta = f.metadata[_OPTION]
        where = container
        if meta["group"] is not None:
            where = groups.get(meta["group"]) or parser.add_argument_group(meta["group"])
            groups[meta["group"]] = where
        if meta["exclusive"] is not None:
            key = ("exclusive", meta["exclusive"])
            if key not in groups:
                groups[key] = where.add_mutually_exclusive_group(required=meta["exclusive_required"])
            where = groups[key]
        settings = dict(meta["argparse"])
        default = False if meta["inverse"] else _default(f)
        if "type" not in settings and settings.get("action", "store") in ("store", "append"):
            number = _annotation_type(cls, f)
            if number is not None:
                settings["type"] = number
        help = meta["help"]() if callable(meta["help"]) else meta["help"]
        if meta["positional"]:
            where.add_argument(f.name, help=help, **settings).empty_ok = meta["empty_ok"]
            continue
        flags = meta["flags"] or ("--" + f.name.replace("_", "-"),)
        if settings.get("action") not in ("help", "version") and (default is not None or "default" in settings):
            settings.setdefault("default", default)
        if "dest" not in settings and flags[0].lstrip("-").replace("-", "_") != f.name and not meta["inverse"]:
            settings["dest"] = f.name
        where.add_argument(*flags, help=help, **settings).empty_ok = meta["empty_ok"]
    return parser


def dest(f: Field) -> str:
    """The name a parsed namespace holds an option field's value under."""
    meta = f.metadata[_OPTION]
    if meta["inverse"]:
        return meta["flags"][0].lstrip("-").replace("-", "_")
    return meta["argparse"].get("dest", f.name)


def option_fields(cls: Type[Any]) -> Dict[str, Field]:
    """Every option field of ``cls`` and of its nested groups, by dest."""
    out: Dict[str, Field] = {}
    for f in fields(cls):
        if _GROUP in f.metadata:
            out.update(option_fields(_group_class(cls, f)))
        elif _OPTION in f.metadata:
            out[dest(f)] = f
    return out


def from_namespace(cls: Type[T], namespace: Any, **given: Any) -> T:
    """``cls`` (nested groups built too) from parsed arguments (or any object holding the values as
    attributes, e.g. another options object): each field from the attribute of its name (an
    ``inverse`` option: the opposite of its flag's), unless ``given``; a field with no such
    attribute keeps its default. A ``given`` group must be given."""
    values: Dict[str, Any] = {}
    for f in fields(cls):
        if not f.init:
            continue
        if f.name in given:
            values[f.name] = given[f.name]
        elif _GROUP in f.metadata:
            if f.metadata[_GROUP]["given"]:
                raise TypeError(f"{cls.__name__}: {f.name} is made by the caller from its options: give it")
            values[f.name] = group_value(f, namespace)
        elif _OPTION in f.metadata and hasattr(namespace, dest(f)):
            value = getattr(namespace, dest(f))
            values[f.name] = (not value) if f.metadata[_OPTION]["inverse"] else value
        elif hasattr(namespace, f.name):
            values[f.name] = getattr(namespace, f.name)
    return cls(**values)


def from_keywords(
    cls: Type[T],
    options: Optional[T],
    keywords: Dict[str, Any],
    build: Optional[Callable[[Type[T], Any, Dict[str, Any]], T]] = None,
) -> T:
    """A Python API's options: ``options`` as given, or ``cls`` made from ``keywords`` (the names
    of its fields, or of its command line's options: ``overwrite`` or ``resume``), by ``build(cls,
    keywords as attributes, those naming fields)`` (default: ``from_namespace``). An unknown
    keyword, or both, is a TypeError, as a function call's."""
    from types import SimpleNamespace

    if options is not None:
        if keywords:
            raise TypeError(f"give {cls.__name__} or its options as keywords, not both")
        return options
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(keywords) - names - set(option_fields(cls)))
    if unknown:
        raise TypeError(f"{cls.__name__}: unknown options: {', '.join(unknown)}")
    named = {k: v for k, v in keywords.items() if k in names}
    if build is None:
        return from_namespace(cls, SimpleNamespace(**keywords), **named)
    return build(cls, SimpleNamespace(**keywords), named)


def group_value(f: Field, namespace: Any) -> Any:
    """The value of the group field ``f`` from parsed arguments: its options object, or what
    ``make`` makes of it."""
    meta = f.metadata[_GROUP]
    options = from_namespace(meta["cls"], namespace)
    return options if meta["make"] is None else meta["make"](options)


def group_fields(cls: Type[Any]) -> List[Tuple[Field, bool]]:
    """``cls``'s nested groups: (the field, whether the caller gives its value)."""
    return [(f, f.metadata[_GROUP]["given"]) for f in fields(cls) if _GROUP in f.metadata]


def check_required(options: Any) -> None:
    """A library caller's options object lacking a ``required=True`` option (its default is None,
    for the parser): the TypeError a missing argument of a function call is."""
    missing = [
        f.name
        for f in fields(options)
        if _OPTION in f.metadata
        and f.metadata[_OPTION]["argparse"].get("required")
        and getattr(options, f.name) is None
    ]
    if missing:
        raise TypeError(f"{type(options).__name__}: missing required options: {', '.join(missing)}")


def flat(options: Any) -> Dict[str, Any]:
    """The option values of a (nested) options object, by dest: what a namespace would hold."""
    out: Dict[str, Any] = {}
    for f in fields(options):
        value = getattr(options, f.name)
        if _GROUP in f.metadata:
            if not f.metadata[_GROUP]["given"] and f.metadata[_GROUP]["make"] is None:
                out.update(flat(value))
        elif _OPTION in f.metadata:
            out[dest(f)] = (not value) if f.metadata[_OPTION]["inverse"] else value
    return out


def namespace(options: Any, **more: Any) -> argparse.Namespace:
    """An argparse namespace of an options object's values (for code that reads ``args.x``)."""
    return argparse.Namespace(**flat(options), **more)


def defaults(cls: Type[Any]) -> Dict[str, Any]:
    """The declared defaults of ``cls``'s fields (nested groups' included)."""
    return {name: False if f.metadata[_OPTION]["inverse"] else _default(f) for name, f in option_fields(cls).items()}


def parse_options(
    cls: Type[T],
    words: Sequence[str],
    prog: Optional[str] = None,
    error: Optional[Callable[[str], Any]] = None,
    **given: Any,
) -> T:
    """``cls`` from a list of words typed by a user (an option string such as a Make variable's):
    the options in ``given`` (by dest) are set, not parsed, and need not be typed. ``error`` is
    called with argparse's message instead of a usage dump and exit."""

    class Parser(argparse.ArgumentParser):
        def error(self, message: str):
            if error is not None:
                error(message)
            super().error(message)

    parser = add_options(Parser(prog=prog, add_help=False), cls)
    for action in parser._actions:
        if action.dest in given:
            action.required = False
    return from_namespace(cls, parser.parse_args(list(words), argparse.Namespace(**given)))


__all__ = [
    "Dataclass",
    "add_options",
    "check_required",
    "defaults",
    "dest",
    "flat",
    "from_keywords",
    "from_namespace",
    "group",
    "group_fields",
    "group_value",
    "namespace",
    "option",
    "option_fields",
    "parse_options",
]
