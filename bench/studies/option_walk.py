"""Issue 52's walk: a stage's options followed through the calls, floor by floor.

    python -m bench.studies.option_walk TREE [--stage attribute --stage muda-eval] [--json FILE]

TREE: a source tree (this checkout, or an earlier commit's: ``git archive COMMIT | tar -x -C
/tmp/old``). Static: read with ``ast``, nothing imported or run. The floors are those that
TREE's ``tests/test_architecture.py`` declares (``FLOORS``).

The walk starts at the function a ``contextual-mt pipeline STAGE`` command runs, with its first
parameter (the parsed options) marked, and follows every call that is given something made from
a marked value (an argument naming a marked name; a name assigned from a marked expression is
marked too, flow-insensitively), into the callee with the matching parameters marked. Calls are
resolved through the modules' imports (function-level ones too): a function, or a class (its
``__post_init__`` / ``__init__``, ``self`` marked). The walk expands the stage's own layers, the
floors from ``contextual_mt.pipeline`` up (the pipeline, the demo, the API, the command line); a
call below them hands the options to the library: it is counted, not followed.

Counted, over every call the walk follows that crosses a floor downwards:

- returns: those whose result the caller keeps (assigns, passes on, returns): something made
  from the options comes back up a floor;
- climbs: in one function, each such call after its first: the options came back up to that
  function and are sent down again (re-built or re-read above and passed down once more).

A function that hands its typed options down once, the floors below doing the rest, adds none.

Not counted: the calls inside a ``raise`` statement (the error's class and its message's helpers,
``raise InputError(missing_message(...))``). The options reach them only to be named in the
message, and the walk ends there: nothing comes back up to be sent down again. Counting them made
the figures follow the error classes' floors, not the options: renaming ``ContextualMTError``
(``contextual_mt.errors``) to ``commandkit``'s ``InputError``, with the same messages and the same
calls, took attribute from 4 climbs to 5 and muda-eval from 6 to 9 (c1d9a45).
"""

from __future__ import annotations

import argparse
import ast
import os
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from bench import harness

PACKAGES = ("commandkit", "docalign", "muda", "contextual_mt")
EXPANDED_FROM = "contextual_mt.pipeline"  # the lowest floor the walk expands
# the function each stage's command runs, in the trees of each pass: the first that TREE has
ENTRIES: Dict[str, Tuple[str, ...]] = {
    "attribute": (
        "contextual_mt.cli.pipeline.run:attribute",
        "contextual_mt.cli.pipeline.attribute:attribute",
    ),
    "muda-eval": (
        "contextual_mt.cli.pipeline.run:muda_eval",
        "contextual_mt.cli.pipeline.muda_eval:muda_eval",
    ),
}


@dataclass
class Module:
    name: str
    tree: ast.Module
    defs: Dict[str, ast.AST] = field(default_factory=dict)  # top-level functions and classes
    imports: Dict[str, str] = field(default_factory=dict)  # local name -> "module" or "module.attr"


