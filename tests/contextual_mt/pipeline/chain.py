"""The make chain the pipeline tests share (built by the ``make_chain`` fixture of conftest.py)
and ``make`` in the repository."""

import re
import shutil
from pathlib import Path

from tests.helpers import BIN, run

ROOT = Path(__file__).resolve().parents[3]


def make(*args, check=True):
    """``make ARGS`` in the repository (a UTF-8 locale, as the Makefile's recipes use)."""
    return run(["make", "-C", str(ROOT), "--no-print-directory", *args], env={"LC_ALL": "C.UTF-8"}, check=check)


def build_make_chain(root: Path) -> dict:
    """The study's folders (``work``), its corpus (``demo``: the demo corpus with its annotations
    and the same text in the TED release's layout), the null rows demo-data reported per split
    (``nulls``), each stage's make log (``logs``), the variables every stage got (``variables``)
    and the contrastive sets (``sets``)."""
    work, demo = root / "work", root / "demo"
    proc = run(
        [
            str(BIN / "contextual-mt"),
            "demo-data",
            "--output",
            str(demo),
            "--train-docs",
            "300",
            "--valid-docs",
            "20",
            "--test-docs",
            "30",
            "--seed",
            "3",
            "--ted",
        ]
    )
    nulls = {split: int(n) for split, n in re.findall(r"(train|valid|test) (\d+)", proc.stdout.split("TED layout")[1])}
    # the same variables for every stage (and for `make all`): a stage re-run with other
    # settings is a different experiment
    variables = [
        "LANG=fr",
        f"WORK={work}",
        f"TED={demo / 'ted_talks.tar.gz'}",
        "SPM_VOCAB=400",
        "PRESET=tiny",
        "EPOCHS=3",
        "GPUS=0",
        "BEAM=2",
        f"MUDA_ARGS=--lexicon {demo}/train.en.conllu {demo}/train.fr.conllu {demo}/train.align",
    ]
    logs = {"data": make("data", *variables)}
    for name in ("test.en.conllu", "test.fr.conllu", "test.align"):  # annotations a user puts beside the data
        shutil.copy(demo / name, work / "data" / "fr" / name)
    for stage in ("train", "translate", "score", "pcxmi", "testset", "muda-eval", "cues", "attribute"):
        logs[stage] = make(stage, *variables)
    logs["table"] = make("table", "LANGS=fr", f"WORK={work}")
    sets = f"SETS=voita:{demo / 'test.contrastive.json'}"
    logs["contrastive"] = make("contrastive", "LANG=fr", f"WORK={work}", sets)
    return {
        "root": root,
        "work": work,
        "demo": demo,
        "nulls": nulls,
        "logs": logs,
        "variables": variables,
        "sets": sets,
    }
