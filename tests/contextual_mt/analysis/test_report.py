"""contextual-mt report: POS classes, ROC-AUC, joining layers, tables, plot and the HTML viewer."""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from commandkit.errors import InputError
from contextual_mt.analysis import tables as T
from contextual_mt.analysis.join import join, moses_words, word_unit
from contextual_mt.analysis.pos_classes import pos_classes
from contextual_mt.analysis.report import OUTPUTS
from contextual_mt.analysis.tables import roc_auc
from contextual_mt.demo.corpus import generate_demo_data
from muda.formats.conllu import format_conllu, parse_conllu
from tests.helpers import BIN, contextual_mt_cli


def test_pos_classes_follow_table_5():
    assert pos_classes("PRON", {"Person": "2", "Number": "Sing"}) == ["PRON", "PRON.2", "PRON.2.Sing"]
    assert pos_classes("PRON", {"Number": "Plur"}) == ["PRON", "PRON.Plur"]
    assert pos_classes("PRON", {"Person": "3"}) == ["PRON", "PRON.3"]
    assert pos_classes("VERB", {"Tense": "Past", "Person": "3"}) == ["VERB", "VERB.Past"]
    assert pos_classes("VERB", {"Tense": "Imp"}) == ["VERB", "VERB.Imp"]
    assert pos_classes("AUX", {"Tense": "Pres"}) == ["AUX"]
    assert pos_classes("NOUN", {"Number": "Sing"}) == ["NOUN"]


def test_roc_auc_against_pairwise_count():
    assert roc_auc([3, 4], [1, 2]) == 1.0
    assert roc_auc([1, 2], [3, 4]) == 0.0
    assert roc_auc([1, 1], [1, 1]) == 0.5
    rng = np.random.default_rng(0)
    p, n = rng.integers(0, 5, 40).astype(float), rng.integers(0, 4, 55).astype(float)
    pairwise = np.mean([(a > b) + 0.5 * (a == b) for a in p for b in n])
    assert roc_auc(p, n) == pytest.approx(pairwise)


CONLLU = """# newdoc id = d1
# sent_id = 1
# text = Il mange du pain.
1\tIl\til\tPRON\t_\tNumber=Sing|Person=3\t2\tnsubj\t_\t_
2\tmange\tmanger\tVERB\t_\tTense=Pres\t0\troot\t_\t_
3-4\tdu\t_\t_\t_\t_\t_\t_\t_\t_
3\tde\tde\tADP\t_\t_\t5\tcase\t_\t_
4\tle\tle\tDET\t_\t_\t5\tdet\t_\t_
5\tpain\tpain\tNOUN\t_\t_\t2\tobj\t_\tSpaceAfter=No
6\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

# sent_id = 2
# text =

# sent_id = 3
# text = Tu l'as.
1\tTu\ttu\tPRON\t_\tNumber=Sing|Person=2\t3\tnsubj\t_\t_
2\tl'\tle\tPRON\t_\tPerson=3\t3\tobj\t_\tSpaceAfter=No
3\tas\tavoir\tVERB\t_\tTense=Pres\t0\troot\t_\tSpaceAfter=No
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_
"""


def test_conllu_multiword_tokens_empty_sentences_and_round_trip():
    sents = parse_conllu(CONLLU.splitlines(), "x.conllu")
    assert [s.forms for s in sents] == [["Il", "mange", "du", "pain", "."], [], ["Tu", "l'", "as", "."]]
    assert sents[0].tokens[2].upos == "ADP+DET" and sents[0].newdoc == "d1"
    assert sents[0].words[4].misc == {"SpaceAfter": "No"}
    again = parse_conllu(format_conllu(sents).splitlines())
    assert [[(w.form, w.upos, w.feats, w.head) for w in s.words] for s in again] == [
        [(w.form, w.upos, w.feats, w.head) for w in s.words] for s in sents
    ]


