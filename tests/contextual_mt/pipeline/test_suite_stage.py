"""``make testset SUITE=DIR``: a sample of ctxpro's French formality set (tests/fixtures/ctxpro),
imported by ``testset import``, through the make chain's tiny models (conftest.py), on a copy of
the chain: translated by the sentence and context models, scored per phenomenon with intervals
and on its contrastive variants, its record, its rows in ``make table``; bad inputs as one line
naming the variable or the file, exit 1, nothing written."""

import json
import shutil

import pytest

from contextual_mt.testsets.ctxpro import ImportOptions, import_ctxpro
from tests.contextual_mt.pipeline.chain import make
from tests.contextual_mt.testsets.test_ctxpro import FIXTURES, FR

DE = "mini.formality.opensubtitles.en-de.test"


def import_suite(folder, name=FR, **options):
    import_ctxpro(
        ImportOptions(
            evalset=str(FIXTURES / f"{name}.json"), inputs=str(FIXTURES / name), output_dir=str(folder), **options
        )
    )
    return folder


def chain_variables(make_chain, work):
    return [f"WORK={work}" if v.startswith("WORK=") else v for v in make_chain["variables"]]


def test_make_testset_with_an_imported_suite(make_chain, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(make_chain["work"], work)
    suite = import_suite(tmp_path / "ctxpro-fr-formality", context_size=1)
    imported = json.loads((suite / "summary.json").read_text())
    variables = [*chain_variables(make_chain, work), f"SUITE={suite}"]
    proc = make("testset", *variables)
    results = work / "results" / "fr" / "suites" / "ctxpro-fr-formality"
    for system in ("sentence", "context"):  # every line of the suite's documents translated
        assert len((results / f"{system}.fr").read_text().splitlines()) == imported["lines"]
    evaluation = json.loads((results / "evaluation.json").read_text())
    assert set(evaluation["systems"]) == {"sentence.fr", "context.fr"} and evaluation["bootstrap"] == 1000
    summary = json.loads((results / "summary.json").read_text())
    for system in ("sentence", "context"):
        cell = summary["systems"][system]["phenomena"]["formality"]
        assert cell["groups"] == 24 and cell["correct_ci"][0] <= cell["correct"] <= cell["correct_ci"][1]
        outcomes = evaluation["systems"][f"{system}.fr"]["group_outcomes"]
        assert cell["correct"] == outcomes.count("correct") / 24
        ranked = json.loads((results / f"voita.{system}.json").read_text())
        assert ranked["groups"] == imported["contrastive_groups"] > 0
        assert summary["systems"][system]["contrastive"] == ranked["accuracy"]
    assert summary["comparisons"]["context"]["against"] == "sentence"
    assert "formality" in proc.stdout and "context.fr vs sentence.fr" in proc.stdout
    record = json.loads((work / "results" / "fr" / ".stage" / "suite-ctxpro-fr-formality.json").read_text())
    assert record["fingerprint"]["suite"] == imported["files"]

    again = make("testset", *variables)
    assert (
        "up to date" in again.stderr
        and (results / "summary.json").read_text() == json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    )
    import_suite(suite, context_size=0)  # the suite imported again, otherwise: made again
    remade = make("testset", *variables)
    assert "up to date" not in remade.stderr
    record = json.loads((work / "results" / "fr" / ".stage" / "suite-ctxpro-fr-formality.json").read_text())
    assert record["fingerprint"]["suite"] != imported["files"]
    assert len((results / "sentence.fr").read_text().splitlines()) == 24  # no context sentences now

    table = make("table", "LANGS=fr", f"WORK={work}")
    assert table.returncode == 0
    rows = json.loads((work / "results" / "table" / "table.json").read_text())["suites"]
    assert [(r["suite"], r["system"], r["phenomenon"]) for r in rows] == [
        ("ctxpro-fr-formality", "sentence", "formality"),
        ("ctxpro-fr-formality", "context", "formality"),
    ]
    md = (work / "results" / "table" / "table.md").read_text()
    assert "## Imported test suites" in md and "| fr | ctxpro-fr-formality | context | formality | 24 |" in md


@pytest.mark.parametrize("case", ["missing", "empty", "edited", "other pair", "older import"])
def test_make_testset_refuses_a_bad_suite(tmp_path, case):
    """Checked before any data, model or output: one line naming SUITE or the suite's file."""
    work = tmp_path / "work"
    suite = import_suite(tmp_path / "suite", name=DE if case == "other pair" else FR)
    if case == "missing":
        suite = tmp_path / "nowhere"
    if case == "edited":
        (suite / "manifest.jsonl").write_text((suite / "manifest.jsonl").read_text().replace('"tu"', '"vous"'))
    if case == "older import":
        summary = json.loads((suite / "summary.json").read_text())
        del summary["files"]
        (suite / "summary.json").write_text(json.dumps(summary))
    expected = {
        "missing": [f"SUITE={suite}", "not a folder"],
        "empty": ["SUITE=", "give the folder"],
        "edited": [f"{suite}/manifest.jsonl", "changed since the suite was built"],
        "other pair": [f"SUITE={suite}", "en-de", "en-fr"],
        "older import": [f"{suite}/summary.json", "import the suite again"],
    }[case]
    proc = make("testset", "LANG=fr", f"WORK={work}", "SUITE=" if case == "empty" else f"SUITE={suite}", check=False)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr and "usage:" not in proc.stderr, proc.stderr[-2000:]
    assert all(fragment in errors[0] for fragment in expected), (expected, errors[0])
    assert "testset] Error 1" in proc.stderr  # the stage's exit status
    assert not work.exists()


def test_make_testset_passes_suite_beam_decoding_and_dtype():
    def dry_run(*variables):
        proc = make("-n", "testset", "LANG=fr", *variables)
        return next(line for line in proc.stdout.splitlines() if "pipeline testset" in line)

    line = dry_run("SUITE=suites/a b", "BEAM=3", "DECODING=sequential", "DTYPE=float32")
    assert "--suite='suites/a b'" in line and "--beam 3" in line
    assert "--decoding 'sequential'" in line and "--dtype 'float32'" in line
    assert "--suite" not in dry_run("BEAM=3") and "--beam" not in dry_run("BEAM=3")  # the test split's suites
