#!/usr/bin/env bash
# Wall time of `make test` at each given revision, one after the other on this machine, in a
# throw-away worktree each (this checkout's .venv, the revision's code first on PYTHONPATH).
#   bash bench/test_suite_time.sh dafaeb1 HEAD
# Prints one line per revision: REV, wall seconds, pytest's last line. Needs `make install` first
# (the venv must have the newest revision's test dependencies, pytest-xdist included).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$ROOT/.venv/bin/python" ] || { echo "error: $ROOT/.venv not found; run 'make install' first" >&2; exit 1; }
[ $# -gt 0 ] || { echo "usage: bash bench/test_suite_time.sh REV [REV...]" >&2; exit 1; }
for rev in "$@"; do
    git -C "$ROOT" rev-parse --verify -q "$rev^{commit}" >/dev/null || { echo "error: $rev: not a revision" >&2; exit 1; }
done
for rev in "$@"; do
    tree=$(mktemp -d "${TMPDIR:-/tmp}/test-suite-time.XXXXXX")
    git -C "$ROOT" worktree add -q --detach "$tree" "$rev"
    ln -s "$ROOT/.venv" "$tree/.venv"
    start=$(date +%s.%N)
    (cd "$tree" && PYTHONPATH="$tree" make --no-print-directory test) >"$tree.log" 2>&1 || true
    end=$(date +%s.%N)
    printf '%s\t%.0f s\t%s\n' "$(git -C "$ROOT" rev-parse --short "$rev")" "$(echo "$end - $start" | bc)" \
        "$(grep -E '(passed|failed)' "$tree.log" | tail -1)"
    git -C "$ROOT" worktree remove --force "$tree"
done
