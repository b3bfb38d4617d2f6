"""`make install`'s recipe (Makefile): fairseq 0.12.2 goes in last, with ``--no-deps``.

pip checks the packages an install touches against what the environment's packages require:
with fairseq installed first, the plugin's hydra-core 1.3.2 and omegaconf 2.3.0 (and every later
install of them) print pip's red "ERROR: pip's dependency resolver ..." for fairseq's stale pins
(hydra-core<1.1, omegaconf<2.1), which a newcomer reads as a failed install. An install with
``--no-deps`` checks nothing; installed last, nothing after it meets the stale pins (issue 50.6;
measured in a scratch venv: the wheel first, then ``pip install hydra-core==1.3.2``, prints the
ERROR; the other way round, nothing)."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def install_recipe():
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        text = f.read()
    recipe = re.search(r"^install:.*\n((?:\t.*\n)+)", text, re.M)
    assert recipe, "no install target in the Makefile"
    return [line.strip() for line in recipe.group(1).splitlines() if not line.strip().startswith("@#")]


def test_fairseq_is_installed_last_without_its_dependencies():
    installs = [line for line in install_recipe() if re.search(r"\$\(PIP\) install\b", line)]
    fairseq = [k for k, line in enumerate(installs) if "fairseq-0.12.2" in line]
    assert len(fairseq) == 1, installs
    assert "--no-deps" in installs[fairseq[0]]
    assert fairseq[0] == len(installs) - 1, f"installed after fairseq: {installs[fairseq[0] + 1 :]}"
