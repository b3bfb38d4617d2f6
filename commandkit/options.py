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
        beam: int = option(default=5, type=int)
        run: Run = group(Run)  # its options join Args's; ``group(Run, "title")``: an argument group

    add_options(parser, Args)          # the parser's arguments, in declaration order
    args = from_namespace(Args, ns)    # Args(source=..., beam=..., run=Run(...))

A field's flags default to ``--field-name``; ``positional=True`` makes it positional; ``exclusive``
puts it in a mutually exclusive group of that name (``exclusive_required`` marks the group
required); ``argparse.SUPPRESS`` and every other ``add_argument`` keyword pass through unchanged.
"""

from __future__ import annotations

import argparse
from dataclasses import MISSING, Field, field, fields
from typing import Any, Callable, ClassVar, Dict, Optional, Protocol, Sequence, Type, TypeVar


class _Dataclass(Protocol):
    """What every dataclass is (as typeshed's DataclassInstance): for the options classes."""

    __dataclass_fields__: ClassVar[Dict[str, Any]]


T = TypeVar("T", bound=_Dataclass)  # an options dataclass

_OPTION = "commandkit.option"
_GROUP = "commandkit.group"


def option(
    *flags: str,
    default: Any = None,
    help: Optional[str] = None,
    positional: bool = False,
    exclusive: Optional[str] = None,
    exclusive_required: bool = False,
    group: Optional[str] = None,
    empty_ok: bool = False,
    **argparse_settings: Any,
) -> Any:
    """A dataclass field that is a command-line option. ``default`` is the field's default and the
    parser's (a list default is copied for each instance); ``group``: the title of the argument group
    it is listed under; ``empty_ok``: an empty value is the command's to read (a text option with no
    default is otherwise refused empty, naming it: see ``commandkit.command_outputs``); the remaining
    keywords go to ``add_argument`` as they are."""
    meta = {
        "flags": flags,
        "help": help,
        "positional": positional,
        "exclusive": exclusive,
        "exclusive_required": exclusive_required,
        "group": group,
        "empty_ok": empty_ok,
        "argparse": argparse_settings,
    }
    if isinstance(default, (list, dict, set)):
        value = default
        return field(default_factory=lambda: type(value)(value), metadata={_OPTION: meta})
    return field(default=default, metadata={_OPTION: meta})


def group(cls: Type[Any], title: Optional[str] = None, description: Optional[str] = None) -> Any:
    """A nested dataclass of options: with a title, an argument group of the parser; without, its
    options are listed with the enclosing ones."""
    return field(default_factory=cls, metadata={_GROUP: {"title": title, "description": description}})


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
    for f in fields(cls):
        if _GROUP in f.metadata:
            meta = f.metadata[_GROUP]
            inner = container
            if meta["title"] is not None:
                inner = groups.get(meta["title"]) or parser.add_argument_group(meta["title"], meta["description"])
                groups[meta["title"]] = inner
            add_options(parser, f.type if isinstance(f.type, type) else _resolve(cls, f), inner, groups)
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
        default = _default(f)
        if meta["positional"]:
            where.add_argument(f.name, help=meta["help"], **settings).empty_ok = meta["empty_ok"]
            continue
        flags = meta["flags"] or ("--" + f.name.replace("_", "-"),)
        if settings.get("action") not in ("help", "version") and (default is not None or "default" in settings):
            settings.setdefault("default", default)
        if "dest" not in settings and flags[0].lstrip("-").replace("-", "_") != f.name:
            settings["dest"] = f.name
        where.add_argument(*flags, help=meta["help"], **settings).empty_ok = meta["empty_ok"]
    return parser


def _resolve(cls: Type[Any], f: Field) -> Type[Any]:
    """A nested group's class where ``from __future__ import annotations`` left its type a string."""
    import typing

    return typing.get_type_hints(cls)[f.name]


def option_fields(cls: Type[Any]) -> Dict[str, Field]:
    """Every option field of ``cls`` and of its nested groups, by dest."""
    out: Dict[str, Field] = {}
    for f in fields(cls):
        if _GROUP in f.metadata:
            out.update(option_fields(f.type if isinstance(f.type, type) else _resolve(cls, f)))
        elif _OPTION in f.metadata:
            out[f.name] = f
    return out


def from_namespace(cls: Type[T], namespace: Any, **given: Any) -> T:
    """``cls`` (nested groups built too) from parsed arguments (or any object holding the values as
    attributes, e.g. another options object): each field from the attribute of its name, unless
    ``given``; a field with no such attribute keeps its default."""
    values: Dict[str, Any] = {}
    for f in fields(cls):
        if not f.init:
            continue
        if f.name in given:
            values[f.name] = given[f.name]
        elif _GROUP in f.metadata:
            values[f.name] = from_namespace(f.type if isinstance(f.type, type) else _resolve(cls, f), namespace)
        elif hasattr(namespace, f.name):
            values[f.name] = getattr(namespace, f.name)
    return cls(**values)


def flat(options: Any) -> Dict[str, Any]:
    """The option values of a (nested) options object, by dest: what a namespace would hold."""
    out: Dict[str, Any] = {}
    for f in fields(options):
        value = getattr(options, f.name)
        if _GROUP in f.metadata:
            out.update(flat(value))
        elif _OPTION in f.metadata:
            out[f.name] = value
    return out


def namespace(options: Any, **more: Any) -> argparse.Namespace:
    """An argparse namespace of an options object's values (for code that reads ``args.x``)."""
    return argparse.Namespace(**flat(options), **more)


def defaults(cls: Type[Any]) -> Dict[str, Any]:
    """The declared defaults of ``cls``'s fields (nested groups' included)."""
    return {name: _default(f) for name, f in option_fields(cls).items()}


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
    "add_options",
    "defaults",
    "flat",
    "from_namespace",
    "group",
    "namespace",
    "option",
    "option_fields",
    "parse_options",
]
