"""Wall time of `make demo` from nothing, where it goes (per stage, per model), and whether the
demo's findings hold: the context model at least 0.95 on the planted contrastive set and 90% on
every planted phenomenon, the sentence model near chance (0.5 on the contrastive set).

    .venv/bin/python -m bench.demo_time --json bench/out/demo_time.json

Each repeat runs what `make demo` runs (`contextual-mt demo`) in a fresh folder and reads the
demo's own record of its stages (``demo/results/fr/demo.json``: wall and CPU seconds per stage,
the wall seconds of each model's training). Measure on a quiet machine: the demo uses both cores.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List

from bench import harness

CONTEXT_ACCURACY = 0.95  # the planted contrastive set, context model
PLANTED_ACCURACY = 90.0  # % of the planted tokens right, per phenomenon, context model
CHANCE_MARGIN = 0.15  # the sentence model within 0.5 +- this on the contrastive set


def findings(results: Dict[str, Any]) -> Dict[str, Any]:
    """The demo's claims, checked on its results file."""
    contrastive = results["contrastive"]
    context = contrastive["context"]["accuracy"]
    sentence = contrastive["sentence"]["accuracy"]
    planted = {p: r["accuracy"] for p, r in results["context"]["planted"].items()}
    return {
        "context_contrastive": context,
        "sentence_contrastive": sentence,
        "context_planted": planted,
        "hold": context >= CONTEXT_ACCURACY
        and min(planted.values()) >= PLANTED_ACCURACY
        and abs(sentence - 0.5) <= CHANCE_MARGIN,
    }


def run_once(keep: str = "") -> Dict[str, Any]:
    """``contextual-mt demo`` in a fresh folder (copied to ``keep`` when given); its own record."""
    with tempfile.TemporaryDirectory(prefix="demo-time-") as tmp:
        work = Path(tmp) / "demo"
        subprocess.run(
            [sys.executable, "-m", "contextual_mt.cli", "demo", "--workdir", str(work)], check=True, cwd=harness.REPO
        )
        results = json.loads((work / "results" / "fr" / "demo.json").read_text())
        if keep:
            shutil.copytree(work, keep, dirs_exist_ok=True)
    return {"stages": results["time"], "findings": findings(results)}


def breakdown(run: Dict[str, Any]) -> str:
    rows = [f"{'stage':12s} {'wall s':>8s} {'CPU s':>8s} {'share':>6s}"]
    for stage, t in run["stages"].items():
        rows.append(f"{stage:12s} {t['wall_s']:8.1f} {t['cpu_s']:8.1f} {t['wall_s'] / run['wall_s']:6.1%}")
        rows += [f"  {k[:-7]:10s} {v:8.1f}" for k, v in t.items() if k.endswith("_wall_s")]
    rows.append(f"{'make demo':12s} {run['wall_s']:8.1f}")
    return "\n".join(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", help="keep the last run's demo folder here (must not exist)")
    harness.add_arguments(parser, repeats=1)
    args = harness.parse(parser, argv)
    if args.keep and Path(args.keep).exists():
        parser.error(f"--keep {args.keep}: exists; give a new folder")
    # each repeat from nothing; the last one's folder kept (a later repeat overwrites it)
    total = harness.time_it(lambda: run_once(args.keep or ""), repeats=args.repeats, warmup=0)
    runs: List[Dict[str, Any]] = [dict(r, wall_s=round(t, 1)) for r, t in zip(total.results, total.times, strict=True)]
    for run in runs:
        print(breakdown(run))
        print("findings hold:", "yes" if run["findings"]["hold"] else "NO", run["findings"])
    print(harness.describe(total))
    print(harness.machine_line(harness.machine_info()))
    harness.finish(args, "demo_time", {"wall": total.to_dict(), "runs": runs})


if __name__ == "__main__":
    main()
