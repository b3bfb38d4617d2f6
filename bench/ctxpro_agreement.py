"""Per-example agreement of `contextual-mt testset evaluate` with `ctxpro score` on ctxpro's
released evaluation sets (issue 54, item 2).

For every evaluation set found in a copy of ctxpro's repository (``paper/jsons`` with
``paper/inputs`` and DeepL's outputs in ``paper/outputs``; ``release/evalsets`` with
``release/inputs``), the set is imported (`contextual-mt testset import --format ctxpro`) and
the same translations are scored by both tools: DeepL's outputs (with context, and sentence by
sentence) where the repository has them, the references themselves, and a perturbed copy of the
references (the last sentence moved, case changed, punctuation or a hyphen at the form, the form
swapped for another, curly apostrophes; seeded). ctxpro's side runs in its own environment
(``--ctxpro-python``, a venv with ``pip install ctxpro``): its scorer's own functions per example
(``ctxpro.score.get_last`` and ``passes_test``) and its CLI (``ctxpro score --complete``) for
the per-rule totals. Files absent from the copy (large files a partial mirror lacks) are listed,
not guessed.

    python -m bench.ctxpro_agreement --repo /work/.mirror/rewicks+ctxpro/repo \\
        --ctxpro-python /tmp/ctxvenv/bin/python --json agreement.json [--results bench/RESULTS.md]

``--repo`` is a checkout or a bare git directory (read with ``git show HEAD:PATH``). Nothing
here is read by the project at run or test time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

from bench import harness

ROOT = Path(__file__).resolve().parents[1]
MARK = ("<!-- ctxpro-agreement -->", "<!-- /ctxpro-agreement -->")

# ctxpro's side: its scorer's functions, per example (run with --ctxpro-python)
CTXPRO_PER_EXAMPLE = """
import json, sys
from sentence_splitter import SentenceSplitter
from ctxpro.score import get_last, passes_test
evalset, lang, *files = sys.argv[1:]
refs = json.load(open(evalset))
splitter = SentenceSplitter(language=lang)
out = {}
for f in files:
    with open(f) as t:
        lines = [line.strip() for line in t]
    out[f] = [passes_test(get_last(x.strip(), splitter), r["expected"]) for x, r in zip(lines, refs)]
print(json.dumps(out))
"""


class Repo:
    """A checkout or a bare git directory of ctxpro."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.bare = not os.path.isdir(os.path.join(path, "paper"))

    def names(self, folder: str) -> List[str]:
        if not self.bare:
            return sorted(os.listdir(os.path.join(self.path, folder))) if os.path.isdir(self.path) else []
        out = subprocess.run(
            ["git", "-C", self.path, "ls-tree", "--name-only", f"HEAD:{folder}"], capture_output=True, text=True
        )
        return out.stdout.split()

    def read(self, path: str, dest: Path) -> bool:
        """Copy PATH to dest; False when the copy lacks it (a blob absent from a partial mirror)."""
        if not self.bare:
            src = os.path.join(self.path, path)
            if not os.path.isfile(src):
                return False
            dest.write_bytes(Path(src).read_bytes())
            return True
        out = subprocess.run(["git", "-C", self.path, "show", f"HEAD:{path}"], capture_output=True)
        if out.returncode != 0:
            return False
        dest.write_bytes(out.stdout)
        return True


def sets(repo: Repo) -> List[Dict[str, Optional[str]]]:
    found = []
    for name in repo.names("paper/jsons"):
        if name.endswith(".json"):
            stem = name[: -len(".json")]
            found.append(
                {
                    "name": f"paper/{stem}",
                    "json": f"paper/jsons/{name}",
                    "inputs": f"paper/inputs/{stem}",
                    "contexts": f"paper/outputs/deepl.{stem}.contexts",
                    "sentences": f"paper/outputs/deepl.{stem}.sentences",
                }
            )
    for name in repo.names("release/evalsets"):
        if name.endswith(".json"):
            stem = name[: -len(".json")]
            found.append(
                {
                    "name": f"release/{stem}",
                    "json": f"release/evalsets/{name}",
                    "inputs": f"release/inputs/{stem}",
                    "contexts": None,
                    "sentences": None,
                }
            )
    return found