@pytest.mark.parametrize(
    "text, where",
    [
        ("1\tIl\til\tPRON\t_\t_\t0\troot\t_\n", "x.conllu:1: expected 10"),
        ("1\tIl\til\tPRON\t_\t_\t0\troot\t_\t_\n3\tx\tx\tX\t_\t_\t1\tdep\t_\t_\n", "x.conllu:2: word id 3"),
        ("1\tIl\til\tPRON\t_\tPerson\t0\troot\t_\t_\n", "x.conllu:1: bad feature"),
    ],
)
def test_conllu_errors_name_file_and_line(text, where):
    with pytest.raises(InputError, match=where):
        parse_conllu(text.splitlines(), "x.conllu")


def record(line, reference, pieces, values, doc="d1", sentence=0):
    return {
        "line": line,
        "doc": doc,
        "sentence": sentence,
        "source": "src",
        "reference": reference,
        "context_sentences": {"source": 0, "target": 1},
        "tokens": [*pieces, "</s>"],
        "token_pcxmi": [*values, 0.5],
        "words": [],
        "word_pcxmi": [],
        "sentence_pcxmi": sum(values) + 0.5,
    }


def test_join_sums_subwords_into_annotation_tokens():
    sents = parse_conllu(CONLLU.splitlines())
    # sentencepiece splits "pain." as "▁pa" "in" "." and "l'as." as "▁l" "'" "as" "."
    r1 = record(
        1, "Il mange du pain.", ["▁Il", "▁man", "ge", "▁du", "▁pa", "in", "."], [1.0, 0.25, 0.5, 0.125, 2.0, 4.0, 8.0]
    )
    r3 = record(3, "Tu l'as.", ["▁Tu", "▁l", "'", "as", "."], [1.0, 2.0, 4.0, 8.0, 16.0], sentence=2)
    out = join([r1, r3], sents, "x.conllu")
    assert [(u.form, u.pcxmi) for u in out[0].units] == [
        ("Il", 1.0),
        ("mange", 0.75),
        ("du", 0.125),
        ("pain", 6.0),
        (".", 8.0),
    ]
    assert [(u.form, u.pcxmi) for u in out[1].units] == [("Tu", 1.0), ("l'", 6.0), ("as", 8.0), (".", 16.0)]
    assert out[0].units[0].classes == ["PRON", "PRON.3", "PRON.3.Sing"]
    assert out[0].units[2].classes == ["ADP", "DET"]  # the multi-word token counts for both words
    tags = [
        [("Il", ["pronouns"]), ("mange", []), ("du", []), ("pain.", ["lexical_cohesion"])],
        [],
        [("Tu", ["formality"]), ("l'as.", [])],
    ]
    out = join([r1, r3], sents, "x.conllu", tags, "t.json")
    assert [u.tags for u in out[0].units] == [["pronouns"], [], [], ["lexical_cohesion"], ["lexical_cohesion"]]


def test_without_annotations_words_are_split_off_their_punctuation():
    # "wurde," and "wurde." are the word "wurde" in the vocabulary table, not three items
    r = record(
        1,
        "Er wurde, sagte er, gut.",
        ["▁Er", "▁wurde", ",", "▁sagte", "▁er", ",", "▁gut", "."],
        [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0],
    )
    r["words"] = r["reference"].split()
    out = join([r], lang="de")
    assert [(u.form, u.pcxmi) for u in out[0].units] == [
        ("Er", 1.0),
        ("wurde", 2.0),
        (",", 4.0),
        ("sagte", 8.0),
        ("er", 16.0),
        (",", 32.0),
        ("gut", 64.0),
        (".", 128.0),
    ]
    rows = {row.key: row for row in T.by_vocabulary(out, min_count=1)}
    assert rows["wurde"].count == 1 and rows[","].count == 2 and "wurde," not in rows
    # the language's rules: French keeps the elided article's apostrophe on it
    assert moses_words(["l'homme", "Dr."], "fr") == ["l'", "homme", "Dr", "."]
    assert moses_words(["Dr."], "de") == ["Dr."]
    assert word_unit(None, None, "de").startswith("words of the references, punctuation split off")


