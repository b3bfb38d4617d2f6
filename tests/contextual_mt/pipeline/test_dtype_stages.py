"""DTYPE= on the stages that run a model (make translate, pcxmi, contrastive), on a copy of the
shared make chain (conftest.py; made on CPU, where the default auto is float32): the records name
the dtype, a run in another dtype does not reuse the float32 results, and make score takes the
translations of any dtype."""

import json
import shutil

import pytest

from tests.contextual_mt.pipeline.chain import make
from tests.helpers import contextual_mt_cli

SYSTEMS = ("sentence", "context", "context-gold")


@pytest.fixture
def work(make_chain, tmp_path):
    copy = tmp_path / "work"
    shutil.copytree(make_chain["work"], copy)
    return copy


def read(path):
    return json.loads(path.read_text())


def test_another_dtype_is_not_up_to_date_and_is_recorded(make_chain, work):
    variables = [v if not v.startswith("WORK=") else f"WORK={work}" for v in make_chain["variables"]]
    results = work / "results" / "fr"
    dtypes = lambda: {s: r["fingerprint"]["decoding"]["dtype"] for s, r in read(results / "translate.json").items()}  # noqa: E731
    assert dtypes() == dict.fromkeys(SYSTEMS, "float32")
    assert read(results / "pcxmi.summary.json")["dtype"] == "float32"

    # in this process (no interpreter to start; make passes DTYPE on: test_make_names.py), and one
    # system (translating the tiny model's degenerate output is slow)
    pair = ("--lang", "fr", "--root", str(work))
    translate = (
        "pipeline",
        "translate",
        *pair,
        "--beam",
        setting(make_chain, "BEAM"),
        "--systems",
        "context-gold",
        "--quiet",
    )
    proc = contextual_mt_cli(*translate, "--dtype", "bfloat16")
    assert proc.returncode == 0 and "context-gold: translating" in proc.stderr and " in bfloat16" in proc.stderr
    assert dtypes() == {"sentence": "float32", "context": "float32", "context-gold": "bfloat16"}
    make("score", *variables)  # the decoding (its dtype included) is not what score checks
    assert "context-gold: up to date" in contextual_mt_cli(*translate, "--dtype", "bfloat16").stderr
    assert "context-gold: translating" in contextual_mt_cli(*translate).stderr  # auto: float32 again

    assert contextual_mt_cli("pipeline", "pcxmi", *pair, "--dtype", "bfloat16", "--quiet").returncode == 0
    summary = read(results / "pcxmi.summary.json")
    assert summary["dtype"] == summary["fingerprint"]["dtype"] == "bfloat16"

    sets = make_chain["sets"].split("=", 1)[1]
    proc = contextual_mt_cli(
        "pipeline", "contrastive", *pair, "--sets", sets, "--systems", "context", "--dtype", "bfloat16", "--quiet"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert read(results / "contrastive" / "test.contrastive.context.json")["dtype"] == "bfloat16"
    assert read(results / "contrastive" / "test.contrastive.sentence.json")["dtype"] == "float32"  # not asked


def setting(chain, name):
    return next(v.split("=", 1)[1] for v in chain["variables"] if v.startswith(name + "="))
