"""Start-up time of the commands: ``--help``, an option or file error, a command that loads no model.

Times each command line (wall clock, median of ``--repeats`` runs) for two checkouts side by side:
the code in ``--before`` and in ``--after`` (each put first on PYTHONPATH, so the same virtual
environment runs either), the runs of the two interleaved so that a busy machine slows both
alike. Also reports whether the output held fairseq's "Please install tensorboardX" line.

    .venv/bin/python -m bench.cli_startup --before /work/main [--after .] [--repeats 5] [--json result.json]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import harness

BIN = Path(sys.executable).parent
COMMANDS = {
    "contextual-mt --help": ["contextual-mt", "--help"],
    "contextual-mt cxmi --help": ["contextual-mt", "cxmi", "--help"],
    "contextual-mt translate (missing files)": [
        "contextual-mt",
        "translate",
        "--path",
        "missing.pt",
        "--source",
        "missing.en",
        "--docids",
        "missing.docids",
        "--output",
        "out.fr",
    ],
    "contextual-mt cxmi --batch-size 0": [
        "contextual-mt",
        "cxmi",
        "--path",
        "missing.pt",
        "--source",
        "missing.en",
        "--reference",
        "missing.fr",
        "--docids",
        "missing.docids",
        "--output",
        "out.jsonl",
        "--batch-size",
        "0",
    ],
    "contextual-mt pipeline plan --lang fr": ["contextual-mt", "pipeline", "plan", "--lang", "fr"],
    "muda --help": ["muda", "--help"],
    "muda tag (missing files)": [
        "muda",
        "tag",
        "--src",
        "missing.en",
        "--tgt",
        "missing.fr",
        "--docids",
        "missing.docids",
        "--tgt-lang",
        "fr",
        "--dump-tags",
        "tags.json",
    ],
}


def run_once(argv, code: str, cwd: str) -> dict:
    """One run of a command line with ``code`` first on PYTHONPATH (timed by the harness)."""
    env = dict(os.environ, PYTHONPATH=code)
    proc = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, env=env, cwd=cwd)
    return {"exit": proc.returncode, "tensorboardX": "tensorboardX" in proc.stdout + proc.stderr}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="checkout of the code before (e.g. the main branch)")
    parser.add_argument("--after", default=str(harness.REPO), help="default: this checkout")
    harness.add_arguments(parser, repeats=5)
    args = harness.parse(parser, argv)
    checkouts = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    print(
        f"before: {checkouts['before']}\nafter:  {checkouts['after']}\n{args.repeats} runs each, median wall s; "
        f"'tbX': the tensorboardX line was printed; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}\n"
    )
    print(f"{'command':42} {'before':>8} {'after':>8} {'speed-up':>8}  exit  tbX (before/after)")
    rows, results = [], {}
    with tempfile.TemporaryDirectory() as cwd:
        for name, command in COMMANDS.items():
            seen = {w: [] for w in checkouts}

            def once(which, command=command, seen=seen):
                out = run_once(command, checkouts[which], cwd)
                seen[which].append(out)
                return out

            timings = harness.time_interleaved(
                {w: (lambda w=w: once(w)) for w in checkouts}, repeats=args.repeats, rotate=False
            )
            median = {w: t.median for w, t in timings.items()}
            codes = "/".join(str(seen[w][-1]["exit"]) for w in checkouts)
            noise = "/".join("yes" if any(r["tensorboardX"] for r in seen[w]) else "no" for w in checkouts)
            print(
                f"{name:42} {median['before']:8.2f} {median['after']:8.2f} "
                f"{median['before'] / median['after']:7.1f}x  {codes:5} {noise}"
            )
            rows.append(harness.Row(name, "s", median["before"], median["after"], higher_is_better=False))
            results[name] = {"timings": timings, "exit": codes, "tensorboardX": noise}
    harness.finish(args, "cli_startup", {"checkouts": checkouts, "commands": results, "rows": harness.compare(rows)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