def test_each_mean_names_its_unit(planted_report):
    from contextual_mt.analysis.cxmi_summary import summarize, summary_line

    summary = summarize(planted_report["records"], "e")
    n_subwords = sum(len(r["tokens"]) for r in planted_report["records"])
    assert summary["subword_tokens"] == n_subwords and "tokens" not in summary
    line = summary_line(summary, "p.jsonl")
    assert "nats per sentence" in line and "per subword token" in line and f"{n_subwords} tokens, EOS included" in line
    report = json.loads((planted_report["out"] / "report.json").read_text())
    assert report["word_unit"].startswith("tokens of ") and report["words"] < n_subwords
    first = planted_report["stdout"].splitlines()[0]
    assert "per sentence" in first and "mean P-CXMI per word" in first and f"over {report['words']} words" in first
    md = (planted_report["out"] / "report.md").read_text()
    assert "mean P-CXMI per word" in md and "mean token" not in md


def test_annotation_that_does_not_match_the_reference_names_the_line():
    sents = parse_conllu(CONLLU.splitlines())
    r = record(3, "Tu l'avais.", ["▁Tu", "▁l", "'", "avais", "."], [0.0] * 5)
    with pytest.raises(InputError, match=r"x.conllu: sentence 3.*line 3"):
        join([r], sents, "x.conllu")
    with pytest.raises(InputError, match=r"has 3 sentences; no annotation for line 9"):
        join([dict(r, line=9)], sents, "x.conllu")


def test_stanza_documents_convert_like_conllu():
    from stanza.utils.conll import CoNLL

    from muda.annotators.stanza_pipeline import StanzaAnnotator, from_stanza_document

    text = CONLLU.replace("# sent_id = 2\n# text =\n\n", "")
    doc = CoNLL.conll2doc(input_str=text)
    ours = [s for s in parse_conllu(text.splitlines()) if s.tokens]
    theirs = from_stanza_document(doc)
    assert [[(t.form, t.upos) for t in s.tokens] for s in theirs] == [
        [(t.form, t.upos) for t in s.tokens] for s in ours
    ]
    assert [[(w.lemma, w.feats, w.head, w.deprel) for w in s.words] for s in theirs] == [
        [(w.lemma, w.feats, w.head, w.deprel) for w in s.words] for s in ours
    ]

    class Pipeline:  # stands in for a loaded stanza.Pipeline: answers with the parsed document
        def bulk_process(self, docs):
            assert [d.text for d in docs] == ["Il mange du pain. Tu l'as."]
            return [doc]

    got = StanzaAnnotator("fr", pipeline=Pipeline()).annotate(["", "Il mange du pain. Tu l'as."])
    assert got[0].tokens == [] and got[1].forms == ["Il", "mange", "du", "pain", ".", "Tu", "l'", "as", "."]
    assert got[1].words[6].id == 7 and got[1].words[6].head == 9  # second sentence renumbered


def test_missing_stanza_model_is_one_clear_error(tmp_path):
    from muda.annotators.stanza_pipeline import StanzaAnnotator

    with pytest.raises(InputError, match=r"stanza model for 'fr' not found.*stanza.download\('fr'"):
        StanzaAnnotator("fr", model_dir=str(tmp_path))


