"""``testset evaluate`` on a hand-made French manifest (8 groups in 4 documents) and two hand-made
systems: exact fractions per phenomenon and distance, intervals around the estimates, the paired
comparison, and bad input as one error with nothing written."""

import json

import pytest

from commandkit.errors import InputError
from contextual_mt.cli import main
from contextual_mt.testsets.evaluate import (
    EvaluateOptions,
    WordMatcher,
    contains,
    evaluate_testset,
    format_testset_table,
)

# (line, doc, phenomenon, word, alternatives, distance)
GROUPS = [
    (1, "d1", "formality", "Tu", ["Vous"], 1),
    (2, "d1", "pronouns", "elle", ["il"], 1),
    (3, "d2", "formality", "vous", ["tu"], 2),
    (4, "d2", "pronouns", "Elles", ["Ils"], 0),
    (5, "d3", "verb_form", "allait", ["alla"], None),
    (6, "d3", "lexical_cohesion", "voiture", ["automobile"], 5),
    (7, "d4", "formality", "t'", ["vous"], 3),
    (8, "d4", "pronouns", "elle", ["il"], 4),
]
GOOD = [
    "Tu viens demain ?",
    "Elle est partie.",
    "Avez-vous mangé ?",  # "vous" inside a hyphenated word
    "Elles sont là.",
    "Il allait à Paris.",
    "Le véhicule est rouge.",  # a paraphrase: missing
    "Je t\u2019aime.",  # a typographic apostrophe
    "Elle a dit qu'il viendrait.",
]  # correct, with the alternative elsewhere in the line
BAD = [
    "Vous venez demain ?",
    "Il est parti.",
    "As-tu mangé ?",
    "Ils sont là.",
    "Il alla à Paris.",
    "L'automobile est rouge.",
    "Je vous aime.",
    "Le chat dort.",
]


def write_lines(path, rows):
    path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.fixture
def suite(tmp_path):
    out = tmp_path / "suite"
    out.mkdir()
    records = [
        {
            "group": k,
            "line": line,
            "doc": doc,
            "sentence": line - 1,
            "phenomenon": ph,
            "position": 0,
            "word": word,
            "alternatives": alts,
            "distance": dist,
            "variants": [],
        }
        for k, (line, doc, ph, word, alts, dist) in enumerate(GROUPS)
    ]
    write_lines(out / "manifest.jsonl", [json.dumps(r, ensure_ascii=False) for r in records])
    (out / "summary.json").write_text(
        json.dumps({"language": "fr", "reference": "test.fr", "groups": 8, "lines": 8}), encoding="utf-8"
    )
    return {
        "manifest": str(out / "manifest.jsonl"),
        "good": write_lines(tmp_path / "good.fr", GOOD),
        "bad": write_lines(tmp_path / "bad.fr", BAD),
        "dir": tmp_path,
    }


def test_matching_pieces():
    m = WordMatcher("fr")
    assert contains(m.pieces("Je t\u2019aime."), m.pieces("t'"))
    assert contains(m.pieces("L'automobile est rouge"), m.pieces("automobile"))
    assert contains(m.pieces("Avez-vous mangé ?"), m.pieces("Vous"))
    assert not contains(m.pieces("Vous vous tutoyez"), m.pieces("tu"))
    assert contains(m.pieces("Il faut qu'il vienne"), m.pieces("qu' il"))


def test_fractions_per_phenomenon_and_distance(suite):
    result = evaluate_testset(EvaluateOptions(suite["manifest"], [suite["bad"], suite["good"]], bootstrap=200))
    bad, good = result["systems"]["bad.fr"], result["systems"]["good.fr"]
    assert good["overall"]["groups"] == 8
    assert (good["overall"]["correct"], good["overall"]["wrong_alternative"], good["overall"]["missing"]) == (
        7 / 8,
        0,
        1 / 8,
    )
    assert (bad["overall"]["correct"], bad["overall"]["wrong_alternative"], bad["overall"]["missing"]) == (
        0,
        7 / 8,
        1 / 8,
    )
    assert {p: e["correct"] for p, e in good["phenomena"].items()} == {
        "formality": 1,
        "pronouns": 1,
        "verb_form": 1,
        "lexical_cohesion": 0,
    }
    assert good["phenomena"]["lexical_cohesion"]["missing"] == 1
    assert bad["phenomena"]["pronouns"]["wrong_alternative"] == 2 / 3
    assert bad["phenomena"]["pronouns"]["missing"] == 1 / 3
    assert {d: e["groups"] for d, e in good["distances"].items()} == {
        "0": 1,
        "1": 2,
        "2": 1,
        "3": 1,
        ">3": 2,
        "unknown": 1,
    }
    assert good["distances"][">3"]["correct"] == 0.5 and good["distances"][">3"]["missing"] == 0.5
    assert bad["distances"][">3"]["wrong_alternative"] == 0.5 and bad["distances"]["unknown"]["wrong_alternative"] == 1
    assert good["overall"]["correct_with_alternative"] == 1  # line 8: "Elle ... qu'il"
    assert good["group_outcomes"][5] == "missing" and bad["group_outcomes"][6] == "wrong_alternative"


