"""The real `make test-slurm`: a single-node Slurm on this machine, the whole pipeline on a small
synthetic corpus (installs Slurm with apt-get as root when missing), wherever it can run: Slurm
installed, or root with apt-get. CONTEXTUAL_MT_TEST_SLURM=0 skips it; =1 runs it even where it
looks impossible (to see why it fails). A file of its own, so that pytest-xdist runs it beside
the other tests rather than after the stub tests of test_slurm.py.
"""

import os
import shutil
import subprocess
import time

import pytest

from tests.recipes.test_slurm import ROOT, SUBMIT_VARS


def _can_bring_up_slurm() -> bool:
    installed = all(shutil.which(tool) for tool in ("slurmctld", "slurmd", "sbatch", "munged"))
    return os.geteuid() == 0 and (installed or shutil.which("apt-get") is not None)


@pytest.mark.skipif(
    os.environ.get("CONTEXTUAL_MT_TEST_SLURM") == "0"
    or (os.environ.get("CONTEXTUAL_MT_TEST_SLURM") != "1" and not _can_bring_up_slurm()),
    reason="a local Slurm needs root (slurmd) and Slurm installed or apt-get; "
    "CONTEXTUAL_MT_TEST_SLURM=0 skips it, =1 forces it",
)
def test_make_test_slurm():
    start = time.monotonic()
    env = {k: v for k, v in os.environ.items() if k not in SUBMIT_VARS and not k.startswith(("SLURM_", "MAKE"))}
    proc = subprocess.run(
        ["make", "--no-print-directory", "test-slurm"],
        cwd=str(ROOT),
        env=env,
        capture_output=True,
        text=True,
        timeout=int(os.environ.get("TEST_SLURM_TIMEOUT", 5400)) + 600,
    )
    took = time.monotonic() - start
    print(proc.stdout[-5000:])
    print(f"make test-slurm: {took:.0f} s")
    assert proc.returncode == 0 and "test-slurm: PASS" in proc.stdout, proc.stdout[-8000:] + proc.stderr[-3000:]