@pytest.fixture(scope="module")
def planted_report(tmp_path_factory):
    """P-CXMI records made by hand over the demo corpus: each planted token that needs context
    gets 1.0 (0.5 for '-agreement' tokens), every other subword 0; so every number is known."""
    work = tmp_path_factory.mktemp("report")
    generate_demo_data(str(work), train_docs=2, valid_docs=2, test_docs=12, seed=5)
    refs = (work / "test.fr").read_text().splitlines()
    src = (work / "test.en").read_text().splitlines()
    ids = (work / "test.docids").read_text().splitlines()
    tags = [s for d in json.loads((work / "test.tags.json").read_text()) for s in d]
    records = []
    for i, (ref, t) in enumerate(zip(refs, tags, strict=True)):
        words = ref.split()
        values = [1.0 if any("-" not in x for x in tag["tags"]) else 0.5 if tag["tags"] else 0.0 for tag in t]
        start = next(j for j in range(i + 1) if ids[j] == ids[i])
        records.append(record(i + 1, ref, ["▁" + w for w in words], values, doc=ids[i], sentence=i - start))
        records[-1]["source"] = src[i]
        records[-1]["context_sentences"] = {"source": 0, "target": min(3, i - start)}
    (work / "p.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    out = work / "out"
    proc = subprocess.run(
        [
            str(BIN / "contextual-mt"),
            "report",
            str(work / "p.jsonl"),
            "--output-dir",
            str(out),
            "--conllu",
            str(work / "test.fr.conllu"),
            "--tags",
            str(work / "test.tags.json"),
            "--min-count",
            "2",
            "--top",
            "5",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return {"work": work, "out": out, "records": records, "stdout": proc.stdout, "stderr": proc.stderr}


def test_report_numbers_on_known_values(planted_report):
    out = planted_report["out"]
    assert sorted(os.listdir(out)) == sorted(OUTPUTS)
    summary = json.loads((out / "report.json").read_text())
    tag = {r["key"]: r for r in summary["tag"]}
    assert tag["formality"]["mean"] == 1.0 and tag["formality"]["auc"] == 1.0
    assert tag["formality-agreement"]["mean"] == 0.5 and tag["no tag"]["mean"] == 0.0
    assert tag["with tag"]["count"] + tag["no tag"]["count"] == summary["words"]
    pos = {r["key"]: r for r in summary["pos"]}
    assert pos["PRON.3.Sing"]["mean"] == 1.0  # every 3rd-person singular pronoun is a planted one
    assert pos["PUNCT"]["mean"] == 0.0
    top = summary["top_tokens"][0]
    assert top["pcxmi"] == 1.0 and set(top["tags"]) & {"pronouns", "formality", "lexical_choice"}
    assert len(top["target_context"]) == planted_report["records"][top["line"] - 1]["context_sentences"]["target"]
    md = (out / "report.md").read_text()
    assert "| formality | " in md and "### Top tokens" in md and "PRON.3.Sing" in md
    assert (out / "pos.csv").read_text().splitlines()[0] == "class,count,mean_pcxmi,roc_auc_vs_no_tag"
    assert "ROC-AUC vs no tag 1.000" in planted_report["stdout"]
    assert planted_report["stderr"] == ""  # the real console script: no warning, no log line
    import matplotlib.image

    assert matplotlib.image.imread(str(out / "pcxmi_by_class.png")).shape[0] > 100


def test_report_rejects_mismatched_annotations(planted_report, tmp_path):
    work = planted_report["work"]
    conllu = (work / "test.fr.conllu").read_text().replace("\tTu\t", "\tToi\t", 1)
    (tmp_path / "bad.conllu").write_text(conllu)
    line = next(r["line"] for r in planted_report["records"] if r["reference"].split()[0] == "Tu")
    proc = contextual_mt_cli(
        "report", work / "p.jsonl", "--output-dir", tmp_path / "out", "--conllu", tmp_path / "bad.conllu"
    )  # in this process
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1].startswith("error: ")
    assert f"do not match the reference on line {line} " in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out" / "report.md").exists()


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium():
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        if os.environ.get("CONTEXTUAL_MT_SKIP_BROWSER") == "1":
            pytest.skip("CONTEXTUAL_MT_SKIP_BROWSER=1")
        pytest.fail(
            "chromium is not installed: `make install` installs Debian's chromium (or set CONTEXTUAL_MT_SKIP_BROWSER=1)"
        )
    return found


def test_viewer_renders_in_headless_chromium(planted_report, tmp_path):
    page = planted_report["out"] / "viewer.html"
    html = page.read_text()
    assert "http://" not in html and "https://" not in html and "<link" not in html  # self-contained
    proc = subprocess.run(
        [
            chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    dom = proc.stdout
    assert 'data-ready="1"' in dom, proc.stderr[-2000:]
    assert "Uncaught" not in proc.stderr
    summary = json.loads((planted_report["out"] / "report.json").read_text())
    top = summary["top_tokens"][0]
    # the page opens on the top token's document, with that token outlined
    import re

    m = re.search(r'<span class="tok[^"]*" title="([^"]*)" id="top-token"[^>]*>([^<]*)</span>', dom)
    assert m, dom[:3000]
    assert m.group(2) == top["token"] and f"P-CXMI {top['pcxmi']:.4f}" in m.group(1)
    assert f'id="line-{top["line"]}"' in dom
    n_rows = dom.count('<tr class="row">')
    assert n_rows == min(500, summary["words"])


def report_error(*args):
    proc = contextual_mt_cli("report", *args)  # in this process
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: "), last
    return last


@pytest.mark.parametrize(
    "args, message",
    [
        (["--top", "-3"], "error: --top must be >= 0 (got -3)"),
        (["--min-count", "-5"], "error: --min-count must be >= 1 (got -5)"),
        (["--min-count", "0"], "error: --min-count must be >= 1 (got 0)"),
    ],
)
def test_report_options_are_checked(planted_report, tmp_path, args, message):
    assert report_error(planted_report["work"] / "p.jsonl", "--output-dir", tmp_path / "out", *args) == message
    assert not list(tmp_path.iterdir())


def test_report_options_dataclass():
    from contextual_mt.analysis.report import ReportOptions

    with pytest.raises(InputError, match=r"--top must be >= 0 \(got -1\)"):
        ReportOptions("p.jsonl", "out", top=-1)
    with pytest.raises(InputError, match="either --conllu or --stanza-lang"):
        ReportOptions("p.jsonl", "out", conllu="x.conllu", stanza_lang="fr")


def test_report_unwritable_output_dir_and_broken_summary(planted_report, tmp_path):
    records = planted_report["work"] / "p.jsonl"
    (tmp_path / "afile").write_text("x\n")
    assert report_error(records, "--output-dir", tmp_path / "afile").startswith(f"error: {tmp_path / 'afile'}: ")
    under = tmp_path / "afile" / "report"
    assert report_error(records, "--output-dir", under).startswith(f"error: {under}: cannot write here")
    copy = tmp_path / "p.jsonl"
    shutil.copy(records, copy)
    (tmp_path / "p.summary.json").write_text('{"unit": "nats",\n  "cxmi": }\n')
    assert (
        report_error(copy, "--output-dir", tmp_path / "out")
        == f"error: {tmp_path / 'p.summary.json'}:2: not JSON (Expecting value at column 11)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "p.jsonl", "p.summary.json"]


def test_a_language_moses_has_no_rules_for_is_said_in_one_warning(planted_report, tmp_path):
    """Issue 38.7: `report --lang zz` split the words by Moses's English rules without a word.
    Now one warning says so; a language it has rules for (fr), or --lang unused (the words come
    from --conllu), says nothing."""
    work = planted_report["work"]
    proc = contextual_mt_cli("report", work / "p.jsonl", "--output-dir", tmp_path / "zz", "--lang", "zz")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.strip().splitlines()  # (in this process a log record reads "WARNING | logger | ...")
    assert (
        len(lines) == 1
        and lines[0].startswith("WARNING")
        and lines[0].endswith(
            "--lang zz: the Moses tokenizer (sacremoses) has no rules for 'zz'; words are split off their "
            "punctuation by its default (English) rules"
        )
    ), proc.stderr
    for extra in (["--lang", "fr"], ["--lang", "zz", "--conllu", work / "test.fr.conllu"]):
        proc = contextual_mt_cli("report", work / "p.jsonl", "--output-dir", tmp_path / "fr", *extra)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr  # nothing to warn about
