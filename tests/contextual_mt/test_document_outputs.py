"""A document-level system output in ``contextual-mt score`` and ``testset evaluate``
(``contextual_mt.system_outputs``): the line-aligned hypotheses joined per document score what the
line-aligned file scores; a perturbed output reports its merges, splits, omissions and additions;
a line-aligned --hyp is read as before (the same bytes)."""

import json
from pathlib import Path

import pytest

from commandkit.documents import document_spans
from commandkit.errors import InputError
from contextual_mt.metrics import score, score_files
from contextual_mt.testsets.evaluate import EvaluateOptions, evaluate_testset, format_testset_table
from docalign.align import AlignArgs
from docalign.links import summary
from docalign.perturb import perturb
from tests.contextual_mt.testsets.test_evaluate import GOOD, suite  # noqa: F401 (a fixture)
from tests.helpers import contextual_mt_cli, write_corpus

METRICS = ("bleu", "chrf", "d_bleu")


def write_lines(path: Path, rows) -> str:
    path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    return str(path)


def write_documents(path: Path, lines, ids, jsonl: bool = True) -> str:
    """``lines`` joined per document of ``ids``: JSONL records (in reverse order: the order is
    free), or one document per line."""
    texts = [(ids[a], " ".join(lines[a:b])) for a, b in document_spans(ids)]
    if jsonl:
        return write_lines(path, [json.dumps({"doc": d, "text": t}, ensure_ascii=False) for d, t in reversed(texts)])
    return write_lines(path, [t for _, t in texts])


@pytest.fixture
def corpus(tmp_path):
    """40 documents of the tiny EN->FR corpus, and a system output: the references with words changed."""
    write_corpus(tmp_path, seed=3, sizes=(("test", 40),))
    refs = (tmp_path / "test.fr").read_text().splitlines()
    ids = (tmp_path / "test.docids").read_text().splitlines()
    hyps = [r.replace("grand", "petit").replace("chien", "chat") for r in refs]
    return {
        "dir": tmp_path,
        "ref": str(tmp_path / "test.fr"),
        "docids": str(tmp_path / "test.docids"),
        "hyp": write_lines(tmp_path / "sys.fr", hyps),
        "hyps": hyps,
        "ids": ids,
    }


@pytest.mark.parametrize("jsonl", [True, False], ids=["jsonl", "document-per-line"])
def test_document_output_of_a_line_aligned_one_scores_the_same(corpus, jsonl):
    docs = write_documents(corpus["dir"] / "sys.docs", corpus["hyps"], corpus["ids"], jsonl)
    lines = score_files(corpus["hyp"], corpus["ref"], docids=corpus["docids"])
    aligned = score_files(docs, corpus["ref"], docids=corpus["docids"])
    for metric in METRICS:
        assert aligned[metric]["score"] == lines[metric]["score"], metric
    stats = aligned["alignment"]
    assert (stats["merges"], stats["splits"], stats["omissions"], stats["additions"]) == (0, 0, 0, 0)
    assert stats["lines"] == len(corpus["ids"]) and stats["links"]["1-1"] == len(corpus["ids"])
    assert "alignment" not in lines


def test_line_aligned_hyp_gives_the_bytes_of_before(corpus):
    """The result file of a line-aligned --hyp is what score() gave before alignment existed (no
    'alignment' entry, no pivot), whatever alignment options are given."""
    out, out2 = corpus["dir"] / "a.json", corpus["dir"] / "b.json"
    args = ["--hyp", corpus["hyp"], "--ref", corpus["ref"], "--docids", corpus["docids"]]
    assert contextual_mt_cli("score", *args, "--output", str(out)).returncode == 0
    proc = contextual_mt_cli("score", *args, "--output", str(out2), "--band", "3", "--segmenter-lang", "fr")
    assert proc.returncode == 0 and "aligned" not in proc.stdout
    refs = Path(corpus["ref"]).read_text().splitlines()
    before = score(corpus["hyps"], refs, corpus["ids"])
    before["files"] = {"hyp": corpus["hyp"], "ref": corpus["ref"], "docids": corpus["docids"], "source": None}
    expected = json.dumps(before, indent=2, ensure_ascii=False) + "\n"
    assert out.read_text(encoding="utf-8") == expected
    assert out2.read_bytes() == out.read_bytes()


