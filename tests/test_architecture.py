"""The layout rules, checked on the source tree (static imports, function-level ones included):
no import cycles, ``muda`` never imports ``contextual_mt`` (nor do its tests, ``tests/muda``),
``commandkit`` imports neither (nor do its tests, ``tests/commandkit``), at most 8 top-level modules
per package, and importing the packages changes no global state."""

import ast
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("contextual_mt", "muda", "commandkit", "docalign")


def module_files(root: Path, packages=PACKAGES) -> Dict[str, Path]:
    """Dotted module name -> file, for every .py file of the packages."""
    out = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def imports_of(name: str, path: Path, modules: Dict[str, Path]) -> Set[str]:
    """The package modules that ``name`` imports anywhere in its source."""
    found: Set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join(here + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    return {m for m in found if m in modules and m != name}


def import_graph(root: Path, packages=PACKAGES) -> Dict[str, Set[str]]:
    modules = module_files(root, packages)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One import cycle as a list of modules (first == last), or None."""
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    path: List[str] = []

    def visit(node: str) -> Optional[List[str]]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def test_no_import_cycles():
    cycle = find_cycle(import_graph(ROOT))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def package_of(module: str) -> str:
    """The unit the package-level checks see: a subpackage (``contextual_mt.inference``,
    ``muda.formats``) or a top-level module (``contextual_mt.errors``)."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: Dict[str, Set[str]]) -> Dict[str, Set[str]]:
    out: Dict[str, Set[str]] = {}
    for module, targets in graph.items():
        here = package_of(module)
        out.setdefault(here, set()).update(package_of(t) for t in targets if package_of(t) != here)
    return out


def test_no_import_cycles_between_packages():
    cycle = find_cycle(package_graph(import_graph(ROOT)))
    assert cycle is None, "package import cycle: " + " -> ".join(cycle)


# The floors of the house, from the base up: a module imports its own floor and the floors below,
# never one above (data flows down; the command line is the roof). commandkit (what every command
# is built on) is the ground floor; muda is a floor of its own.
FLOORS = (
    ("commandkit",),
    ("docalign",),  # re-alignment of document-level output: muda and contextual_mt both evaluate through it
    ("muda",),
    ("contextual_mt", "contextual_mt.symbols", "contextual_mt.errors"),
    ("contextual_mt.stage_record", "contextual_mt.scored_corpus"),
    # backend-neutral inference: the interface, the registry, batching, decoding, the driver,
    # which sentences are context (context_trim)
    ("contextual_mt.inference",),
    # the fairseq plugin (what --user-dir contextual_mt registers), in backends/fairseq/ below the
    # rest of that backend, which loads it, and above inference (its data trims context by
    # context_trim): the checkpoint reader, the data (ContextDataset, model inputs), the
    # registrations (models, tasks) and the fairseq-generate hooks
    ("contextual_mt.backends.fairseq.checkpoint_file",),
    ("contextual_mt.backends.fairseq.data",),
    (
        "contextual_mt.backends.fairseq.models",
        "contextual_mt.backends.fairseq.tasks",
        "contextual_mt.backends.fairseq.generation",
    ),
    # the runners: written against the interface and the registry, never a backend
    (
        "contextual_mt.analysis",
        "contextual_mt.attribution",
        "contextual_mt.contrastive",
        "contextual_mt.testsets",
        "contextual_mt.metrics",
    ),
    ("contextual_mt.backends",),  # each backend in its folder, registering itself
    ("contextual_mt.pipeline",),
    ("contextual_mt.demo",),
    ("contextual_mt.api",),  # one function per command, on the library: what the commands run
    ("contextual_mt.cli",),
)


def floor_of(module: str) -> int:
    """The floor of the longest declared prefix of ``module``; a module of no floor is an error."""
    best = None
    for level, names in enumerate(FLOORS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and (best is None or len(name) > len(best[1])):
                best = (level, name)
    assert best is not None, f"{module}: on no floor of tests/test_architecture.py's FLOORS"
    return best[0]


def upward_imports(graph: Dict[str, Set[str]]) -> List[str]:
    return sorted(f"{m} imports {t}" for m, targets in graph.items() for t in targets if floor_of(t) > floor_of(m))


def test_no_import_from_a_lower_floor_to_a_higher_one():
    assert upward_imports(import_graph(ROOT)) == []


def test_floor_checks_find_upward_imports_and_package_cycles():
    """The two checks above can fail: a planted upward import and a cycle between two packages
    made of files that form no file cycle are found."""
    graph = {
        "contextual_mt.inference.a": {"contextual_mt.backends.hf.b"},
        "contextual_mt.backends.hf.b": set(),
        "contextual_mt.backends.hf.c": {"contextual_mt.inference.d"},
        "contextual_mt.inference.d": set(),
    }
    assert find_cycle(graph) is None
    assert find_cycle(package_graph(graph)) == [
        "contextual_mt.backends",
        "contextual_mt.inference",
        "contextual_mt.backends",
    ]
    assert upward_imports(graph) == ["contextual_mt.inference.a imports contextual_mt.backends.hf.b"]


FAIRSEQ_HOME = "contextual_mt/backends/fairseq/"


def fairseq_importers(root: Path) -> List[str]:
    """The files of the packages that import fairseq (or fairseq_cli), function-level imports
    included, as paths below ``root``."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                else:
                    continue
                if any(name.split(".")[0] in ("fairseq", "fairseq_cli") for name in names):
                    found.append(str(path.relative_to(root)))
                    break
    return found


def test_fairseq_is_imported_in_its_backend_folder_only(tmp_path):
    """The fairseq plugin (the registered task and models, its data and generation hooks, the
    checkpoint reader) and the fairseq backend are one folder, backends/fairseq/: no other module
    of the packages imports fairseq (the compatibility layer, contextual_mt_compat.py, is not in a
    package). The check can fail: a function-level import elsewhere is found."""
    found = fairseq_importers(ROOT)
    assert found and [f for f in found if not f.startswith(FAIRSEQ_HOME)] == []
    (tmp_path / "contextual_mt" / "pipeline").mkdir(parents=True)
    (tmp_path / "contextual_mt" / "pipeline" / "probe.py").write_text("def f():\n    from fairseq import tasks\n")
    assert fairseq_importers(tmp_path) == ["contextual_mt/pipeline/probe.py"]


def test_muda_never_imports_contextual_mt():
    graph = import_graph(ROOT)
    wrong = sorted(
        f"{m} imports {t}"
        for m, targets in graph.items()
        if m.startswith("muda")
        for t in targets
        if t.startswith("contextual_mt")
    )
    # imports_of only sees package modules it knows; check the raw source for any other form too
    raw = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "muda").rglob("*.py")
        if "contextual_mt" in p.read_text(encoding="utf-8")
    )
    assert wrong == [] and raw == []


def test_commandkit_imports_neither_package():
    """commandkit is what both packages' commands stand on: it imports neither muda nor contextual_mt."""
    import re

    graph = import_graph(ROOT)
    wrong = sorted(
        f"{m} imports {t}"
        for m, targets in graph.items()
        if m.startswith("commandkit")
        for t in targets
        if t.startswith(("muda", "contextual_mt"))
    )
    # any other form too (its docstrings may name the packages): an import statement or import_module
    pattern = re.compile(
        r"^\s*(import|from)\s+(muda|contextual_mt)\b"
        r"|(import_module|__import__)\(\s*['\"](muda|contextual_mt)\b",
        re.MULTILINE,
    )
    raw = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "commandkit").rglob("*.py")
        if pattern.search(p.read_text(encoding="utf-8"))
    )
    assert wrong == [] and raw == []