def perturb(reference: str, form: str, alternatives: List[str], rng: random.Random) -> str:
    """One of the edits where a scorer may differ: the sentence splitter, punctuation, case,
    hyphens, apostrophes."""
    pattern = re.compile(r"(?<!\w)" + re.escape(form) + r"(?!\w)", re.IGNORECASE)
    kind = rng.randrange(9)
    if kind == 0:  # the form no longer in the last sentence
        return reference + " Dr. Smith left. Okay?"
    if kind == 1:  # a sentence before it: the last one is still the reference
        return "Mr. Smith said no. " + reference
    if kind == 2:
        return reference.upper()
    if kind == 3:  # punctuation glued to the form
        return pattern.sub(lambda m: f"«{m.group(0)}»,", reference, count=1)
    if kind == 4:  # a hyphen joins it to the next word
        return pattern.sub(lambda m: m.group(0) + "-même", reference, count=1)
    if kind == 5 and alternatives:
        return pattern.sub(alternatives[rng.randrange(len(alternatives))], reference, count=1)
    if kind == 6:
        return reference.replace("'", "\u2019")
    if kind == 7:  # a non-breaking space before the form
        return pattern.sub(lambda m: "\u00a0" + m.group(0), reference, count=1)
    return reference + " ... " + reference.split()[0]


