"""Wall time of `make test` at each given revision, one after the other on this machine, each in
a throw-away worktree (this checkout's .venv, the revision's code first on PYTHONPATH).

    .venv/bin/python -m bench.make_test_time dafaeb1 HEAD [--repeats 1] [--json result.json]

Prints one line per revision: the revision, the median wall seconds, pytest's last line. Needs
`make install` first (the venv must have the newest revision's test dependencies, pytest-xdist
included).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import harness


def git(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(harness.REPO), *args], capture_output=True, text=True, check=check)


def make_test(tree: Path) -> str:
    """`make test` in ``tree``; pytest's last summary line."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    proc = subprocess.run(
        ["make", "--no-print-directory", "test"], cwd=tree, env=env, capture_output=True, text=True, check=False
    )
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if re.search(r"(passed|failed)", line)]
    return lines[-1].strip() if lines else f"no pytest summary (exit {proc.returncode})"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("revisions", nargs="+", metavar="REV")
    harness.add_arguments(p, repeats=1)
    args = harness.parse(p, argv)
    if not (harness.REPO / ".venv" / "bin" / "python").exists():
        sys.exit(f"{harness.REPO / '.venv'} not found; run 'make install' first")
    for rev in args.revisions:
        if git("rev-parse", "--verify", "-q", f"{rev}^{{commit}}", check=False).returncode != 0:
            sys.exit(f"{rev}: not a revision")
    print(harness.machine_line(harness.machine_info()), flush=True)
    results = {}
    for rev in args.revisions:
        short = git("rev-parse", "--short", rev).stdout.strip()
        tree = Path(tempfile.mkdtemp(prefix="make-test-time."))
        git("worktree", "add", "-q", "--detach", str(tree), rev)
        try:
            (tree / ".venv").symlink_to(harness.REPO / ".venv")
            timed = harness.time_it(lambda tree=tree: make_test(tree), repeats=args.repeats)
        finally:
            git("worktree", "remove", "--force", str(tree), check=False)
        print(f"{short}\t{timed.median:.0f} s\t{timed.result}", flush=True)
        results[short] = {"timing": timed, "pytest": timed.results}
    harness.finish(args, "make_test_time", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