def upward_test_imports(tests_root: Path, package: str = "muda", above: tuple = ("contextual_mt",)) -> List[str]:
    """The imports in ``tests_root/PACKAGE`` (every .py file, function-level imports included) of
    a package ``above`` it or of a test module outside ``tests.PACKAGE`` (tests.helpers and the
    other shared test modules import contextual_mt): 'FILE:LINE imports NAME'. Imports of
    commandkit, which both packages stand on, are allowed."""
    found = []
    for path in sorted((tests_root / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:  # relative imports stay inside tests/muda
                continue
            for name in names:
                top = name.split(".")[0]
                if top in above or (top == "tests" and not (name + ".").startswith(f"tests.{package}.")):
                    found.append(f"{path.relative_to(tests_root.parent)}:{node.lineno} imports {name}")
    return found


def test_muda_tests_never_import_contextual_mt():
    """tests/muda follows the package layers: it imports muda, commandkit and tests.muda only (a
    shared corpus comes through a fixture of tests/conftest.py)."""
    tests_root = ROOT / "tests"
    raw = sorted(
        str(p.relative_to(ROOT))
        for p in (tests_root / "muda").rglob("*.py")
        if "contextual_mt" in p.read_text(encoding="utf-8")
    )
    assert upward_test_imports(tests_root) == [] and raw == []


def test_commandkit_tests_import_neither_package():
    assert upward_test_imports(ROOT / "tests", "commandkit", ("muda", "contextual_mt")) == []


def test_docalign_stands_on_commandkit_only():
    """muda evaluates document-level output through docalign, so docalign (and its tests) may
    import neither muda nor contextual_mt."""
    graph = import_graph(ROOT)
    wrong = sorted(
        f"{m} imports {t}"
        for m, targets in graph.items()
        if m.startswith("docalign")
        for t in targets
        if not t.startswith(("docalign", "commandkit"))
    )
    assert wrong == []
    assert upward_test_imports(ROOT / "tests", "docalign", ("muda", "contextual_mt")) == []


def test_muda_tests_checker_finds_upward_imports(tmp_path):
    """The check above can fail: a function-level contextual_mt import and an import of a shared
    test module are found; imports of muda, commandkit and tests.muda are not."""
    (tmp_path / "tests" / "muda" / "sub").mkdir(parents=True)
    (tmp_path / "tests" / "muda" / "ok.py").write_text(
        "import muda.cli\nfrom tests.muda.helpers import muda\nfrom commandkit.errors import InputError\n"
    )
    (tmp_path / "tests" / "muda" / "sub" / "bad.py").write_text(
        "def f():\n    from contextual_mt.demo import corpus\n\nfrom tests.helpers import BIN\n"
    )
    assert sorted(upward_test_imports(tmp_path / "tests")) == [
        "tests/muda/sub/bad.py:2 imports contextual_mt.demo",
        "tests/muda/sub/bad.py:4 imports tests.helpers",
    ]


@pytest.mark.parametrize("package", PACKAGES)
def test_at_most_eight_top_level_modules(package):
    top = sorted(p.name for p in (ROOT / package).glob("*.py"))
    assert len(top) <= 8, f"{package}: {len(top)} top-level modules: {', '.join(top)}"


# options are declared (argparse parsers, arguments, subcommands) by the command-line layer only;
# the arguments themselves by commandkit's parser generator alone, from option dataclasses (fairseq's
# plugin API hands each registered model a parser: its add_args calls the generator too)
PARSER_CALLS = {
    "ArgumentParser",
    "add_argument",
    "add_argument_group",
    "add_mutually_exclusive_group",
    "add_parser",
    "add_subparsers",
}
DECLARING_MODULES = {
    "contextual_mt.cli",
    "contextual_mt.cli.common",
    "contextual_mt.cli.pipeline",
    "contextual_mt.cli.testset",
    "muda.cli",
    "commandkit.options",
}


def test_argument_parsing_lives_in_the_cli_layer():
    declaring = {
        name
        for name, path in module_files(ROOT).items()
        if any(
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Attribute, ast.Name))
            and getattr(node.func, "attr", getattr(node.func, "id", None)) in PARSER_CALLS
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    }
    assert declaring == DECLARING_MODULES


def test_add_argument_is_called_by_the_parser_generator_only():
    calls = {
        name
        for name, path in module_files(ROOT).items()
        if any(
            isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "add_argument"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    }
    assert calls == {"commandkit.options"}


def test_checker_finds_cycles_and_one_way_violations(tmp_path):
    """The checks above can fail: a planted cycle (also through a function-level and a relative
    import) and a planted muda -> contextual_mt import are found."""
    (tmp_path / "muda" / "sub").mkdir(parents=True)
    (tmp_path / "contextual_mt").mkdir()
    (tmp_path / "muda" / "__init__.py").write_text("")
    (tmp_path / "muda" / "sub" / "__init__.py").write_text("")
    (tmp_path / "muda" / "a.py").write_text("from muda.sub import b\n")
    (tmp_path / "muda" / "sub" / "b.py").write_text("def f():\n    from .c import x\n")
    (tmp_path / "muda" / "sub" / "c.py").write_text("import muda.a\nx = 1\n")
    (tmp_path / "contextual_mt" / "__init__.py").write_text("")
    (tmp_path / "contextual_mt" / "d.py").write_text("y = 2\n")
    graph = import_graph(tmp_path)
    assert find_cycle(graph) == ["muda.a", "muda.sub.b", "muda.sub.c", "muda.a"]
    (tmp_path / "muda" / "sub" / "c.py").write_text("from contextual_mt import d\nx = 1\n")
    graph = import_graph(tmp_path)
    assert find_cycle(graph) is None
    assert graph["muda.sub.c"] == {"contextual_mt.d"}


def test_importing_the_packages_changes_no_global_state():
    code = (
        "import sys; hook = sys.excepthook; import contextual_mt, contextual_mt.cli, muda, muda.cli, "
        "muda.tagger; assert sys.excepthook is hook, sys.excepthook; print('unchanged')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.strip() == "unchanged", proc.stderr[-2000:]


# Distributions whose import name is not their name with "-" read as "_".
IMPORT_NAMES = {"pyyaml": "yaml", "hydra-core": "hydra", "unbabel-comet": "comet"}
# Declared and not imported by the project: fairseq 0.12.2's own requirements (fairseq is
# installed with --no-deps); NOT_IMPORTED_YET: a dependency declared ahead of its first import.
FAIRSEQ_REQUIREMENTS = {"hydra-core", "bitarray"}
NOT_IMPORTED_YET: set = set()
# Declared only to pin a dependency's dependency (pyproject.toml says why): setuptools < 81 for
# unbabel-comet's torchmetrics, which imports pkg_resources.
PINNED_FOR_A_DEPENDENCY = {"setuptools"}


def distribution_name(requirement: str) -> str:
    import re

    return re.split(r"[\s<>=!~;\[]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def third_party_imports(root: Path) -> Set[str]:
    """Top-level names of the non-standard-library, non-project modules imported anywhere in
    the packages and the compatibility layer (function-level imports included)."""
    own = set(PACKAGES) | {"contextual_mt_compat", "commandkit"}
    files = [p for package in PACKAGES for p in sorted((root / package).rglob("*.py"))]
    found: Set[str] = set()
    for path in [*files, root / "contextual_mt_compat.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names and name not in own}


def test_declared_dependencies_are_the_imported_ones():
    """Every distribution in pyproject.toml (its extras but the tools' `test`, `lint` and `docs` included) is
    imported by the project, except fairseq's own requirements, which must be fairseq's; and every third-party import is
    declared (fairseq itself is installed by `make install`, see pyproject.toml)."""
    import importlib.metadata
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    tools = {"test", "lint", "docs"}  # extras of tools run on the project, which it does not import
    extras = [r for name, rs in project["optional-dependencies"].items() if name not in tools for r in rs]
    declared = {distribution_name(r) for r in project["dependencies"] + extras}
    imported = third_party_imports(ROOT)
    import_name = {d: IMPORT_NAMES.get(d, d.replace("-", "_")) for d in declared}

    unused = sorted(
        d
        for d in declared - FAIRSEQ_REQUIREMENTS - NOT_IMPORTED_YET - PINNED_FOR_A_DEPENDENCY
        if import_name[d] not in imported
    )
    assert unused == [], f"declared in pyproject.toml and never imported: {', '.join(unused)}"
    undeclared = sorted(imported - set(import_name.values()) - {"fairseq"})
    assert undeclared == [], f"imported and not declared in pyproject.toml: {', '.join(undeclared)}"
    fairseq = {distribution_name(r) for r in importlib.metadata.requires("fairseq") or ()}
    assert declared >= FAIRSEQ_REQUIREMENTS and fairseq >= FAIRSEQ_REQUIREMENTS, FAIRSEQ_REQUIREMENTS - fairseq
    assert not {d for d in FAIRSEQ_REQUIREMENTS | NOT_IMPORTED_YET if import_name[d] in imported}, (
        "imported now: move it out of FAIRSEQ_REQUIREMENTS / NOT_IMPORTED_YET"
    )


HEAVY = ("torch", "fairseq", "transformers")


def test_commands_check_their_input_before_loading_torch_or_fairseq():
    """`--help` and an option or file error answer in well under a second: the packages, the
    parsers and the checks of the inputs load none of torch, fairseq or transformers."""
    code = (
        "import sys; import contextual_mt, contextual_mt.cli, muda.cli; contextual_mt.cli.build_parser(); "
        "muda.cli.build_parser(); "
        "rc = contextual_mt.cli.main(['translate', '--path', 'missing.pt', '--source', 'missing.en', "
        "'--docids', 'missing.docids', '--output', 'out.fr']); "
        f"print(rc, *sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.split() == ["1"], proc.stderr[-2000:]
    assert proc.stderr.strip() == "error: missing.en: file not found"


def test_align_without_a_model_imports_no_model_library(tmp_path):
    """`contextual-mt align` without a model (its parser, reading, splitting sentences, aligning,
    writing) imports none of torch, thinc, spaCy, fairseq or transformers: their import is seconds
    of start-up that a command needing no model does not pay (issue 51); nor the modules of the
    other commands (only the command's own parser is built)."""
    (tmp_path / "ids").write_text("a\na\nb\n", encoding="utf-8")
    (tmp_path / "pivot").write_text("M. Dupont est là.\nIl part.\nFin.\n", encoding="utf-8")
    (tmp_path / "out.jsonl").write_text(
        '{"doc": "a", "text": "M. Dupont est là. Il part."}\n{"doc": "b", "text": "Fin."}\n', encoding="utf-8"
    )
    argv = ["align", "--hyp-documents", "out.jsonl", "--docids", "ids", "--pivot", "pivot"]
    argv += ["--output", "aligned", "--alignment", "alignment.jsonl", "--segmenter-lang", "fr"]
    heavy = ("torch", "thinc", "spacy", "fairseq", "transformers")
    code = (
        "import sys; import contextual_mt.cli; "
        f"rc = contextual_mt.cli.main({argv!r}); "
        f"print(rc, *sorted(m for m in {heavy!r} if m in sys.modules), "
        "*sorted(m for m in sys.modules if m.startswith('contextual_mt.cli.')))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    expected = ["0", "contextual_mt.cli.align", "contextual_mt.cli.common"]
    assert proc.returncode == 0 and proc.stdout.split() == expected, (proc.stdout, proc.stderr[-2000:])
    assert (tmp_path / "aligned").read_text(encoding="utf-8") == "M. Dupont est là.\nIl part.\nFin.\n"


def test_align_help_imports_neither_the_aligner_nor_the_sentence_rules():
    """`contextual-mt align --help` (and a command that fails on its options) builds the parser
    from the options alone: numpy (the aligner) and regex (the sentence rules) are imported where
    they run, not at start-up (issue 51)."""
    code = (
        "import sys, contextlib, io; import contextual_mt.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        contextual_mt.cli.main(['align', '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(*sorted(m for m in ('numpy', 'regex', 'docalign.dp', 'docalign.links') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.split() == [], (proc.stdout, proc.stderr[-2000:])


def test_help_prints_no_import_noise():
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "contextual-mt"), "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and "usage: contextual-mt" in proc.stdout, proc.stderr[-2000:]
    assert "tensorboardX" not in proc.stdout + proc.stderr and proc.stderr == ""


def layout_entries(text: str) -> Set[str]:
    """The names a layout text gives: ``name/`` for a folder, ``name`` or ``name.py`` for a module."""
    import re

    return {
        m.rstrip("/").removesuffix(".py") + ("/" if m.endswith("/") else "")
        for m in re.findall(r"(?<![\w./-])([a-z_][a-z0-9_]*(?:/|\.py)?)(?![\w-])", text)
    }


def package_parts(package: str) -> Set[str]:
    """Its subpackages (``name/``) and top-level modules (``name``), as a layout names them."""
    root = ROOT / package
    folders = {p.name + "/" for p in root.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in root.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return folders | modules


def docs_layout() -> str:
    """The layout page of the documentation (docs/layout.md)."""
    return (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")


def package_folders(package: str) -> Set[str]:
    """Every folder of the package, at any depth (``backends/fairseq``), as a path below it."""
    root = ROOT / package
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_dir() and "__pycache__" not in p.parts and not p.name.startswith(".")
    }


@pytest.mark.parametrize("package", ("contextual_mt", "muda", "commandkit", "docalign"))
def test_the_layout_page_names_every_folder(package):
    """docs/layout.md names every folder of each package, nested ones too (``fairseq/`` under
    backends, ``alternatives/`` under testsets), each as ``name/`` in the package's block; and so does
    contextual_mt/__init__.py's map, contextual_mt's."""
    block = docs_layout().split(f"\n{package}/", 1)[1].split("\n", 1)[1]
    block = "\n".join(line for line in block.split("\n") if line.startswith(" "))  # up to the next package
    named = layout_entries(block) | {m.rstrip("/") + "/" for m in re.findall(r"[a-z_]+(?:/[a-z_]+)+/", block)}
    unnamed = [
        f for f in sorted(package_folders(package)) if f.split("/")[-1] + "/" not in named and f + "/" not in named
    ]
    assert unnamed == [], f"docs/layout.md does not name these folders of {package}: {unnamed}"
    if package == "contextual_mt":
        import contextual_mt

        named = layout_entries(contextual_mt.__doc__.split("Layout", 1)[1])
        unnamed = [f for f in sorted(package_folders(package)) if f.split("/")[-1] + "/" not in named]
        assert unnamed == [], f"contextual_mt/__init__.py's map does not name these folders: {unnamed}"


@pytest.mark.parametrize("package", ("contextual_mt", "muda", "commandkit", "docalign"))
def test_the_layouts_name_every_subpackage_and_module(package):
    """The layout page (docs/layout.md) names every subpackage and top-level module of each package,
    and ``contextual_mt/__init__.py``'s map every one of contextual_mt's; no folder they name is
    gone."""
    block = docs_layout().split(f"\n{package}/", 1)[1]
    block = block.split("\n", 1)[1]
    block = "\n".join(line for line in block.split("\n") if line.startswith(" "))  # up to the next package
    parts = package_parts(package)
    assert sorted(parts - layout_entries(block)) == [], f"docs/layout.md misses parts of {package}"
    named_folders = {
        line.split()[0]
        for line in block.split("\n")
        if line[:3] == "  " and line[2:3] != " " and line.split()[0].endswith("/")
    }
    assert sorted(named_folders - parts) == [], f"docs/layout.md names folders {package} does not have"
    if package == "contextual_mt":
        import contextual_mt

        map_text = contextual_mt.__doc__.split("Layout", 1)[1]
        assert sorted(parts - layout_entries(map_text)) == [], "contextual_mt/__init__.py's map misses parts"
