"""Errors of the stages run by make name the Make variables the user typed (SHARD=, SHARDS=,
TED=/IWSLT=/TEXT=), run by hand the options; all before any model loads."""

import os
import re

import pytest

from contextual_mt.pipeline.make_names import MAKE_ENV, MAKE_VARIABLES, given, option_name
from tests.contextual_mt.pipeline.chain import ROOT, make
from tests.contextual_mt.pipeline.test_pipeline_bad_input import cmt, one_error


def test_the_mapping_is_the_makefiles():
    makefile = (ROOT / "Makefile").read_text()
    for flag, var in MAKE_VARIABLES.items():
        assert re.search(rf"{re.escape(flag)}[ =](\$\({var}\)|\$\(call quote,\$\({var}\)\))", makefile), (flag, var)
    assert f"STAGE := {MAKE_ENV}=1 " in makefile


def test_spelling_by_hand_and_under_make(monkeypatch):
    monkeypatch.delenv(MAKE_ENV, raising=False)
    assert (given("--shard", "3/2"), given("--ted"), option_name("--vocab-size")) == (
        "--shard 3/2",
        "--ted",
        "--vocab-size",
    )
    monkeypatch.setenv(MAKE_ENV, "1")
    assert (given("--shard", "3/2"), given("--ted"), option_name("--vocab-size")) == ("SHARD=3/2", "TED=", "SPM_VOCAB")
    assert given("--lang", "fr") == "--lang fr"  # no Make variable of its own


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["--shard", "0/2"], ["SHARD=0/2", "need 1 <= i <= n", "count from 1"]),
        (["--shard", "3/2"], ["SHARD=3/2", "need 1 <= i <= n"]),
        (["--shard", ""], ["SHARD=''", "i/n"]),
        (["--merge-shards", ""], ["SHARDS=''", "number of shards"]),
        (["--merge-shards", "x"], ["SHARDS=x", "number of shards"]),
        (["--merge-shards", "0"], ["SHARDS must be >= 1"]),
    ],
)
def test_pcxmi_stage_errors_name_make_variables(tmp_path, monkeypatch, args, fragments):
    monkeypatch.setenv(MAKE_ENV, "1")
    line = one_error(cmt("pipeline", "pcxmi", "--lang", "fr", "--root", tmp_path, *args), *fragments)
    assert "--shard" not in line and "--merge-shards" not in line


def test_pcxmi_stage_by_hand_names_the_option(tmp_path, monkeypatch):
    monkeypatch.delenv(MAKE_ENV, raising=False)
    one_error(cmt("pipeline", "pcxmi", "--lang", "fr", "--root", tmp_path, "--shard", "3/2"), "--shard 3/2", "1 <= i")


def test_make_pcxmi_shard_names_shard(tmp_path):
    for target, var, fragment in (
        ("pcxmi-shard", "SHARD=0/2", "SHARD=0/2: need 1 <= i <= n"),
        ("pcxmi-merge", "SHARDS=", "SHARDS='': give the number of shards"),
    ):
        proc = make(target, "LANG=fr", f"WORK={tmp_path}", var, check=False)
        assert proc.returncode != 0 and "Traceback" not in proc.stderr and "usage:" not in proc.stderr
        assert f"error: {fragment}" in proc.stderr, proc.stderr[-2000:]
    assert not list(tmp_path.iterdir())


def test_pcxmi_merge_names_the_shards_not_scored_yet(tmp_path, monkeypatch):
    from contextual_mt.pipeline.layout import eval_paths

    p = eval_paths("fr", str(tmp_path))
    for path in (p.checkpoint, p.test("en"), p.test("fr"), p.test("docids")):  # present; never read here
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").close()
    os.makedirs(p.results)
    open(os.path.join(p.results, "pcxmi.shard-2-of-3.jsonl"), "w").close()
    monkeypatch.setenv(MAKE_ENV, "1")
    one_error(
        cmt("pipeline", "pcxmi", "--lang", "fr", "--root", tmp_path, "--merge-shards", "3"),
        "pcxmi.shard-1-of-3.jsonl: does not exist",
        "2 of 3 shards not scored yet: 1/3, 3/3",
        "SHARD=i/n",
    )
    assert sorted(os.listdir(p.results)) == ["pcxmi.shard-2-of-3.jsonl"]


