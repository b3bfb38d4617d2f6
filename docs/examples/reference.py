"""The reference pages' generated parts, made from the code so that they cannot drift from it.

- ``<!-- cli:PROG-SUB -->``: a command's usage and options, its ``--help`` as the parser prints it,
  and for a command with subcommands the table of them, linked to their pages. The parsers are
  walked by ``tests/cli_surface.py`` (the walk that also guards the command-line surface).
- ``<!-- make:reference -->``: every ``make`` target with the variables it reads, from the
  ``## `` comments of the Makefile and of ``recipes/slurm/slurm.mk`` (``## target NAME: ...``
  above a target, ``## uses: VARIABLES``, ``## var NAME: ...``; continuation lines are indented).
- ``<!-- errors:codes -->``: the table of error codes, from ``commandkit.errors.Code``.

Each command's page is ``docs/reference/`` + its words joined by ``/`` + ``.md``
(``contextual-mt pipeline data``: ``docs/reference/contextual-mt/pipeline/data.md``).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DOCS = os.path.join(ROOT, "docs")
MAKEFILES = ("Makefile", os.path.join("recipes", "slurm", "slurm.mk"))


def surface() -> Dict[str, Dict]:
    """Every command's surface (``tests.cli_surface.current_surface``), by its program name."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from tests.cli_surface import current_surface

    return current_surface()


def page(prog: str) -> str:
    """A command's reference page, relative to ``docs/``."""
    return "reference/" + "/".join(prog.split()) + ".md"


def marker_id(prog: str) -> str:
    return "cli:" + "-".join(prog.split())


def _link(from_page: str, to_page: str) -> str:
    return os.path.relpath(to_page, os.path.dirname(from_page)).replace(os.sep, "/")


def command_block(prog: str, entry: Dict) -> str:
    text = ["```text", entry["help_text"].rstrip("\n"), "```"]
    subs = [o for o in entry["options"] if "subcommands" in o]
    for sub in subs:
        text += ["", "| subcommand | what it does |", "|---|---|"]
        for name in sub["subcommands"]:
            child = f"{prog} {name}"
            about = (sub["help"].get(name) or "").replace("|", "\\|")
            text.append(f"| [`{child}`]({_link(page(prog), page(child))}) | {about} |")
    return "\n".join(text)


def command_blocks(commands: Optional[Dict[str, Dict]] = None) -> Dict[str, str]:
    commands = surface() if commands is None else commands
    return {marker_id(prog): command_block(prog, entry) for prog, entry in commands.items()}


@dataclass
class MakeDoc:
    """The ``## `` documentation of the Makefiles: targets (in file order) and variables."""

    targets: Dict[str, str] = field(default_factory=dict)
    uses: Dict[str, List[str]] = field(default_factory=dict)
    variables: Dict[str, str] = field(default_factory=dict)
    defaults: Dict[str, str] = field(default_factory=dict)
    phony: List[str] = field(default_factory=list)
    rules: List[str] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)


_DOC = re.compile(r"^## (target|var) ([A-Za-z_][\w-]*): (.*)$")


def read_make_doc(paths: Tuple[str, ...] = MAKEFILES) -> MakeDoc:
    doc = MakeDoc()
    for rel in paths:
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        current: Optional[Tuple[str, str]] = None  # (kind, name) whose text continues
        for number, line in enumerate(lines, 1):
            where = f"{rel}:{number}"
            m = _DOC.match(line)
            if m:
                kind, name, text = m.groups()
                book = doc.targets if kind == "target" else doc.variables
                if name in book:
                    doc.problems.append(f"{where}: {kind} {name} documented twice")
                book[name] = text.strip()
                current = (kind, name)
            elif line.startswith("## uses:"):
                if current is None or current[0] != "target":
                    doc.problems.append(f"{where}: '## uses:' outside a target's documentation")
                    continue
                doc.uses.setdefault(current[1], []).extend(line.split(":", 1)[1].split())
                current = ("uses", current[1])
            elif line.startswith("##   ") and current is not None:
                kind, name = current
                if kind == "uses":
                    doc.uses[name].extend(line.split())  # "##" is not a variable name: dropped below
                    doc.uses[name].remove("##")
                else:
                    book = doc.targets if kind == "target" else doc.variables
                    book[name] += " " + line[2:].strip()
            elif line.startswith("##"):
                doc.problems.append(f"{where}: a '## ' comment that is neither '## target', '## var' nor '## uses:'")
            else:
                current = None
                v = re.match(r"^([A-Z][A-Z0-9_]*) \?=(.*)$", line)
                if v:
                    doc.defaults[v.group(1)] = v.group(2).strip()
                if line.startswith(".PHONY:"):
                    doc.phony += line.split(":", 1)[1].split()
                r = re.match(r"^([a-z][a-z0-9-]*):(?!=)", line)
                if r:
                    doc.rules.append(r.group(1))
    return doc


