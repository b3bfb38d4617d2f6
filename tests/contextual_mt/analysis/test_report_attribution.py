"""contextual-mt report --attribution: cues in the viewer, the (target word, cue word) pair table,
and the checks of the attribution records against the P-CXMI records. Records made by hand."""

import json
import re
import subprocess

import pytest

from contextual_mt.analysis import tables as T
from contextual_mt.analysis.join import join, read_attribution
from contextual_mt.analysis.report import ReportOptions, run_report
from contextual_mt.errors import InputError
from tests.helpers import contextual_mt_cli

# (line, doc, sentence in doc, source, reference pieces, P-CXMI per piece without EOS)
SENTENCES = [
    (1, "d1", 0, "Hi Paul .", ["▁Salut", "▁Paul", "▁."], [0.0, 0.0, 0.0]),
    (2, "d1", 1, "You see the cake .", ["▁Tu", "▁vois", "▁le", "▁gâ", "teau", "▁."], [1.0, 0.0, 0.0, 0.1, 0.2, 0.0]),
    (3, "d2", 0, "Hi Marie .", ["▁Salut", "▁Marie", "▁."], [0.0, 0.0, 0.0]),
    (4, "d2", 1, "You see her .", ["▁Tu", "▁la", "▁vois", "▁."], [0.5, 0.0, 0.0, 0.0]),
]


def pcxmi_record(line, doc, sentence, source, pieces, values):
    reference = " ".join(p for p in "".join(pieces).split("▁") if p)
    return {
        "line": line,
        "doc": doc,
        "sentence": sentence,
        "source": source,
        "reference": reference,
        "words": reference.split(),
        "tokens": [*pieces, "</s>"],
        "token_pcxmi": [*values, 0.0],
        "sentence_pcxmi": sum(values),
        "context_sentences": {"source": sentence, "target": sentence},
    }


def cue(target, side, position, score, sentence=-1, token=""):
    return {"target": target, "side": side, "sentence": sentence, "position": position, "token": token, "score": score}


def attribution_records():
    """Line 2: "Tu" cites "Salut" (2.0) and the source "Paul" through both its pieces (1.0, 1.5);
    "gâteau" (its second piece) cites "Paul" (0.5). Line 4: "Tu" cites "Salut" (4.0), "Marie" (1.0)."""
    records = [pcxmi_record(*s) for s in SENTENCES]
    out = []
    for r in records:
        a = {
            "doc": r["doc"],
            "sentence": r["sentence"],
            "line": r["line"],
            "source": r["source"],
            "target": r["reference"],
            "tokens": r["tokens"],
            "cti": {"kl": [0.0] * len(r["tokens"]), "pcxmi": r["token_pcxmi"]},
            "selected": [],
            "context": [],
            "cues": [],
        }
        out.append(a)
    out[1]["selected"] = [0, 4]
    out[1]["context"] = [
        {"side": "target", "sentence": -1, "tokens": ["▁Salut", "▁Paul", "▁."]},
        {"side": "source", "sentence": -1, "tokens": ["▁Hi", "▁Pa", "ul", "▁."]},
    ]
    out[1]["cues"] = [
        cue(0, "target", 0, 2.0),
        cue(0, "source", 1, 1.0),
        cue(0, "source", 2, 1.5),
        cue(4, "target", 1, 0.5),
    ]
    out[3]["selected"] = [0]
    out[3]["context"] = [{"side": "target", "sentence": -1, "tokens": ["▁Salut", "▁Marie", "▁."]}]
    out[3]["cues"] = [cue(0, "target", 0, 4.0), cue(0, "target", 1, 1.0)]
    return records, out


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


@pytest.fixture
def files(tmp_path):
    records, attribution = attribution_records()
    return {
        "pcxmi": write_jsonl(tmp_path / "p.jsonl", records),
        "attr": write_jsonl(tmp_path / "a.jsonl", attribution),
        "records": records,
        "attribution": attribution,
        "tmp": tmp_path,
    }