def _imports(node: ast.AST, here: str, is_package: bool) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Import):
            for a in n.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(n, ast.ImportFrom):
            base = n.module or ""
            if n.level:
                parts = here.split(".") if is_package else here.split(".")[:-1]
                parts = parts[: len(parts) - (n.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            for a in n.names:
                out[a.asname or a.name] = f"{base}.{a.name}"
    return out


def read_tree(root: str) -> Dict[str, Module]:
    modules: Dict[str, Module] = {}
    for package in PACKAGES:
        for folder, _, files in os.walk(os.path.join(root, package)):
            for file in sorted(files):
                if not file.endswith(".py"):
                    continue
                path = os.path.join(folder, file)
                parts = os.path.relpath(path, root)[: -len(".py")].split(os.sep)
                is_package = parts[-1] == "__init__"
                name = ".".join(parts[:-1] if is_package else parts)
                with open(path, encoding="utf-8") as f:
                    tree = ast.parse(f.read(), path)
                m = Module(name, tree)
                m.defs = {d.name: d for d in tree.body if isinstance(d, (ast.FunctionDef, ast.ClassDef))}
                # module-level imports, those under ``if TYPE_CHECKING:`` too (an annotation's class)
                heads = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
                heads += [
                    s for i in tree.body if isinstance(i, ast.If) for s in i.body if isinstance(s, ast.ImportFrom)
                ]
                top = ast.Module(body=heads, type_ignores=[])
                m.imports = _imports(top, name, is_package)
                m.is_package = is_package  # type: ignore[attr-defined]
                modules[name] = m
    return modules


def read_floors(root: str) -> Tuple[Tuple[str, ...], ...]:
    """``FLOORS`` of TREE's tests/test_architecture.py (a literal)."""
    with open(os.path.join(root, "tests", "test_architecture.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "FLOORS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit(f"{root}: tests/test_architecture.py declares no FLOORS")


def floor_of(module: str, floors: Tuple[Tuple[str, ...], ...]) -> Optional[int]:
    best: Optional[Tuple[int, str]] = None
    for level, names in enumerate(floors):
        for name in names:
            if (module == name or module.startswith(name + ".")) and (best is None or len(name) > len(best[1])):
                best = (level, name)
    return None if best is None else best[0]


@dataclass
class Call:
    caller: str
    callee: str
    caller_floor: int
    callee_floor: int
    kept: bool
    line: int


class Walk:
    def __init__(self, modules: Dict[str, Module], floors: Tuple[Tuple[str, ...], ...]) -> None:
        self.modules, self.floors = modules, floors
        self.lowest = floor_of(EXPANDED_FROM, floors)
        self.calls: List[Call] = []
        self.climbs = 0
        self.seen: Set[Tuple[str, FrozenSet[str]]] = set()

    def resolve(self, target: str) -> Optional[Tuple[str, ast.AST]]:
        """'module.attr' or 'module' -> (module, its def)."""
        if "." in target:
            mod, attr = target.rsplit(".", 1)
            m = self.modules.get(mod)
            if m is not None:
                if attr in m.defs:
                    return mod, m.defs[attr]
                if attr in m.imports and m.imports[attr] != target:  # re-exported
                    return self.resolve(m.imports[attr])
        return None

    def callee(self, call: ast.Call, module: Module, local: Dict[str, str]) -> Optional[Tuple[str, ast.AST]]:
        f = call.func
        if isinstance(f, ast.Name):
            if f.id in local:
                return self.resolve(local[f.id])
            if f.id in module.defs:
                return module.name, module.defs[f.id]
            if f.id in module.imports:
                return self.resolve(module.imports[f.id])
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            base = local.get(f.value.id) or module.imports.get(f.value.id)
            if base is not None and base in self.modules:
                return self.resolve(f"{base}.{f.attr}")
        return None

    def run(self, module: str, name: str) -> None:
        """From the command ``module:name``: when it receives its options object built (its first
        parameter's annotation a class of the tree), that building is the command's first call."""
        fn = self.modules[module].defs[name]
        assert isinstance(fn, ast.FunctionDef)
        first = fn.args.args[0]
        built = None
        if first.annotation is not None:
            hint = first.annotation
            text = hint.value if isinstance(hint, ast.Constant) else ast.unparse(hint)
            m = self.modules[module]
            found = self.resolve(m.imports[text]) if text in m.imports else None
            if found is not None and isinstance(found[1], ast.ClassDef):
                built = found
        self.expand(module, fn, frozenset([first.arg]), name, built=built)

    def expand(
        self,
        module_name: str,
        fn: ast.AST,
        marked: FrozenSet[str],
        qualname: str,
        built: Optional[Tuple[str, ast.AST]] = None,
    ) -> None:
        key = (f"{module_name}:{qualname}", marked)
        if key in self.seen:
            return
        self.seen.add(key)
        module = self.modules[module_name]
        here = floor_of(module_name, self.floors)
        local = _imports(fn, module_name, getattr(module, "is_package", False))
        names = set(marked)
        mentions = lambda node: any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))  # noqa: E731
        changed = True
        while changed:  # names assigned from marked expressions are marked (flow-insensitive)
            changed = False
            for n in ast.walk(fn):
                pairs: List[Tuple[ast.AST, ast.AST]] = []
                if isinstance(n, ast.Assign):
                    pairs = [(t, n.value) for t in n.targets]
                elif isinstance(n, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and n.value is not None:
                    pairs = [(n.target, n.value)]
                elif isinstance(n, (ast.For, ast.comprehension)):
                    pairs = [(n.target, n.iter)]
                elif isinstance(n, ast.withitem) and n.optional_vars is not None:
                    pairs = [(n.optional_vars, n.context_expr)]
                for target, value in pairs:
                    if mentions(value):
                        for t in ast.walk(target):
                            if isinstance(t, ast.Name) and t.id not in names:
                                names.add(t.id)
                                changed = True
        parents = {child: node for node in ast.walk(fn) for child in ast.iter_child_nodes(node)}
        # the calls that make a raised error (``raise InputError(missing_message(...))``): not walked
        raised = {id(c) for r in ast.walk(fn) if isinstance(r, ast.Raise) for c in ast.walk(r)}
        calls = sorted(
            (n for n in ast.walk(fn) if isinstance(n, ast.Call) and id(n) not in raised),
            key=lambda c: (c.lineno, c.col_offset),
        )
        down = 0
        if built is not None:  # the options object the command receives, built for it
            there = floor_of(built[0], self.floors)
            if there is not None and here is not None:
                name = f"{built[0]}:{built[1].name}"  # type: ignore[attr-defined]
                self.calls.append(Call(f"{module_name}:{qualname}", name, here, there, True, fn.lineno))  # type: ignore[attr-defined]
                down += there < here
                fake = ast.Call(func=ast.Name(built[1].name), args=[], keywords=[])  # type: ignore[attr-defined]
                self.follow(built[0], built[1], fake, mentions)
        for call in calls:
            given = [a for a in call.args if mentions(a)] + [k for k in call.keywords if mentions(k.value)]
            if not given:
                continue
            found = self.callee(call, module, local)
            if found is None:
                continue
            target_module, target = found
            there = floor_of(target_module, self.floors)
            if there is None or here is None:
                continue
            kept = not isinstance(parents.get(call), ast.Expr)
            name = f"{target_module}:{target.name}"  # type: ignore[attr-defined]
            self.calls.append(Call(f"{module_name}:{qualname}", name, here, there, kept, call.lineno))
            if there < here:
                down += 1
            if there < self.lowest:
                continue  # the library below the stage's layers: counted, not followed
            self.follow(target_module, target, call, mentions)
        self.climbs += max(0, down - 1)

    def follow(self, module_name: str, target: ast.AST, call: ast.Call, mentions) -> None:
        if isinstance(target, ast.ClassDef):
            methods = {d.name: d for d in target.body if isinstance(d, ast.FunctionDef)}
            init = methods.get("__post_init__") or methods.get("__init__")
            if init is not None:
                self.expand(module_name, init, frozenset(["self"]), f"{target.name}.{init.name}")
            return
        assert isinstance(target, ast.FunctionDef)
        params = [a.arg for a in target.args.posonlyargs + target.args.args]
        marked: Set[str] = set()
        for i, a in enumerate(call.args):
            if mentions(a):
                if isinstance(a, ast.Starred):
                    marked.update(params[i:])
                elif i < len(params):
                    marked.add(params[i])
                elif target.args.vararg is not None:
                    marked.add(target.args.vararg.arg)
        for k in call.keywords:
            if mentions(k.value):
                if k.arg is None:  # **kwargs
                    marked.update(params + [a.arg for a in target.args.kwonlyargs])
                elif k.arg in params or k.arg in [a.arg for a in target.args.kwonlyargs]:
                    marked.add(k.arg)
                elif target.args.kwarg is not None:
                    marked.add(target.args.kwarg.arg)
        if marked:
            self.expand(module_name, target, frozenset(marked), target.name)


def walk_stage(root: str, stage: str, entry: Optional[str] = None) -> Dict:
    modules, floors = read_tree(root), read_floors(root)
    candidates = (entry,) if entry else ENTRIES[stage]
    for c in candidates:
        module, _, name = c.partition(":")
        if module in modules and name in modules[module].defs:
            break
    else:
        raise SystemExit(f"{root}: none of {', '.join(candidates)} is there (give --entry {stage}=MODULE:FUNCTION)")
    w = Walk(modules, floors)
    w.run(module, name)
    crossing = [c for c in w.calls if c.callee_floor < c.caller_floor]
    return {
        "entry": f"{module}:{name}",
        "climbs": w.climbs,
        "returns": sum(c.kept for c in crossing),
        "crossing_calls": len(crossing),
        "functions_expanded": len(w.seen),
        "calls": [
            f"{c.caller}:{c.line} -> {c.callee} (floor {c.caller_floor} -> {c.callee_floor}"
            + (", kept)" if c.kept else ")")
            for c in crossing
        ],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tree", help="the source tree to read")
    ap.add_argument("--stage", action="append", choices=sorted(ENTRIES), help="default: attribute and muda-eval")
    ap.add_argument("--entry", action="append", default=[], metavar="STAGE=MODULE:FUNCTION", help="another entry")
    ap.add_argument("--calls", action="store_true", help="list every call that crosses a floor")
    harness.add_arguments(ap, repeats=None, json_alias=False)
    args = harness.parse(ap, argv)
    entries = dict(e.split("=", 1) for e in args.entry)
    results = {}
    for stage in args.stage or sorted(ENTRIES):
        r = walk_stage(os.path.abspath(args.tree), stage, entries.get(stage))
        results[stage] = r
        print(
            f"{stage} ({r['entry']}): climbs {r['climbs']}, returns {r['returns']} "
            f"({r['crossing_calls']} calls down a floor, {r['functions_expanded']} functions walked)"
        )
        if args.calls:
            print("\n".join("  " + line for line in r["calls"]))
    harness.finish(args, "option_walk", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