def run_set(repo: Repo, entry: Dict, work: Path, ctxpro_python: str, seed: int) -> Dict:
    d = work / entry["name"].replace("/", "_")
    d.mkdir(parents=True, exist_ok=True)
    evalset, inputs = d / os.path.basename(entry["json"]), d / os.path.basename(entry["inputs"])
    missing = [p for p, dest in ((entry["json"], evalset), (entry["inputs"], inputs)) if not repo.read(p, dest)]
    if missing:
        return {"name": entry["name"], "absent": missing}
    lang = re.search(r"\.[a-z]{2}-([a-z]{2})\.", evalset.name).group(1)  # type: ignore[union-attr]
    suite = d / "suite"
    cli = [sys.executable, "-m", "contextual_mt.cli"]
    imp = subprocess.run(
        [*cli, "testset", "import", "--format", "ctxpro", "--evalset", str(evalset), "--inputs", str(inputs),
         "--output-dir", str(suite)],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    if imp.returncode != 0:
        return {"name": entry["name"], "import_error": imp.stderr.strip().splitlines()[-1]}
    examples = json.loads(evalset.read_text(encoding="utf-8"))
    manifest = [json.loads(line) for line in (suite / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]
    systems: Dict[str, Path] = {}
    for kind in ("contexts", "sentences"):
        if entry[kind] and repo.read(entry[kind], d / f"deepl.{kind}"):
            systems[f"deepl-{kind}"] = d / f"deepl.{kind}"
    systems["reference"] = suite / f"examples.{lang}"
    rng = random.Random(seed)
    perturbed = [
        perturb(e["ref segment"].strip(), e["expected"], g["alternatives"], rng)
        for e, g in zip(examples, manifest, strict=True)
    ]
    (d / "perturbed").write_text("".join(p + "\n" for p in perturbed), encoding="utf-8")
    systems["perturbed"] = d / "perturbed"
    ours_json = d / "evaluate.json"
    ev = subprocess.run(
        [*cli, "testset", "evaluate", "--manifest", str(suite / "manifest.jsonl"), "--bootstrap", "0",
         "--output", str(ours_json), *[a for p in systems.values() for a in ("--hyp", str(p))]],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    if ev.returncode != 0:
        return {"name": entry["name"], "evaluate_error": ev.stderr.strip().splitlines()[-1]}
    ours = json.loads(ours_json.read_text())
    theirs = json.loads(
        subprocess.run(
            [ctxpro_python, "-c", CTXPRO_PER_EXAMPLE, str(evalset), lang, *map(str, systems.values())],
            capture_output=True, text=True, check=True,
        ).stdout
    )  # fmt: skip
    result: Dict = {"name": entry["name"], "examples": len(examples), "language": lang, "systems": {}}
    for system, path in systems.items():
        key = next(k for k in ours["systems"] if ours["systems"][k]["hypotheses"] == str(path))
        mine = [o == "correct" for o in ours["systems"][key]["group_outcomes"]]
        their = theirs[str(path)]
        differ = [k for k, (a, b) in enumerate(zip(mine, their, strict=True)) if a != b]
        cli_totals = ctxpro_cli_totals(ctxpro_python, path, evalset, lang)
        our_totals: Dict[str, int] = {}
        for g, ok in zip(manifest, mine, strict=True):
            our_totals[g["rule"]] = our_totals.get(g["rule"], 0) + int(ok)
        result["systems"][system] = {
            "agree": len(mine) - len(differ),
            "examples": len(mine),
            "ours_correct": sum(mine),
            "ctxpro_correct": sum(their),
            "cli_rule_totals_equal": cli_totals == our_totals,
            "differences": [
                {"example": k + 1, "expected": examples[k]["expected"], "ours": mine[k], "ctxpro": their[k]}
                for k in differ[:5]
            ],
        }
    result["never_matched"] = json.loads((suite / "summary.json").read_text())["never_matched"]
    return result


def ctxpro_cli_totals(ctxpro_python: str, path: Path, evalset: Path, lang: str) -> Dict[str, int]:
    """`ctxpro score --complete`: correct per rule."""
    ctxpro = str(Path(ctxpro_python).with_name("ctxpro"))
    out = subprocess.run(
        [ctxpro, "score", "-t", str(path), "-e", str(evalset), "-l", lang, "--complete"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    totals = {}
    for line in out.splitlines():
        m = re.match(r"^(\S+) \(.*\)\t(\d+)\t(\d+)\t", line)
        if m:
            totals[m.group(1)] = int(m.group(2))
    return totals


def table(results: List[Dict]) -> List[str]:
    lines = [
        "| set | examples | system | agree | ours correct | ctxpro correct | per-rule totals (`ctxpro score`) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "systems" not in r:
            why = r.get("absent") or r.get("import_error") or r.get("evaluate_error")
            lines.append(f"| {r['name']} | | | not run: {why} | | | |")
            continue
        for system, s in r["systems"].items():
            lines.append(
                f"| {r['name']} | {r['examples']} | {system} | {s['agree']}/{s['examples']} "
                f"({100 * s['agree'] / s['examples']:.2f}%) | {s['ours_correct']} | {s['ctxpro_correct']} | "
                f"{'equal' if s['cli_rule_totals_equal'] else 'DIFFER'} |"
            )
    return lines


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", required=True, help="ctxpro's repository: a checkout or a bare git directory")
    p.add_argument("--ctxpro-python", required=True, help="python of a venv where `pip install ctxpro` was run")
    p.add_argument("--only", help="a regular expression: only the sets whose name matches")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workdir", help="keep the files here (default: a temporary folder)")
    p.add_argument("--json", help="write every result here")
    p.add_argument("--results", help="replace the table between the ctxpro-agreement markers of this file")
    args = p.parse_args(argv)
    machine = harness.machine_info()
    print(harness.machine_line(machine), flush=True)
    repo = Repo(args.repo)
    entries = [e for e in sets(repo) if not args.only or re.search(args.only, e["name"])]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.workdir or tmp)
        results = []
        for e in entries:
            r = run_set(repo, e, work, args.ctxpro_python, args.seed)
            results.append(r)
            print("\n".join(table([r])[2:]), flush=True)
    run = [r for r in results if "systems" in r]
    agree = sum(s["agree"] for r in run for s in r["systems"].values())
    total = sum(s["examples"] for r in run for s in r["systems"].values())
    worst = min((s["agree"] / s["examples"] for r in run for s in r["systems"].values()), default=float("nan"))
    summary = (
        f"{len(run)} of {len(results)} sets run ({len(results) - len(run)} absent from the copy); "
        f"agreement {agree}/{total} examples ({100 * agree / max(total, 1):.3f}%); lowest per set and system "
        f"{100 * worst:.3f}%"
    )
    print(summary)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"summary": summary, "machine": machine, "sets": results}, indent=1, ensure_ascii=False)
        )
    if args.results:
        path = Path(args.results)
        text = path.read_text(encoding="utf-8")
        start, end = text.index(MARK[0]) + len(MARK[0]), text.index(MARK[1])
        rows = [row for row in table(results) if "not run" not in row]
        absent = ", ".join(r["name"] for r in results if "systems" not in r)
        body = f"\n{summary}\n\n" + "\n".join(rows) + f"\n\nNot run (a file absent from the copy): {absent}.\n"
        path.write_text(text[:start] + body + text[end:], encoding="utf-8")


if __name__ == "__main__":
    main()