def test_perturbed_output_reports_its_alignment(corpus):
    perturbed = perturb(corpus["hyps"], corpus["ids"], seed=2)
    docs = write_lines(
        corpus["dir"] / "perturbed.jsonl", [json.dumps({"doc": p.doc, "text": p.text}) for p in perturbed]
    )
    made = {k: sum(p.edits.get(k, 0) for p in perturbed) for k in ("merge", "drop", "add")}
    assert made["merge"] > 0 and made["drop"] > 0 and made["add"] > 0  # the test checks something
    out, alignment = corpus["dir"] / "scores.json", corpus["dir"] / "align.jsonl"
    proc = contextual_mt_cli(
        "score",
        "--hyp",
        docs,
        "--ref",
        corpus["ref"],
        "--docids",
        corpus["docids"],
        "--output",
        str(out),
        "--alignment-output",
        str(alignment),
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    stats = result["alignment"]
    # the aligner's counts, near the truth (a dropped line beside a merge can be read as a 2-1 link)
    found = {"merge": stats["merges"], "drop": stats["omissions"], "add": stats["additions"]}
    assert all(abs(found[k] - made[k]) <= 1 for k in made), (found, made)
    assert result["files"]["pivot"] == corpus["ref"]
    assert summary(stats) in proc.stdout and f": {stats['merges']} merges" in proc.stdout
    records = [json.loads(r) for r in alignment.read_text().splitlines()]
    assert sorted(r["line"] for r in records if r["line"] is not None) == list(range(1, len(corpus["ids"]) + 1))
    assert sum(r["link"] == "0-1" for r in records) == stats["additions"]
    assert sum(r["link"] == "1-0" for r in records) == stats["omissions"]
    lines = score_files(corpus["hyp"], corpus["ref"], docids=corpus["docids"])
    assert result["bleu"]["score"] < lines["bleu"]["score"]  # what was dropped and added costs


def test_a_pivot_other_than_the_references(corpus):
    docs = write_documents(corpus["dir"] / "sys.jsonl", corpus["hyps"], corpus["ids"])
    pivot = corpus["hyp"]  # a sentence-level translation of each line: here the system's own
    r = score_files(docs, corpus["ref"], docids=corpus["docids"], align=AlignArgs(pivot=pivot))
    assert r["files"]["pivot"] == pivot and r["alignment"]["mean_link_score"] == 1.0
    assert r["bleu"]["score"] == score_files(corpus["hyp"], corpus["ref"], docids=corpus["docids"])["bleu"]["score"]


def test_the_alignment_summary_line():
    stats = {"lines": 40, "segments": 1, "merges": 12, "splits": 3, "omissions": 2, "additions": 1}
    assert summary({**stats, "mean_link_score": 0.9123}) == (
        "aligned 40 lines to 1 output sentence: 12 merges, 3 splits, 2 omissions, 1 addition; mean link chrF 0.912"
    )


# ----------------------------------------------------------------------------- testset evaluate
DOCIDS = ["d1", "d1", "d2", "d2", "d3", "d3", "d4", "d4"]  # the documents of test_evaluate's manifest


def test_testset_evaluate_through_the_alignment(suite):  # noqa: F811 (the fixture)
    folder = suite["dir"]
    docids = write_lines(folder / "test.docids", DOCIDS)
    docs = write_documents(folder / "good.jsonl", GOOD, DOCIDS)
    lines = evaluate_testset(EvaluateOptions(suite["manifest"], [suite["good"]], docids=docids, bootstrap=0))
    out = folder / "eval.json"
    options = EvaluateOptions(
        suite["manifest"], [docs], docids=docids, bootstrap=0, output=str(out), align=AlignArgs(pivot=suite["good"])
    )
    aligned = evaluate_testset(options)
    a, b = lines["systems"]["good.fr"], aligned["systems"]["good.jsonl"]
    assert a["group_outcomes"] == b["group_outcomes"] and a["overall"] == b["overall"]
    assert "alignment" not in a and b["alignment"]["links"]["1-1"] == 8
    assert json.loads(out.read_text())["systems"]["good.jsonl"]["alignment"] == b["alignment"]
    assert (
        "good.jsonl: aligned 8 lines to 8 output sentences: 0 merges, 0 splits, 0 omissions, 0 additions"
        in format_testset_table(aligned)
    )


def test_testset_evaluate_document_output_needs_a_pivot(suite):  # noqa: F811 (the fixture)
    folder = suite["dir"]
    docids = write_lines(folder / "test.docids", DOCIDS)
    docs = write_documents(folder / "good.jsonl", GOOD, DOCIDS)
    args = ["testset", "evaluate", "--manifest", suite["manifest"], "--hyp", docs, "--output", str(folder / "e.json")]
    proc = contextual_mt_cli(*args, "--docids", docids)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "--pivot" in proc.stderr and "test.fr" in proc.stderr  # the build's reference, from summary.json
    proc = contextual_mt_cli(*args, "--pivot", suite["good"])
    assert proc.returncode == 1 and "--docids" in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert not (folder / "e.json").exists()


# ----------------------------------------------------------------------------- make score HYPS=..., make table
def test_make_score_hyps_and_the_table_show_the_alignment(corpus, tmp_path):
    from contextual_mt.pipeline.score_stage import ScoreStageOptions, format_scores, score_systems
    from contextual_mt.pipeline.study_table import TableOptions, build_table

    data = tmp_path / "study" / "data" / "fr"
    data.mkdir(parents=True)
    for side in ("fr", "docids"):
        (data / f"test.{side}").write_text((corpus["dir"] / f"test.{side}").read_text())
    (data / "test.en").write_text("source\n" * len(corpus["ids"]))
    baseline = write_lines(tmp_path / "sentence.test.fr", corpus["hyps"])
    perturbed = perturb(corpus["hyps"], corpus["ids"], seed=2)
    llm = write_lines(tmp_path / "llm.jsonl", [json.dumps({"doc": p.doc, "text": p.text}) for p in perturbed])
    result = score_systems(ScoreStageOptions("fr", str(tmp_path / "study"), hyps=[baseline, llm]))
    sentence, aligned = result["systems"]["sentence"], result["systems"]["llm.jsonl"]
    assert "alignment" not in sentence and aligned["alignment"]["merges"] > 0
    assert sentence["bleu"]["score"] == score_files(baseline, corpus["ref"], docids=corpus["docids"])["bleu"]["score"]
    assert f"llm.jsonl: {summary(aligned['alignment'])}" in format_scores(result)
    table = build_table(TableOptions(["fr"], str(tmp_path / "study" / "results"), str(tmp_path / "table")))
    rows = {r["system"]: r["values"] for r in table["rows"]}
    assert rows["sentence"]["merges"] is None and rows["llm.jsonl"]["merges"] == aligned["alignment"]["merges"]
    md = (tmp_path / "table" / "table.md").read_text()
    assert "| merges | splits | omissions | additions | link chrF |" in md and "document-level" in md


def test_make_score_hyps_bad_input_is_one_line(corpus, tmp_path):
    data = tmp_path / "study" / "data" / "fr"
    data.mkdir(parents=True)
    for side in ("fr", "docids"):
        (data / f"test.{side}").write_text((corpus["dir"] / f"test.{side}").read_text())
    (data / "test.en").write_text("source\n" * len(corpus["ids"]))
    short = write_lines(tmp_path / "short.fr", corpus["hyps"][:-1])
    other = tmp_path / "other"
    other.mkdir()
    twin = write_lines(other / "sys.fr", corpus["hyps"])
    # issue 50: a line-aligned file cut to as many lines as there are documents, and JSONL records
    # whose first one lost its start, were scored (as one document per line) with exit status 0
    cut = write_lines(tmp_path / "cut.fr", corpus["hyps"][: len(document_spans(corpus["ids"]))])
    records = Path(write_documents(tmp_path / "cut.jsonl", corpus["hyps"], corpus["ids"])).read_text().splitlines()
    cut_jsonl = write_lines(tmp_path / "cut.jsonl", [records[0][10:], *records[1:]])
    cases = [
        ([str(tmp_path / "nothere.jsonl")], ("nothere.jsonl", "not found")),
        ([corpus["hyp"], twin], ("two files", "'sys'")),
        ([short], ("short.fr", "lines")),
        ([cut], ("cut.fr: has 40 lines but", "one document per line (40 documents)", "--hyp-format documents")),
        ([cut_jsonl], ("cut.jsonl:1: not a JSON record",)),
    ]
    for hyps, fragments in cases:
        proc = contextual_mt_cli(
            "pipeline", "score", "--lang", "fr", "--root", str(tmp_path / "study"), "--hyps", *hyps
        )
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
        assert all(f in proc.stderr for f in fragments), proc.stderr
    assert not (tmp_path / "study" / "results" / "fr" / "scores.json").exists()


def test_hyp_format_says_how_the_file_is_read(corpus):
    """--hyp-format: 'documents' reads a file of one line per document as documents (the guess it
    replaces is refused when its alignment leaves most lines empty); 'lines' refuses a file of
    another line count with the line-count error; 'jsonl' refuses a plain file naming its line."""
    spans = document_spans(corpus["ids"])
    cut = write_lines(corpus["dir"] / "cut.fr", corpus["hyps"][: len(spans)])
    docs = write_documents(corpus["dir"] / "docs.fr", corpus["hyps"], corpus["ids"], jsonl=False)

    def scored(hyp, hyp_format):
        return score_files(hyp, corpus["ref"], docids=corpus["docids"], align=AlignArgs(hyp_format=hyp_format))

    with pytest.raises(InputError, match=r"its alignment leaves [0-9]+ of [0-9]+ lines empty"):
        scored(cut, "auto")
    asked = scored(cut, "documents")  # asked for: read as documents, its omissions reported
    assert asked["alignment"]["omissions"] > len(corpus["ids"]) // 2
    assert scored(docs, "documents")["bleu"]["score"] == scored(docs, "auto")["bleu"]["score"]
    with pytest.raises(InputError, match=rf"cut\.fr: has {len(spans)} lines but .*test\.docids has"):
        scored(cut, "lines")
    with pytest.raises(InputError, match=r"docs\.fr:1: not a JSON record"):
        scored(docs, "jsonl")