def test_bad_make_variable_values_are_one_line_naming_the_variable(tmp_path):
    # argparse's own errors (a value of the wrong type, an unknown choice, an empty value), under
    # make: no usage dump, no option the user never typed
    for target, variables, fragment in (
        ("data", ["SPM_VOCAB=x", f"TEXT={tmp_path}"], "SPM_VOCAB: invalid int value: 'x'"),
        ("translate", ["BEAM=abc"], "BEAM: invalid int value: 'abc'"),
        ("translate", ["BEAM="], "BEAM: needs a value (it is empty)"),
        ("train", ["PRESET=huge"], "PRESET: invalid choice: 'huge'"),
        # and the stages' own checks of the values
        ("translate", ["BEAM=0"], "BEAM must be >= 1 (got 0)"),
        ("train", ["EPOCHS=0"], "EPOCHS must be >= 1 (got 0)"),
        ("train", ["GPUS=-1"], "GPUS must be >= 0 (got -1)"),
        ("train", ["BATCH=lots"], "BATCH must be auto, preset or a number of tokens per update (got 'lots')"),
        ("train", ["BATCH=0"], "BATCH must be >= 1 tokens per update (got 0)"),
        # DTYPE reaches every stage that runs a model
        *(
            (target, ["DTYPE=fp8", *extra], "DTYPE must be one of auto, float32, bfloat16, float16 (got 'fp8')")
            for target, extra in (
                ("translate", []),
                ("pcxmi", []),
                ("pcxmi-shard", ["SHARD=1/2"]),
                ("contrastive", ["SETS=voita:x.json"]),
            )
        ),
    ):
        proc = make(target, "LANG=fr", f"WORK={tmp_path}", *variables, check=False)
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert proc.returncode != 0 and len(errors) == 1 and errors[0].startswith(f"error: {fragment}"), proc.stderr[
            -2000:
        ]
        assert "usage:" not in proc.stderr
    assert not list(tmp_path.iterdir())


def test_a_bad_muda_option_names_muda_args(monkeypatch):
    from contextual_mt.errors import InputError
    from contextual_mt.pipeline.muda_eval import muda_options

    stage = {"src": "S", "ref": "R", "docids": "D", "tgt_lang": "fr", "hyps": ["H"]}  # what the stage sets itself
    words = ["--frobnicate", "3"]  # MUDA_ARGS
    monkeypatch.setenv(MAKE_ENV, "1")
    with pytest.raises(
        InputError,
        match=r"^MUDA_ARGS: muda eval refuses it: unrecognized arguments: "
        r"--frobnicate 3$",
    ):
        muda_options("eval", words, **stage)
    monkeypatch.delenv(MAKE_ENV)
    with pytest.raises(InputError, match=r"^--muda-tag-args: muda tag refuses it: .*--tgt"):
        muda_options("tag", ["--src", "S", "--tgt"])
    assert muda_options("eval", words[:-2], **stage).hyps == ["H"]


def test_the_option_strings_are_split_in_one_place_naming_what_the_user_typed(tmp_path, monkeypatch):
    """MUDA_ARGS, MUDA_TAG_ARGS and ATTRIBUTE_ARGS are split and checked by one function: an
    unbalanced quote is one line naming the Make variable under make, the option by hand."""
    from contextual_mt.errors import InputError
    from contextual_mt.pipeline.make_names import split_words
    from contextual_mt.pipeline.muda_eval import MudaEvalOptions

    monkeypatch.setenv(MAKE_ENV, "1")
    for flag, var in (
        ("--muda-args", "MUDA_ARGS"),
        ("--muda-tag-args", "MUDA_TAG_ARGS"),
        ("--attribute-args", "ATTRIBUTE_ARGS"),
    ):
        with pytest.raises(InputError, match=rf"^{var}: No closing quotation \(--x 'y\)$"):
            split_words("--x 'y", flag)
    with pytest.raises(InputError, match=r"^MUDA_ARGS: No closing quotation"):
        MudaEvalOptions("fr", str(tmp_path), muda_args="--x 'y")
    monkeypatch.delenv(MAKE_ENV)
    with pytest.raises(InputError, match=r"^--muda-tag-args: No closing quotation"):
        MudaEvalOptions("fr", str(tmp_path), muda_tag_args="--x 'y")
    assert split_words("--lexicon 'a b' c", "--muda-args") == ["--lexicon", "a b", "c"]
