"""contextual_mt.api: the commands as Python functions, on the options classes the command lines
are generated from; the tutorial docs/tutorials/from-python.md runs as written."""

import contextlib
import io
import json
import os
import re
from pathlib import Path

import pytest

from contextual_mt import ContextualMTError, api
from contextual_mt.analysis.cxmi import CxmiOptions
from contextual_mt.errors import InputError
from contextual_mt.metrics import ScoreOptions
from tests.helpers import contextual_mt_cli

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorials" / "from-python.md"


@pytest.fixture
def folder(tmp_path, dynamic_model, data_bin, raw_corpus, monkeypatch):
    """The tutorial's folder: model/checkpoint.pt, model/data-bin and the test set."""
    (tmp_path / "model").mkdir()
    os.symlink(dynamic_model, tmp_path / "model" / "checkpoint.pt")
    os.symlink(data_bin, tmp_path / "model" / "data-bin")
    for name in ("test.en", "test.fr", "test.docids"):
        os.symlink(raw_corpus / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_from_python_tutorial_runs_as_written(folder):
    blocks = re.findall(r"^```python\n(.*?)^```", TUTORIAL.read_text(encoding="utf-8"), re.S | re.M)
    assert len(blocks) >= 5
    scope: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in blocks:
            exec(compile(block, str(TUTORIAL), "exec"), scope)  # the page's own code
    printed = out.getvalue().splitlines()
    lines = (folder / "test.en").read_text(encoding="utf-8").splitlines()
    assert printed[0].startswith(f"{len(lines)} lines in test.hyp.fr the model in ")
    assert scope["made"].lines == (folder / "test.hyp.fr").read_text(encoding="utf-8").splitlines()
    assert scope["run"].records == [json.loads(x) for x in (folder / "pcxmi.jsonl").read_text().splitlines()]
    merged = [json.loads(x) for x in (folder / "pcxmi-merged.jsonl").read_text().splitlines()]
    assert scope["merged"].records == merged and [r["line"] for r in merged] == [
        r["line"] for r in scope["run"].records
    ]
    # contrastive: the losses written, the summary written, one record per group
    result = scope["contrast"]
    assert result.scores == [float(x) for x in (folder / "repeat.scores").read_text().splitlines()]
    assert len(result.scores) == 2 * len(result.groups) == 14
    assert result.summary == json.loads((folder / "repeat.json").read_text())
    assert [g["right"] for g in result.groups] == [
        result.scores[2 * k] < result.scores[2 * k + 1] for k in range(len(result.groups))
    ]
    assert sum(g["right"] for g in result.groups) == result.summary["right"]
    assert scope["rescored"].summary["accuracy"] == result.summary["accuracy"] and "True" in printed
    assert any(line.startswith("refused: --batch-size") for line in printed)
    assert not (folder / "bad.jsonl").exists()
    assert printed[-1] == "True"
    # the test suites: what the functions return is what they wrote
    suite = scope["suite"]
    assert suite.groups == [json.loads(x) for x in (folder / "suite" / "manifest.jsonl").read_text().splitlines()]
    assert suite.summary == json.loads((folder / "suite" / "summary.json").read_text()) and suite.summary["groups"] > 0
    assert suite.tagged["language"] == "fr" and (folder / "suite" / "reference.tags.json").is_file()
    measures = scope["measures"]
    assert measures.result == json.loads((folder / "evaluation.json").read_text())
    assert measures.result["systems"]["test.fr"]["group_outcomes"] == ["correct"] * len(suite.groups)
    assert scope["cues"].output is None and list(scope["cues"].result["systems"]) == ["reference.fr"]


def test_the_api_and_the_command_line_make_the_same_records(folder):
    made = api.cxmi(
        path="model/checkpoint.pt", data="model/data-bin", source="test.en", reference="test.fr",
        docids="test.docids", output="api.jsonl", quiet=True, batch_size=4,
    )  # fmt: skip
    proc = contextual_mt_cli(
        "cxmi", "--path", "model/checkpoint.pt", "--data", "model/data-bin", "--source", "test.en",
        "--reference", "test.fr", "--docids", "test.docids", "--output", "cli.jsonl", "--quiet", "--batch-size", "4",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (folder / "cli.jsonl").read_text() == (folder / "api.jsonl").read_text()
    assert made.summary["cxmi"] == json.loads((folder / "cli.summary.json").read_text())["cxmi"]


def test_an_api_error_is_raised_not_printed_and_options_are_checked(folder, capsys):
    corpus = {"source": "test.en", "reference": "test.fr", "docids": "test.docids", "output": "x.jsonl"}
    with pytest.raises(ContextualMTError, match="give the model: --path CHECKPOINT"):
        api.cxmi(**corpus)
    with pytest.raises(ContextualMTError, match="--seed"):
        api.cxmi(path="model/checkpoint.pt", data="model/data-bin", seed=-1, **corpus)
    with pytest.raises(InputError, match=r"x\.hyp: file not found"):
        api.score(hyp="x.hyp", ref="test.fr")
    assert capsys.readouterr().err == "" and not (folder / "x.jsonl").exists()
    with pytest.raises(TypeError, match="unknown options: bacth_size"):
        api.cxmi(path="model/checkpoint.pt", bacth_size=3, **corpus)
    with pytest.raises(TypeError, match="not both"):
        api.score(ScoreOptions("test.fr", "test.fr"), docids="test.docids")
    with pytest.raises(TypeError, match="missing required options: reference, docids, output"):
        CxmiOptions(api.model_spec(api.ModelArgs(path="model/checkpoint.pt")), "test.en")
    # the field and the command line's name of an inverted option both work
    spec = api.model_spec(api.ModelArgs(path="model/checkpoint.pt", data="model/data-bin"))
    o = api.command_options(CxmiOptions, None, dict(model=spec, overwrite=True, quiet=True, **corpus))
    assert (o.resume, o.progress) == (False, False)
    assert api.command_options(CxmiOptions, None, dict(model=spec, resume=False, **corpus)).resume is False


def test_importing_the_api_loads_no_model_library():
    import subprocess
    import sys

    heavy = ("torch", "fairseq", "transformers")
    code = f"import sys, contextual_mt.api; print(*[m for m in {heavy!r} if m in sys.modules])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.strip() == "", proc.stdout + proc.stderr[-2000:]


def test_align_returns_the_alignment_it_writes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ids").write_text("a\na\nb\n", encoding="utf-8")
    (tmp_path / "pivot").write_text("M. Dupont est là.\nIl part.\nFin.\n", encoding="utf-8")
    (tmp_path / "out.jsonl").write_text(
        '{"doc": "a", "text": "M. Dupont est là. Il part."}\n{"doc": "b", "text": "Fin."}\n', encoding="utf-8"
    )
    made = api.align(
        hyp_documents="out.jsonl", docids="ids", pivot="pivot", segmenter_lang="fr", output="aligned",
        alignment="alignment.jsonl",
    )  # fmt: skip
    assert made.hypotheses == ["M. Dupont est là.", "Il part.", "Fin."]
    assert (tmp_path / "aligned").read_text(encoding="utf-8").splitlines() == made.hypotheses
    written = [json.loads(x) for x in (tmp_path / "alignment.jsonl").read_text(encoding="utf-8").splitlines()]
    assert written == list(made.records())
    with pytest.raises(InputError, match="--pivot: give a sentence-level translation"):
        api.align(hyp_documents="out.jsonl", docids="ids", output="o2", alignment="a2")
    assert not (tmp_path / "o2").exists()


def test_contrastive_refuses_a_run_it_cannot_make_before_reading_anything(tmp_path, monkeypatch, capsys):
    from commandkit.errors import Code

    monkeypatch.chdir(tmp_path)
    (tmp_path / "set.json").write_text('[{"src": "a", "dst": ["b", "c"], "true_ind": 0}]', encoding="utf-8")
    (tmp_path / "s.txt").write_text("1\n2\n", encoding="utf-8")
    with pytest.raises(InputError, match="--scores evaluates existing scores") as e:
        api.contrastive(format="voita", input="set.json", scores="s.txt", output="o", summary="sum.json")
    assert e.value.code == Code.OPTIONS_CONFLICT
    with pytest.raises(InputError, match="give --path or --hf-model, and --output") as e:
        api.contrastive(format="voita", input="set.json", summary="sum.json")
    assert e.value.code == Code.OPTION_MISSING
    with pytest.raises(InputError, match="--maximize applies to --scores only") as e:
        api.contrastive(
            path="model.pt", format="voita", input="set.json", output="o", summary="sum.json", maximize=True
        )
    assert e.value.code == Code.OPTIONS_CONFLICT
    with pytest.raises(InputError, match="--summary would overwrite an input") as e:
        api.contrastive(format="voita", input="set.json", scores="s.txt", summary="s.txt")
    assert e.value.code == Code.OUTPUT_IS_INPUT
    # without a model: the accuracy of the given scores, and what they decide per group
    made = api.contrastive(format="voita", input="set.json", scores="s.txt", summary="sum.json")
    assert (made.scores, made.summary["accuracy"], made.groups[0]["right"]) == ([1.0, 2.0], 1.0, True)
    assert capsys.readouterr() == ("", "")


def test_cxmi_merge_takes_the_shards_as_a_list(tmp_path):
    from commandkit.errors import Code

    with pytest.raises(InputError, match="give the shards to merge") as e:
        api.cxmi_merge(shards="s0.jsonl", output=str(tmp_path / "m.jsonl"))
    assert e.value.code == Code.OPTION_MISSING
    with pytest.raises(TypeError, match="missing required options: output"):
        api.cxmi_merge(shards=["s0.jsonl"])


def _suite_inputs(data: Path) -> dict:
    """``testset build``'s inputs on the demo corpus: its gold tags and annotations."""
    names = {"source": "test.en", "reference": "test.fr", "docids": "test.docids", "tags": "test.tags.json"}
    names.update(tgt_conllu="test.fr.conllu", src_conllu="test.en.conllu", alignments="test.align")
    return {"lang": "fr", **{k: str(data / v) for k, v in names.items()}}


def test_the_testset_functions_write_what_the_commands_write(demo_corpus, tmp_path):
    data = demo_corpus(train_docs=1, valid_docs=1, test_docs=12, seed=4)
    inputs = _suite_inputs(data)
    suite = api.testset_build(**inputs, output_dir=str(tmp_path / "api"))
    flags = [x for k, v in inputs.items() for x in ("--" + k.replace("_", "-"), v)]
    proc = contextual_mt_cli("testset", "build", *flags, "--output-dir", str(tmp_path / "cli"))
    assert proc.returncode == 0, proc.stderr
    for name in ("manifest.jsonl", "voita.json", "contrapro.json", "summary.json"):
        assert (tmp_path / "api" / name).read_text() == (tmp_path / "cli" / name).read_text(), name
    assert suite.tagged is None and len(suite.groups) == suite.summary["groups"] > 0
    # a system that drops the first tested word: one group missing, as the command counts it
    refs = (data / "test.fr").read_text(encoding="utf-8").splitlines()
    first = suite.groups[0]
    words = refs[first["line"] - 1].split()
    words.remove(first["word"])
    refs[first["line"] - 1] = " ".join(words)
    (tmp_path / "system.fr").write_text("\n".join(refs) + "\n", encoding="utf-8")
    measures = api.testset_evaluate(manifest=suite.manifest, hyps=[str(tmp_path / "system.fr")], bootstrap=0)
    assert measures.output is None and measures.result["systems"]["system.fr"]["group_outcomes"][0] != "correct"
    proc = contextual_mt_cli(
        "testset", "evaluate", "--manifest", suite.manifest, "--hyp", str(tmp_path / "system.fr"), "--bootstrap", "0"
    )
    assert proc.returncode == 0 and proc.stdout.startswith(measures.table + "\n"), proc.stderr


def test_testset_import_returns_the_suite_it_writes(tmp_path):
    from tests.contextual_mt.testsets.test_ctxpro import FIXTURES, FR

    suite = api.testset_import(
        format="ctxpro", evalset=str(FIXTURES / f"{FR}.json"), inputs=str(FIXTURES / FR), output_dir=str(tmp_path / "s")
    )
    assert suite.summary == json.loads((tmp_path / "s" / "summary.json").read_text())
    assert suite.groups == [json.loads(x) for x in (tmp_path / "s" / "manifest.jsonl").read_text().splitlines()]
    assert suite.groups and suite.manifest == str(tmp_path / "s" / "manifest.jsonl")


def test_the_testset_functions_raise_errors_of_their_kind(demo_corpus, tmp_path, capsys):
    from commandkit.errors import Code
    from tests.contextual_mt.testsets.test_ctxpro import FIXTURES, FR

    data = demo_corpus(train_docs=1, valid_docs=1, test_docs=12, seed=4)
    inputs = _suite_inputs(data)
    short = tmp_path / "short.fr"
    short.write_text("".join(data.joinpath("test.fr").read_text().splitlines(keepends=True)[:-1]))
    ctxpro = {"evalset": str(FIXTURES / f"{FR}.json"), "inputs": str(FIXTURES / FR)}
    cases = [
        (
            lambda: api.testset_build(**{**inputs, "reference": str(short)}, output_dir=str(tmp_path / "a")),
            Code.LINE_COUNT,
        ),
        (
            lambda: api.testset_build(**inputs, phenomena=("nothing",), output_dir=str(tmp_path / "b")),
            Code.OPTION_VALUE,
        ),
        (lambda: api.testset_evaluate(manifest="m.jsonl", hyps=["x", "x"]), Code.OPTION_VALUE),
        (lambda: api.testset_evaluate(manifest="m.jsonl", hyps=["x"], bootstrap=5), Code.OPTION_VALUE),
        (
            lambda: api.testset_evaluate(
                manifest=str(tmp_path / "m.jsonl"), hyps=["x"], output=str(tmp_path / "m.jsonl")
            ),
            Code.OUTPUT_IS_INPUT,
        ),
        (lambda: api.testset_cues(suite=str(tmp_path / "nowhere"), evaluation="e.json"), Code.NOT_FOUND),
        (lambda: api.testset_import(**ctxpro, output_dir=str(tmp_path / "c"), category="colour"), Code.OPTION_VALUE),
        (
            lambda: api.testset_import(format="other", evalset="e.json", inputs="i", output_dir=str(tmp_path / "d")),
            Code.OPTION_VALUE,
        ),
    ]
    for call, code in cases:
        with pytest.raises(InputError) as raised:
            call()
        assert raised.value.code is code, (str(raised.value), code)
    assert capsys.readouterr().out == "" and sorted(p.name for p in tmp_path.iterdir()) == ["short.fr"]
    with pytest.raises(TypeError, match="unknown options: hyp_file"):
        api.testset_evaluate(manifest="m.jsonl", hyp_file=["x"])