def test_intervals_bracket_the_estimates(suite):
    result = evaluate_testset(EvaluateOptions(suite["manifest"], [suite["good"]], bootstrap=300, seed=3))
    good = result["systems"]["good.fr"]
    cells = [good["overall"], *good["phenomena"].values(), *good["distances"].values()]
    for cell in cells:
        for what in ("correct", "wrong_alternative", "missing"):
            low, high = cell[f"{what}_ci"]
            assert low <= cell[what] <= high
    low, high = good["overall"]["correct_ci"]
    assert low < 7 / 8 and high == 1.0  # resamples without document d3 have no miss
    assert good["phenomena"]["formality"]["correct_ci"] == [1.0, 1.0]


def test_paired_comparison_finds_the_better_system(suite):
    result = evaluate_testset(EvaluateOptions(suite["manifest"], [suite["bad"], suite["good"]], bootstrap=500))
    [comparison] = result["comparisons"]
    assert (comparison["a"], comparison["b"]) == ("bad.fr", "good.fr")
    assert comparison["overall"]["difference"] == pytest.approx(7 / 8)
    assert comparison["overall"]["p"] < 0.05
    assert comparison["phenomena"]["lexical_cohesion"]["p"] == 1.0  # both 0 correct: no difference
    table = format_testset_table(result)
    assert "good.fr vs bad.fr" in table and "87.5 [" in table


def test_cli_writes_the_result(suite, capsys):
    output = suite["dir"] / "result.json"
    assert (
        main(
            [
                "testset",
                "evaluate",
                "--manifest",
                suite["manifest"],
                "--hyp",
                suite["bad"],
                "--hyp",
                suite["good"],
                "--bootstrap",
                "100",
                "--output",
                str(output),
            ]
        )
        == 0
    )
    assert "good.fr" in capsys.readouterr().out
    written = json.loads(output.read_text(encoding="utf-8"))
    assert written["systems"]["good.fr"]["overall"]["correct"] == 7 / 8 and written["notes"]


def test_wrong_line_count_is_one_error_and_nothing_written(suite, capsys):
    short = write_lines(suite["dir"] / "short.fr", GOOD[:7])
    output = suite["dir"] / "result.json"
    assert (
        main(
            [
                "testset",
                "evaluate",
                "--manifest",
                suite["manifest"],
                "--hyp",
                suite["good"],
                "--hyp",
                short,
                "--output",
                str(output),
            ]
        )
        == 1
    )
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "short.fr: has 7 lines but the test set has 8" in err
    assert not output.exists()


def test_line_count_without_summary_lines(suite):
    summary = suite["dir"] / "suite" / "summary.json"
    summary.write_text(json.dumps({"language": "fr"}), encoding="utf-8")
    longer = write_lines(suite["dir"] / "longer.fr", [*GOOD, "Encore une ligne."])
    assert evaluate_testset(EvaluateOptions(suite["manifest"], [longer], bootstrap=0))["lines"] is None
    with pytest.raises(InputError, match="has 7 lines but the manifest has a group on line 8"):
        evaluate_testset(EvaluateOptions(suite["manifest"], [write_lines(suite["dir"] / "s.fr", GOOD[:7])]))


def test_malformed_manifest_line(suite):
    path = suite["dir"] / "suite" / "manifest.jsonl"
    rows = path.read_text(encoding="utf-8").splitlines()
    write_lines(path, [*rows[:2], "{not json", *rows[3:]])
    with pytest.raises(InputError, match=r"manifest.jsonl:3: not a JSON object"):
        evaluate_testset(EvaluateOptions(suite["manifest"], [suite["good"]]))
    write_lines(path, [*rows[:1], json.dumps({"group": 1, "line": 2})])
    with pytest.raises(InputError, match=r"manifest.jsonl:2: not a group of a testset manifest"):
        evaluate_testset(EvaluateOptions(suite["manifest"], [suite["good"]]))


def test_missing_files_and_bad_options(suite):
    with pytest.raises(InputError, match=r"nowhere\.fr: system output not found"):
        evaluate_testset(EvaluateOptions(suite["manifest"], [str(suite["dir"] / "nowhere.fr")]))
    with pytest.raises(InputError, match=r"missing\.jsonl: manifest not found"):
        evaluate_testset(EvaluateOptions(str(suite["dir"] / "missing.jsonl"), [suite["good"]]))
    with pytest.raises(InputError, match="--bootstrap"):
        EvaluateOptions(suite["manifest"], [suite["good"]], bootstrap=-1)
    with pytest.raises(InputError, match="given twice"):
        EvaluateOptions(suite["manifest"], [suite["good"], suite["good"]])


def test_german_formality_is_told_by_case(tmp_path):
    group = {
        "group": 0,
        "line": 1,
        "doc": "d",
        "sentence": 0,
        "phenomenon": "formality",
        "position": 2,
        "word": "Sie",
        "alternatives": ["du"],
        "distance": 1,
        "variants": [],
    }
    (tmp_path / "manifest.jsonl").write_text(json.dumps(group) + "\n")
    (tmp_path / "summary.json").write_text(json.dumps({"language": "de", "lines": 1}))
    hyps = {"formal": "Kommen Sie morgen ?", "she": "Kommt sie morgen ?", "informal": "Kommst du morgen ?"}
    for name, text in hyps.items():
        (tmp_path / name).write_text(text + "\n")
    result = evaluate_testset(
        EvaluateOptions(str(tmp_path / "manifest.jsonl"), [str(tmp_path / n) for n in hyps], bootstrap=0)
    )
    outcomes = {name: result["systems"][name]["group_outcomes"][0] for name in hyps}
    assert outcomes == {"formal": "correct", "she": "missing", "informal": "wrong_alternative"}