def make_problems(doc: MakeDoc) -> List[str]:
    """What keeps the make reference from being complete: a target without its documentation, a
    documented one that does not exist, a variable read by a target but not documented, ..."""
    problems = list(doc.problems)
    problems += [f"make {t}: no '## target {t}:' documentation" for t in doc.phony if t not in doc.targets]
    problems += [f"make {t}: documented but not a .PHONY target" for t in doc.targets if t not in doc.phony]
    problems += [f"make {t}: in .PHONY but has no rule" for t in doc.phony if t not in doc.rules]
    used = {v for vs in doc.uses.values() for v in vs}
    problems += [f"{v}: used by a target but not documented ('## var {v}:')" for v in sorted(used - set(doc.variables))]
    problems += [f"{v}: documented but no target uses it" for v in sorted(set(doc.variables) - used)]
    problems += [f"{v}: a ?= variable without '## var {v}:'" for v in sorted(set(doc.defaults) - set(doc.variables))]
    return problems


def _linked(text: str, commands: Dict[str, Dict], from_page: str) -> str:
    """``text`` with each backticked command (``contextual-mt pipeline data --vocab-size``) linked to
    the page of the longest command it starts with."""

    def one(m: re.Match) -> str:
        words = m.group(1).split()
        for n in range(len(words), 0, -1):
            prog = " ".join(words[:n])
            if prog in commands:
                return f"[`{m.group(1)}`]({_link(from_page, page(prog))})"
        return m.group(0)

    return re.sub(r"`((?:contextual-mt|muda)(?: [^`]+)?)`", one, text)


def make_block(doc: Optional[MakeDoc] = None, commands: Optional[Dict[str, Dict]] = None) -> str:
    doc = read_make_doc() if doc is None else doc
    commands = surface() if commands is None else commands
    here = "reference/make.md"
    out = []
    for target, text in doc.targets.items():  # in the order of the Makefiles
        text = text[:1].upper() + text[1:]
        out += [f"### `make {target}`", "", _linked(text, commands, here) + ".", ""]
        variables = doc.uses.get(target, [])
        if variables:
            out += ["| variable | default | meaning |", "|---|---|---|"]
            for v in variables:
                default = doc.defaults.get(v, "")
                default = f"`{default}`" if default else ""
                meaning = _linked(doc.variables.get(v, ""), commands, here).replace("|", "\\|")
                out.append(f"| `{v}` | {default} | {meaning} |")
            out.append("")
    return "\n".join(out).rstrip("\n")


def error_codes_block() -> str:
    """The error codes (``commandkit.errors.Code``) as a table: code, name, kind of error."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from commandkit.errors import Code

    rows = ["| Code | Name | The error |", "| --- | --- | --- |"]
    rows += [f"| `{c.value}` | `{c.name}` | {c.about} |" for c in Code]
    return "\n".join(rows)


def blocks() -> Dict[str, str]:
    """Every generated block of the reference pages, by marker id."""
    commands = surface()
    out = command_blocks(commands)
    out["make:reference"] = make_block(commands=commands)
    out["errors:codes"] = error_codes_block()
    return out
