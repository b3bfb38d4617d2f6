"""The documentation site (mkdocs.yml, docs/): it builds with ``mkdocs build --strict`` (no broken
link or anchor, no page left out of the navigation), every command and every make target has its
reference page, and the README stays a short entry point."""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "docs", "examples"))
import reference  # noqa: E402  (docs/examples/reference.py, the reference pages' generator)


@pytest.fixture(scope="module")
def commands():
    return reference.surface()


@pytest.fixture(scope="module")
def nav():
    with open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8") as f:
        return set(re.findall(r"([\w./-]+\.md)\s*$", f.read(), re.M))


def test_the_site_builds_strictly(tmp_path):
    mkdocs = os.path.join(os.path.dirname(sys.executable), "mkdocs")
    assert os.path.exists(mkdocs), "mkdocs is not installed: pip install -e '.[docs]' (make install does)"
    proc = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "contextual-mt" / "pipeline" / "data" / "index.html").is_file()


def test_every_command_has_its_page_with_its_usage_and_an_example(commands, nav):
    for prog, entry in commands.items():
        page = reference.page(prog)
        path = os.path.join(ROOT, "docs", page)
        assert os.path.isfile(path), f"{prog}: no page {page}"
        assert page in nav, f"{prog}: {page} is not in mkdocs.yml's nav"
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert f"<!-- {reference.marker_id(prog)} -->" in text, f"{prog}: {page} has no generated usage"
        assert text.startswith(f"# `{prog}`\n\n"), f"{page}: its title is not the command"
        note = text.split("\n\n", 2)[1]
        assert not note.startswith(("#", "<!--")) and len(note) > 80, f"{page}: no note on what it computes"
        leaf = not any("subcommands" in o for o in entry["options"])
        if leaf:
            assert "<!-- example:" in text, f"{prog}: {page} has no recorded example"


def test_every_page_is_in_the_navigation(nav):
    pages = set()
    for folder, dirs, files in os.walk(os.path.join(ROOT, "docs")):
        dirs[:] = [d for d in dirs if d != "examples"]
        pages |= {
            os.path.relpath(os.path.join(folder, f), os.path.join(ROOT, "docs")) for f in files if f.endswith(".md")
        }
    assert sorted(pages - nav) == [] and sorted(nav - pages) == []


def test_every_make_target_and_variable_is_documented_once():
    doc = reference.read_make_doc()
    assert reference.make_problems(doc) == []
    assert {"data", "train", "pcxmi", "muda-eval", "slurm", "docs"} <= set(doc.targets)
    # a target without its documentation is found, and so is a variable nobody documents
    doc.targets.pop("pcxmi")
    doc.uses["data"].append("NOT_A_VARIABLE")
    assert reference.make_problems(doc) == [
        "make pcxmi: no '## target pcxmi:' documentation",
        "NOT_A_VARIABLE: used by a target but not documented ('## var NOT_A_VARIABLE:')",
    ]


def test_the_readme_is_an_entry_point():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; the details belong in docs/"


def documentation_texts():
    """README.md, every page under docs/ and the Makefiles (whose comments make the make reference)."""
    paths = [os.path.join(ROOT, "README.md"), *reference.MAKEFILES]
    for folder, dirs, files in os.walk(os.path.join(ROOT, "docs")):
        dirs[:] = [d for d in dirs if d != "examples"]
        paths += [os.path.join(folder, f) for f in files if f.endswith(".md")]
    for path in paths:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            yield os.path.relpath(os.path.join(ROOT, path), ROOT), f.read()


def test_the_files_and_results_sections_the_documentation_names_exist():
    """A file of the repository the documentation names (``bench/fairseq_dtype.py``,
    ``contextual_mt/pipeline/presets.py``) is there, and a section of bench/RESULTS.md it quotes
    (``bench/RESULTS.md, "Batch size"``) is one of its headings: a rename cannot leave them stale."""
    with open(os.path.join(ROOT, "bench", "RESULTS.md"), encoding="utf-8") as f:
        headings = [line for line in f.read().split("\n") if line.startswith("#")]
    gone, sections = [], []
    path = re.compile(r"(?<![\w/.(-])((?:contextual_mt|muda|commandkit|recipes|tests|bench|docs)/[\w./-]*[\w/])")
    for name, text in documentation_texts():
        for m in path.finditer(text):
            found = m.group(1)
            if found.startswith("muda/") and found.endswith((".json", ".txt", ".png")):
                continue  # results/xx/muda/eval.json, a study's output
            if not os.path.exists(os.path.join(ROOT, found)):
                gone.append(f"{name}: {found}")
        for m in re.finditer(r'bench/RESULTS\.md`?,? "([^"]+)"', text):
            if not any(m.group(1) in h for h in headings):
                sections.append(f"{name}: {m.group(1)}")
    assert gone == [] and sections == []
