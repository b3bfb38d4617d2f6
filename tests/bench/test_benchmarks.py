"""Every benchmark and study in bench/ imports as a package module and answers ``--help`` (no
work done), with the options of the harness; none patches ``sys.path`` or keeps a clock of its
own. So a rename or a moved helper cannot break one silently."""

import re
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
# the package files, the harness, the shared baseline, the steps of the one GPU call's script
NOT_BENCHMARKS = {"__init__", "harness", "fairseq_generate", "gpu_measurements"}
MODULES = sorted(
    ".".join(path.relative_to(BENCH.parent).with_suffix("").parts)
    for folder in (BENCH, BENCH / "studies")
    for path in folder.glob("*.py")
    if path.stem not in NOT_BENCHMARKS
)


def test_the_benchmarks_are_found():
    assert {"bench.translate_speed", "bench.cxmi_speed", "bench.studies.pcxmi_demo_study"} <= set(MODULES)
    # a benchmark is a Python module run through bench.harness; the one shell script runs them
    # all in one device call (a GPU is lent for ~15 minutes, start-up included)
    assert [p.name for p in BENCH.glob("*.sh")] == ["gpu_measurements.sh"]


@pytest.mark.parametrize("name", MODULES)
def test_each_benchmark_imports_and_answers_help(name, capsys):
    module = import_module(name)
    with pytest.raises(SystemExit) as e:
        module.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage:") and "--json" in out


@pytest.mark.parametrize("name", MODULES)
def test_each_benchmark_times_through_the_harness(name):
    text = (BENCH.parent / Path(*name.split("."))).with_suffix(".py").read_text(encoding="utf-8")
    assert "sys.path" not in text
    assert not re.search(r"\btime\.(perf_counter|time|monotonic)\(", text), "time it with bench.harness"
    assert "from bench import harness" in text


def test_a_benchmark_runs_as_a_module_from_the_repository_root():
    proc = subprocess.run(
        [sys.executable, "-m", "bench.cli_startup", "--help"],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("usage:"), proc.stderr
