"""Start-up time of the commands: ``--help``, an option or file error, a command that loads no model.

Times each command line (wall clock, median of ``--repeats`` runs) for two checkouts side by side:
the code in ``--before`` and in ``--after`` (each put first on PYTHONPATH, so the same virtual
environment runs either), the runs of the two interleaved so that a busy machine slows both
alike. Also reports whether the output held fairseq's "Please install tensorboardX" line.

    .venv/bin/python bench/cli_startup.py --before /work/main [--after .] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def run_once(argv, code: str, cwd: str):
    env = dict(os.environ, PYTHONPATH=code)
    start = time.perf_counter()
    proc = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, env=env, cwd=cwd)
    seconds = time.perf_counter() - start
    return seconds, proc.returncode, "tensorboardX" in proc.stdout + proc.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="checkout of the code before (e.g. the main branch)")
    parser.add_argument("--after", default=str(Path(__file__).resolve().parents[1]), help="default: this checkout")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    checkouts = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    print(
        f"before: {checkouts['before']}\nafter:  {checkouts['after']}\n{args.repeats} runs each, median wall s; "
        f"'tbX': the tensorboardX line was printed; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}\n"
    )
    print(f"{'command':42} {'before':>8} {'after':>8} {'speed-up':>8}  exit  tbX (before/after)")
    with tempfile.TemporaryDirectory() as cwd:
        for name, argv in COMMANDS.items():
            runs = {"before": [], "after": []}
            for _ in range(args.repeats):
                for which, code in checkouts.items():
                    runs[which].append(run_once(argv, code, cwd))
            median = {w: statistics.median(r[0] for r in rs) for w, rs in runs.items()}
            codes = "/".join(str(runs[w][-1][1]) for w in runs)
            noise = "/".join("yes" if any(r[2] for r in runs[w]) else "no" for w in runs)
            print(
                f"{name:42} {median['before']:8.2f} {median['after']:8.2f} "
                f"{median['before'] / median['after']:7.1f}x  {codes:5} {noise}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
