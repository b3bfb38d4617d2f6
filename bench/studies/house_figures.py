"""The house's structural figures for a source tree (issue 37's before/after): imports from a
lower floor to a higher one, import cycles between packages, modules calling ``add_argument``,
modules using ``StageRecord``, and the history names. Run on a checkout or an exported commit:

    python -m bench.studies.house_figures .                          # this tree
    git archive e95c3c7 | tar -x -C /tmp/old && python -m bench.studies.house_figures /tmp/old

Floors are tests/test_architecture.py's (of this checkout); an older tree's modules that have
moved since are given their new floor (``MOVED``)."""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

from bench import harness
from tests import test_architecture as arch

# e95c3c7's modules that are backends (or the command layer) now
MOVED = {
    "contextual_mt.hf": "contextual_mt.backends",
    "contextual_mt.inference.fairseq_translator": "contextual_mt.backends",
    "contextual_mt.inference.fairseq_scoring": "contextual_mt.backends",
    "contextual_mt.inference.checkpoint": "contextual_mt.backends",
    "contextual_mt.inference.beam_search": "contextual_mt.backends",
    "contextual_mt.inference.codec": "contextual_mt.backends",
    "contextual_mt.attribution.fairseq_backend": "contextual_mt.backends",
    "contextual_mt.attribution.hf_backend": "contextual_mt.backends",
    "contextual_mt.pipeline_cli": "contextual_mt.cli",
}


def floor(module: str) -> int:
    for old, new in MOVED.items():
        if module == old or module.startswith(old + "."):
            return arch.floor_of(new)
    return arch.floor_of(module)


def cycles(graph):
    """The strongly connected components of more than one package (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)  # the visiting order
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def calls(path: Path, name: str) -> int:
    return sum(
        isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(n.func, "id", None)) == name
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tree")
    harness.add_arguments(p, repeats=None)
    args = harness.parse(p, argv)
    root = Path(args.tree).resolve()
    packages = tuple(n for n in ("contextual_mt", "muda", "commandkit") if (root / n).is_dir())
    modules = arch.module_files(root, packages)
    graph = arch.import_graph(root, packages)
    upward = sorted(f"{m} -> {t}" for m, ts in graph.items() for t in ts if floor(t) > floor(m))
    components = cycles(arch.package_graph(graph))
    adders = {m: calls(path, "add_argument") for m, path in modules.items()}
    history = re.compile(r"issue \d+|as they always were|DemoFolders|cxmi_fingerprint")
    figures = {
        "tree": str(root),
        "modules": len(modules),
        "upward_imports": len(upward),
        "upward": upward,
        "package_cycles": len(components),
        "cycle_members": components,
        "add_argument_calls": sum(adders.values()),
        "modules_calling_add_argument": sorted(m for m, n in adders.items() if n),
        "stage_record_modules": sorted(
            m
            for m, path in modules.items()
            if re.search(r"\bStageRecord\b", path.read_text(encoding="utf-8")) and not m.endswith("stage_record")
        ),
        "history_names": sorted(
            f"{m}: {h}"
            for m, path in modules.items()
            for h in sorted(set(history.findall(path.read_text(encoding="utf-8"))))
        ),
    }
    print(json.dumps(figures, indent=1))
    harness.finish(args, "studies.house_figures", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
