"""Every user error carries its kind: a raise of the one error type (``InputError``) without
``code=`` is a ``Code.INPUT`` (E000, "not yet given a kind"), which a test or a Python caller
cannot tell from another. No package has one left: every raise says its kind."""

import ast
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
ERROR_TYPES = {"InputError"}

PACKAGES = ("contextual_mt", "muda", "docalign", "commandkit")


def sites_without_code(source: str) -> List[int]:
    """The lines of the calls of the error type that give no ``code=``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in ERROR_TYPES and not any(k.arg == "code" for k in node.keywords):
                lines.append(node.lineno)
    return sorted(lines)


def uncoded_sites(package: str) -> Dict[str, List[int]]:
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        found = sites_without_code(path.read_text(encoding="utf-8"))
        if found:
            out[str(path.relative_to(ROOT))] = found
    return out


def test_the_counter_sees_a_site_without_a_code():
    source = (
        "from commandkit.errors import Code, InputError\n"
        "from contextual_mt import errors\n"
        "def f(x):\n"
        "    if x:\n"
        "        raise InputError(f'{x}: bad')\n"
        "    raise errors.InputError('no', code=Code.FORMAT)\n"
        "def g():\n"
        "    return errors.InputError(\n        'made here'\n    )\n"
    )
    assert sites_without_code(source) == [5, 8]


def test_every_error_site_gives_its_code():
    sites = {f: lines for package in PACKAGES for f, lines in uncoded_sites(package).items()}
    assert not sites, "raise sites without code= (give each its Code, commandkit/errors.py): " + ", ".join(
        f"{f}:{lines}" for f, lines in sites.items()
    )
