"""The files written from the stage table (``stages.py``): the Makefile's per-stage targets (the
block between its ``# stages:`` markers) and the Slurm job scripts (``recipes/slurm/*.sbatch``,
from the one template ``recipes/slurm/job.sbatch.in``). Run from the repository root after a change
to the table: ``python -m contextual_mt.pipeline.make_rules`` (``--check``: exit 1 when a file is
not what the table makes; tests/contextual_mt/pipeline/test_make_rules.py checks it too)."""

from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Optional

from commandkit.console import run_command
from contextual_mt.errors import Code, InputError
from contextual_mt.pipeline.stages import EVERY, MakeTarget, MakeVar, Stage

BEGIN = "# stages: written from contextual_mt/pipeline/stages.py by `python -m contextual_mt.pipeline.make_rules`"
END = "# /stages"
TEMPLATE = os.path.join("recipes", "slurm", "job.sbatch.in")


def _option(v: MakeVar) -> str:
    """The words one Make variable adds to a target's command line."""
    value = f"$(call quote,$({v.var}))" if v.quote else f"$({v.var})"
    words = v.flag if v.switch else (value if not v.flag else f"{v.flag}{'=' if v.joined else ' '}{value}")
    words = " ".join([words, *(_option(w) for w in v.then)])
    if v.when == "always":
        return words
    test = f"$(call given,{v.var})" if v.when == "given" else f"$({v.var})"
    return f"$(if {test},{words},)"


def _comment(t: MakeTarget) -> List[str]:
    first, *rest = t.doc.split("\n")
    return [f"## target {t.name}: {first}", *(f"##   {line}" for line in rest), f"## uses: {t.uses}"]


def target_rule(t: MakeTarget) -> str:
    """``make NAME``: its documentation, and a recipe running its pipeline command."""
    command = " ".join(w for w in (t.command, t.args, *(_option(v) for v in t.options)) if w)
    recipe = ["$(need_venv)", *(["$(need_pair)"] if t.pair else []), *t.checks, f"$(STAGE) {command}"]
    return "\n".join([*_comment(t), f"{t.name}:", *(f"\t{line}" for line in recipe)])


def makefile_block() -> str:
    """The Makefile's per-stage targets, in the table's order."""
    rules = [target_rule(t) for s in EVERY for t in s.targets]
    return "\n\n".join([BEGIN, *rules, END])


def with_block(makefile: str) -> str:
    """The Makefile's text with its stage block written from the table."""
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not pattern.search(makefile):
        raise InputError(f"Makefile: no block between '{BEGIN}' and '{END}'", code=Code.FORMAT)
    return pattern.sub(lambda _: makefile_block(), makefile)


def sbatch_scripts(template: str) -> Dict[str, str]:
    """recipes/slurm/NAME.sbatch of every job of the chain, from the template: ``@TARGET@`` the make
    target the job runs, ``@HEADER@`` its usage, ``@SBATCH@`` its own ``#SBATCH`` lines, ``@BODY@``
    how it runs make (a job array computes its shard; a training job requeues itself)."""
    out: Dict[str, str] = {}
    for s in EVERY:
        if s.chain and s.script not in out:
            out[s.script] = _fill(template, s)
    return out


def _fill(template: str, s: Stage) -> str:
    parts = _parts(template)
    kind = "array" if s.sharded else "requeue" if s.requeue else "plain"
    text = parts["main"]
    for key in ("HEADER", "SBATCH", "BODY"):
        text = text.replace(f"@{key}@\n", parts[f"{key.lower()}:{kind}"])
    words = {"SCRIPT": s.script, "JOB": s.script[: -len(".sbatch")], "TARGET": s.make, "STAGE": s.name}
    return re.sub(r"@([A-Z]+)@", lambda m: words[m.group(1)], text)


def _parts(template: str) -> Dict[str, str]:
    """The template's sections: the script, then ``#@ NAME`` sections of the parts it takes."""
    parts: Dict[str, str] = {}
    name: str = "main"
    lines: List[str] = []
    for line in template.splitlines(keepends=True):
        m = re.match(r"#@ ([\w:]+)\n", line)
        if m:
            parts[name] = "".join(lines)
            name, lines = m.group(1), []
        else:
            lines.append(line)
    parts[name] = "".join(lines)
    return parts


def _files(root: str) -> Dict[str, str]:
    """path (relative to ``root``) -> the text the table makes."""
    with open(os.path.join(root, "Makefile"), encoding="utf-8") as f:
        out = {"Makefile": with_block(f.read())}
    with open(os.path.join(root, TEMPLATE), encoding="utf-8") as f:
        template = f.read()
    for name, text in sbatch_scripts(template).items():
        out[os.path.join("recipes", "slurm", name)] = text
    return out


def stale(root: str = ".") -> List[str]:
    """The files that are not what the table makes (relative to ``root``)."""
    out = []
    for name, text in _files(root).items():
        path = os.path.join(root, name)
        if not os.path.isfile(path):
            out.append(name)
            continue
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                out.append(name)
    return out


def write(root: str = ".") -> List[str]:
    """Write the Makefile's block and the sbatch scripts; return those that changed."""
    changed = stale(root)
    for name, text in _files(root).items():
        if name in changed:
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
    return changed


def main(argv: Optional[List[str]] = None) -> int:
    # the one boundary (``commandkit.console.report``): a user's error is one line and an exit status
    return run_command(_run, sys.argv[1:] if argv is None else argv)


def _run(argv: List[str]) -> int:
    if argv not in ([], ["--check"]):  # a typo must not rewrite the Makefile
        raise InputError(
            f"python -m {__name__}: unknown arguments {' '.join(argv)!r} (none: write the files; --check: compare)",
            code=Code.OPTION_VALUE,
        )
    if argv == ["--check"]:
        out = stale()
        for name in out:
            print(f"error: {name} is not what contextual_mt/pipeline/stages.py makes; run python -m {__name__}")
        return 1 if out else 0
    print("changed: " + (", ".join(write()) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