def payload(html):
    m = re.search(r'<script type="application/json" id="pcxmi-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def test_viewer_carries_the_cues_of_selected_words(files):
    out = files["tmp"] / "out"
    run_report(ReportOptions(str(files["pcxmi"]), str(out), attribution=str(files["attr"])))
    data = payload((out / "viewer.html").read_text())
    line2 = data["sentences"][1]["a"]
    # target context first, then source; words grouped from pieces ("▁Pa" "ul" is one word)
    assert line2["x"] == [["target", -1, ["Salut", "Paul", "."]], ["source", -1, ["Hi", "Paul", "."]]]
    # units are the reference's words: "Tu" is unit 0, "gâteau" unit 3; "Paul" (source) keeps its best piece
    assert line2["s"] == {"0": [[0, 0, 2.0], [1, 1, 1.5]], "3": [[0, 1, 0.5]]}
    assert data["sentences"][0]["a"] == {"x": [], "s": {}}
    assert data["cueScale"] > 0
    html = (out / "viewer.html").read_text()
    assert 'id="cs"' in html and "http://" not in html and "https://" not in html


def test_pair_table_counts_by_tag(files):
    tags = [
        [("Salut", []), ("Paul", []), (".", [])],
        [("Tu", ["formality"]), ("vois", []), ("le", []), ("gâteau", []), (".", [])],
        [("Salut", []), ("Marie", []), (".", [])],
        [("Tu", ["formality"]), ("la", ["pronouns"]), ("vois", []), (".", [])],
    ]
    sentences = join(files["records"], tags=tags)
    attribution = read_attribution(str(files["attr"]), files["records"])
    rows = [
        (r.group, r.target, r.side, r.cue, r.count, r.mean_score)
        for r in T.cue_pairs(sentences, attribution, tagged=True)
    ]
    assert rows == [
        ("all", "tu", "target", "salut", 2, 3.0),
        ("all", "tu", "source", "paul", 1, 1.5),
        ("all", "tu", "target", "marie", 1, 1.0),
        ("all", "gâteau", "target", "paul", 1, 0.5),
        ("formality", "tu", "target", "salut", 2, 3.0),
        ("formality", "tu", "source", "paul", 1, 1.5),
        ("formality", "tu", "target", "marie", 1, 1.0),
        ("no tag", "gâteau", "target", "paul", 1, 0.5),
    ]
    assert [r.target for r in T.top_pairs(T.cue_pairs(sentences, attribution, tagged=True), 1)] == [
        "tu",
        "tu",
        "gâteau",
    ]


def test_report_writes_the_pair_table_without_tags(files):
    out = files["tmp"] / "out"
    summary = run_report(ReportOptions(str(files["pcxmi"]), str(out), attribution=str(files["attr"]), top_pairs=2))
    assert (out / "cue_pairs.csv").read_text().splitlines() == [
        "group,rank,target_word,cue_side,cue_word,count,mean_cue_score",
        "all,1,tu,target,salut,2,3.000000",
        "all,2,tu,source,paul,1,1.500000",
        "all,3,tu,target,marie,1,1.000000",
        "all,4,gâteau,target,paul,1,0.500000",
    ]
    md = (out / "report.md").read_text()
    assert "| all | tu | target | salut | 2 | 3.0000 |" in md and "| all | tu | target | marie |" not in md
    assert summary["attribution"]["selected_tokens"] == 3 and summary["attribution"]["cues"] == 6
    assert [p["cue"] for p in summary["attribution"]["pairs"]] == ["salut", "paul"]


def mismatched(files, change):
    records = json.loads(json.dumps(files["attribution"]))
    records = change(records) or records
    return write_jsonl(files["tmp"] / "bad.jsonl", records)


@pytest.mark.parametrize(
    "change, where, says",
    [
        (lambda a: a[:3], 4, "ends after 3 records"),
        (lambda a: [*a, dict(a[3], line=5)], 5, "sentence 5 has no record"),
        (
            lambda a: a[1].update(tokens=["▁Tu", "▁vois", "▁le", "▁gâteau", "▁.", "</s>"]),
            2,
            "target tokens of sentence 2",
        ),
        (lambda a: a[2].update(doc="d9"), 3, "document 'd9'"),
        (
            lambda a: a[1].update(target="Tu vois la tarte ."),
            2,
            "attribute them with `contextual-mt attribute --reference`",
        ),
        (lambda a: a[1]["cues"].append(cue(1, "target", 0, 1.0)), 2, "a cue points outside"),
        (lambda a: [a[0], a[0], *a[1:]], 2, "sentence 1 again"),
    ],
)
def test_mismatched_attribution_is_one_error_and_no_output(files, change, where, says):
    bad = mismatched(files, change)
    out = files["tmp"] / "out"
    proc = contextual_mt_cli("report", files["pcxmi"], "--output-dir", out, "--attribution", bad)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}:{where}: ") and says in lines[0], proc.stderr
    assert not out.exists()


