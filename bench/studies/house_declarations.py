"""How many places declare each concept (issue 52's before/after figures), read from the source.

    python -m bench.studies.house_declarations TREE [--json FILE]

TREE: a source tree (this checkout, or an earlier commit's: ``git archive COMMIT | tar -x -C
/tmp/old``); the structural figures of issue 37 are bench/studies/house_figures.py's.

Counted, each from the code as it stands (no list of expected names):

- options: the glue keeping an option's two declarations in step (an ``option(default=
  XOptions.field)`` or ``keyword_default(...)``), ``option(type=...)`` beside an annotation that
  already says it, and options read off an argparse namespace (``args.x``) in command modules;
- stages: the places a study stage is described (Makefiles, sbatch files, ``cli/pipeline``
  modules, ``*_stage.py`` modules, make-variable tables);
- fairseq: the files that import fairseq, and their folders;
- legacy: the files that read records of earlier versions (names with legacy/upgrade);
- errors: ``except`` clauses catching ``InputError`` that raise another error; excepthooks and
  ``SystemExit`` raised outside the command-line packages.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
from collections import Counter
from typing import Dict, Iterator, List, Set, Tuple

from bench import harness

ROOT = "."  # the tree read: set by main
PACKAGES = ("commandkit", "docalign", "muda", "contextual_mt")
OPTION_CLASS = re.compile(r"(Args|Options|Opts)$")


def sources() -> Iterator[Tuple[str, ast.Module]]:
    for package in PACKAGES:
        for folder, _, files in os.walk(os.path.join(ROOT, package)):
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    with open(path, encoding="utf-8") as f:
                        yield os.path.relpath(path, ROOT), ast.parse(f.read(), path)


def option_figures(trees: List[Tuple[str, ast.Module]]) -> Dict:
    """The glue that keeps two declarations of one option in step, and the command functions that
    read options off an argparse namespace instead of a typed object."""
    mirrored, keyword, typed, namespace_reads = [], [], [], []
    for path, tree in trees:
        command_line = "/cli/" in path or path.startswith("muda/cli")
        for node in ast.walk(tree):
            if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Call):
                call = node.value
                name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
                if name == "option":
                    for k in call.keywords:
                        # ``default=AttributeOptions.cti_metric``: the default declared in another class
                        if k.arg == "default" and OPTION_CLASS.search(ast.unparse(k.value).split(".")[0]):
                            mirrored.append(f"{path}:{node.lineno}")
                        if k.arg == "type":  # beside an annotation that already says it
                            typed.append(f"{path}:{node.lineno}")
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("keyword_default"):
                keyword.append(f"{path}:{node.lineno}")
            if command_line and isinstance(node, ast.Attribute) and ast.unparse(node.value) == "args":
                namespace_reads.append(f"{path}:{node.lineno}")
    return {
        "default_from_another_class": len(mirrored),
        "keyword_default": len(keyword),
        "type_beside_annotation": len(typed),
        "namespace_reads_in_commands": len(namespace_reads),
        "where": {"default_from_another_class": mirrored, "keyword_default": keyword},
    }


def written(path: str) -> bool:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return "make_rules" in f.read(600)


def stage_figures() -> Dict:
    def listing(folder: str, pattern: str) -> List[str]:
        path = os.path.join(ROOT, folder)
        if not os.path.isdir(path):
            return []
        return sorted(os.path.join(folder, n) for n in os.listdir(path) if re.search(pattern, n))

    places = {
        "makefiles": listing(".", r"^Makefile$") + listing("recipes", r"\.mk$") + listing("recipes/slurm", r"\.mk$"),
        # a file written from the stage table says so in its header: only the others are by hand
        "sbatch_files_by_hand": [p for p in listing("recipes/slurm", r"\.sbatch$") if not written(p)],
        "cli_pipeline_modules": [p for p in listing("contextual_mt/cli/pipeline", r"\.py$") if "__init__" not in p],
        "stage_modules": listing("contextual_mt/pipeline", r"_stage\.py$"),
    }
    tables = 0
    for path in listing("contextual_mt/pipeline", r"\.py$"):
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            tables += len(re.findall(r"^[A-Z_]*(MAKE_VARIABLES|STAGES)\s*[:=]", f.read(), re.M))
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        makefile = f.read()
    # the Makefile's stage targets: by hand, or in the block written from the stage table
    generated = re.search(r"^# stages: written from.*?^# /stages", makefile, re.M | re.S)
    return {
        **{k: len(v) for k, v in places.items()},
        "stage_tables": tables,
        "makefile_stage_rules_generated": generated is not None,
        "files": places,
    }


def imports(tree: ast.Module) -> Set[str]:
    out: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
    return out


def fairseq_figures(trees: List[Tuple[str, ast.Module]]) -> Dict:
    files = sorted(p for p, t in trees if any(m == "fairseq" or m.startswith("fairseq.") for m in imports(t)))
    return {"files": len(files), "folders": sorted({os.path.dirname(p) for p in files}), "list": files}


def legacy_figures(trees: List[Tuple[str, ast.Module]]) -> Dict:
    files = []
    for path, tree in trees:
        names = (
            {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            | {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
            | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        )
        if any(re.search(r"legacy|upgrade", n, re.I) for n in names) and "migrate" not in path:
            files.append(path)
    return {"files": len(files), "list": sorted(files)}


def error_figures(trees: List[Tuple[str, ast.Module]]) -> Dict:
    rewraps, hooks, exits = [], [], []
    for path, tree in trees:
        command_line = "/cli/" in path or path.startswith("muda/cli")
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                caught = ast.unparse(node.type)
                # the one error type under either of its names (ContextualMTError: its deprecated alias)
                named = "InputError" in caught or "ContextualMTError" in caught
                if named and any(isinstance(n, ast.Raise) and n.exc for n in ast.walk(node)):
                    rewraps.append(f"{path}:{node.lineno}")
            if isinstance(node, ast.FunctionDef) and "excepthook" in node.name:
                hooks.append(f"{path}:{node.lineno}")
            if isinstance(node, ast.Raise) and node.exc is not None and not command_line:
                name = ast.unparse(node.exc.func if isinstance(node.exc, ast.Call) else node.exc)
                if name == "SystemExit":
                    exits.append(f"{path}:{node.lineno}")
    error_classes = Counter()
    for path, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                re.search(r"(Error|Exception)$", ast.unparse(b)) for b in node.bases
            ):
                error_classes[path] += 1
    return {
        "input_error_rewrapped": len(rewraps),
        "excepthooks": len(hooks),
        "system_exit_outside_cli": len(exits),
        "error_classes": sum(error_classes.values()),
        "where": {"rewraps": rewraps, "excepthooks": hooks, "system_exit": exits},
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tree", help="the source tree to read")
    ap.add_argument("--json", help="write every figure and list here")
    args = harness.parse(ap, argv)
    global ROOT
    ROOT = os.path.abspath(args.tree)
    trees = list(sources())
    figures = {
        "options": option_figures(trees),
        "stages": stage_figures(),
        "fairseq": fairseq_figures(trees),
        "legacy": legacy_figures(trees),
        "errors": error_figures(trees),
    }
    o, s, e = figures["options"], figures["stages"], figures["errors"]
    print(
        f"options: a default taken from another options class {o['default_from_another_class']} times, "
        f"keyword_default {o['keyword_default']}, type= beside an annotation {o['type_beside_annotation']}, "
        f"args.x read in command modules {o['namespace_reads_in_commands']}"
    )
    print("stage descriptions: " + ", ".join(f"{k} {v}" for k, v in s.items() if k != "files"))
    print(f"fairseq: imported by {figures['fairseq']['files']} files in {len(figures['fairseq']['folders'])} folders")
    print(f"legacy readers: {figures['legacy']['files']} files")
    print(
        f"errors: InputError re-wrapped {e['input_error_rewrapped']} times, {e['excepthooks']} excepthooks, "
        f"{e['system_exit_outside_cli']} SystemExit outside the command line, {e['error_classes']} error classes"
    )
    if args.json:
        harness.write_json(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