def test_attribution_of_hypotheses_is_refused(files):
    (files["tmp"] / "a.summary.json").write_text(json.dumps({"scored": "hypotheses", "target_file": "hyp.fr"}))
    with pytest.raises(InputError, match=r"a\.summary\.json: the attribution is of the model's hypotheses"):
        read_attribution(str(files["attr"]), files["records"])


def test_without_attribution_nothing_changes(files):
    plain, with_attr = files["tmp"] / "plain", files["tmp"] / "attr"
    run_report(ReportOptions(str(files["pcxmi"]), str(plain)))
    full = run_report(ReportOptions(str(files["pcxmi"]), str(with_attr), attribution=str(files["attr"])))
    html = (plain / "viewer.html").read_text()
    data = payload(html)
    assert "cueScale" not in data and all("a" not in s for s in data["sentences"]) and 'id="cs"' not in html
    assert not (plain / "cue_pairs.csv").exists()
    summary = json.loads((plain / "report.json").read_text())
    assert "attribution" not in summary
    full.pop("attribution")
    assert summary == json.loads(json.dumps(full))  # the attribution adds, changes nothing
    with_data = payload((with_attr / "viewer.html").read_text())
    for s in with_data["sentences"]:
        s.pop("a")
    assert {k: v for k, v in with_data.items() if k != "cueScale"} == data
    # a rerun without --attribution leaves no stale pair table
    run_report(ReportOptions(str(files["pcxmi"]), str(with_attr)))
    assert not (with_attr / "cue_pairs.csv").exists()


def test_cli_end_to_end_and_click_in_headless_chromium(files):
    from tests.contextual_mt.analysis.test_report import CHROMIUM_FLAGS, chromium

    out = files["tmp"] / "out"
    proc = contextual_mt_cli(
        "report", files["pcxmi"], "--output-dir", out, "--attribution", files["attr"], "--top-pairs", "3"
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "cue_pairs.csv").exists() and "pairs per tag (top 3)" in (out / "report.md").read_text()
    # click "Tu" of line 2 once the page is ready: its cues are shaded, with their scores on hover
    page = (
        (out / "viewer.html")
        .read_text()
        .replace(
            "</body>",
            """<script>
document.querySelector('#line-2 .tok.cs').click();
document.body.dataset.cues = [...document.querySelectorAll('.ctok.cue')].map(e => e.id + '=' + e.title).join('|');
</script></body>""",
        )
    )
    (out / "click.html").write_text(page)
    proc = subprocess.run(
        [
            chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={files['tmp'] / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            (out / "click.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Uncaught" not in proc.stderr, proc.stderr[-2000:]
    m = re.search(r'data-cues="([^"]*)"', proc.stdout)
    assert m, proc.stdout[:3000]
    assert m.group(1).split("|") == ["cx-2-0-0=cue of “Tu”: score 2.0000", "cx-2-1-1=cue of “Tu”: score 1.5000"]
