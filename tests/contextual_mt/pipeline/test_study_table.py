"""`contextual-mt pipeline table` (contextual_mt.pipeline.study_table): the cross-language table.

Every eval.json here is written by the real `muda eval` library (`run_eval`) on tiny corpora with
planted differences, from pre-computed annotations (no models):

- de (hand-made, systems named with --names): the sentence-level system gets formal "Sie" wrong
  (context and context-gold get it right: significantly better); context-gold breaks the lexical
  cohesion of "Auto" (significantly WORSE: never marked); context ties the baseline there.
- ja (hand-made, systems named by their files): context gets "です" right (significantly better);
  context-gold only in one document (better, not significant); only context repeats "車", so
  lexical_cohesion appears in eval.json with no tagged reference word (does not apply: '-').
- fr (the demo corpus, annotated with the lexicon; COMET from a stand-in model): sentence has
  every planted word wrong; context-gold only the formality ones.

scores.json comes from the real `contextual_mt.metrics.score_files`.
"""

import argparse
import copy
import csv
import io
import json
import shutil
import sys
import types

import pytest

from contextual_mt.cli.pipeline import add_stage_parsers
from contextual_mt.errors import InputError
from contextual_mt.pipeline.study_table import OUTPUT_FILES, TableOptions, build_table, system_key
from muda.phenomena.registry import phenomenon_names

SYSTEMS = ("sentence", "context", "context-gold")
LANGS = ["de", "fr", "ja"]


# ----------------------------------------------------------------------------- corpora
def _conllu(sentences):
    """Flat CoNLL-U of sentences given as [(form, upos, feats)]: enough for the MuDA rules."""
    out = []
    for tokens in sentences:
        out.append("# text = " + " ".join(t[0] for t in tokens))
        for k, (form, upos, feats) in enumerate(tokens, start=1):
            out.append(
                "\t".join(
                    [
                        str(k),
                        form,
                        form.lower(),
                        upos,
                        "_",
                        feats,
                        "0" if k == 1 else "1",
                        "root" if k == 1 else "dep",
                        "_",
                        "_",
                    ]
                )
            )
        out.append("")
    return "\n".join(out) + "\n"


def _tok(text):
    """'Ich/PRON sehe/VERB Sie/PRON|Person=2 ./PUNCT' -> [(form, upos, feats)]."""
    out = []
    for item in text.split():
        form, _, rest = item.rpartition("/") if "/" in item[1:] else (item, "", "X")
        upos, _, feats = rest.partition("|")
        out.append((form, upos, feats or "_"))
    return out


def _write_hand_corpus(root, lang, docs, names=None):
    """docs: [[(src, align, {system or 'ref': tgt})]] with the same token count for every target
    of a sentence (one alignment serves them all). Runs muda eval; returns its result."""
    from muda.evaluation.evaluate import EvalOptions, run_eval

    data, results = root / "data" / lang, root / "results" / lang
    data.mkdir(parents=True)
    results.mkdir(parents=True)
    src, ids, aligns, tgts = [], [], [], {k: [] for k in ("ref", *SYSTEMS)}
    for d, doc in enumerate(docs):
        for s_text, align, targets in doc:
            src.append(_tok(s_text))
            ids.append(f"{lang}-doc{d}")
            aligns.append(" ".join(f"{i}-{j}" for i, j in align))
            for k in tgts:
                tgts[k].append(_tok(targets.get(k, targets["ref"])))
    lines = lambda sents: "\n".join(" ".join(t[0] for t in s) for s in sents) + "\n"  # noqa: E731
    (data / "test.en").write_text(lines(src))
    (data / "test.en.conllu").write_text(_conllu(src))
    (data / "test.docids").write_text("\n".join(ids) + "\n")
    (data / "test.align").write_text("\n".join(aligns) + "\n")
    (data / f"test.{lang}").write_text(lines(tgts["ref"]))
    (data / f"test.{lang}.conllu").write_text(_conllu(tgts["ref"]))
    hyps, hyp_conllu = [], []
    for k in SYSTEMS:
        hyp = results / f"{k}.test.{lang}"
        hyp.write_text(lines(tgts[k]))
        (data / f"{k}.conllu").write_text(_conllu(tgts[k]))
        hyps.append(str(hyp))
        hyp_conllu.append(str(data / f"{k}.conllu"))
    options = EvalOptions(
        str(data / "test.en"),
        str(data / f"test.{lang}"),
        str(data / "test.docids"),
        lang,
        hyps,
        output=str(results / "muda" / "eval.json"),
        src_conllu=str(data / "test.en.conllu"),
        ref_conllu=str(data / f"test.{lang}.conllu"),
        ref_alignments=str(data / "test.align"),
        hyp_conllu=hyp_conllu,
        hyp_alignments=[str(data / "test.align")] * 3,
        names=names,
        bootstrap=1000,
        seed=3,
    )
    return run_eval(options)


def _german(root):
    docs = []
    for d in range(24):
        cars = ["rot", "schnell", "neu", "alt"]
        doc = [
            (
                "I/PRON thank/VERB you/PRON ./PUNCT",
                [(0, 0), (1, 1), (2, 2), (3, 3)],
                {"ref": "Ich/PRON danke/VERB Ihnen/PRON|Person=2 ./PUNCT"},
            ),
            (
                "I/PRON see/VERB you/PRON ./PUNCT",
                [(0, 0), (1, 1), (2, 2), (3, 3)],
                {
                    "ref": "Ich/PRON sehe/VERB Sie/PRON|Person=2 ./PUNCT",
                    "sentence": "Ich/PRON sehe/VERB dich/PRON|Person=2 ./PUNCT"
                    if d % 3
                    else "Ich/PRON sehe/VERB Sie/PRON|Person=2 ./PUNCT",
                },
            ),
        ]
        for k, (en, de) in enumerate(zip(["red", "fast", "new", "old"], cars, strict=True)):
            targets = {"ref": f"Das/DET Auto/NOUN ist/AUX {de}/ADJ ./PUNCT"}
            if k == 3:
                targets["context-gold"] = f"Der/DET Wagen/NOUN ist/AUX {de}/ADJ ./PUNCT"
            doc.append((f"The/DET car/NOUN is/AUX {en}/ADJ ./PUNCT", [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)], targets))
        docs.append(doc)
    return _write_hand_corpus(root, "de", docs, names=list(SYSTEMS))


def _japanese(root):
    docs = []
    for d in range(20):
        doc = [
            ("Thank/VERB you/PRON ./PUNCT", [(0, 0), (2, 3)], {"ref": "ありがとう/INTJ ござい/AUX ます/AUX 。/PUNCT"}),
            (
                "It/PRON is/AUX a/DET book/NOUN ./PUNCT",
                [(3, 0), (4, 2)],
                {
                    "ref": "本/NOUN です/AUX 。/PUNCT",
                    "sentence": "本/NOUN だ/AUX 。/PUNCT",
                    "context-gold": "本/NOUN です/AUX 。/PUNCT" if d == 0 else "本/NOUN だ/AUX 。/PUNCT",
                },
            ),
        ]
        for k in range(4):  # the reference varies the word, so it never counts as cohesion there
            car = "車" if k % 2 == 0 else "自動車"
            doc.append(
                (
                    "I/PRON drove/VERB the/DET car/NOUN ./PUNCT",
                    [(3, 0), (4, 5)],
                    {
                        "ref": f"{car}/NOUN を/ADP 運転/NOUN し/AUX た/AUX 。/PUNCT",
                        "context": "車/NOUN を/ADP 運転/NOUN し/AUX た/AUX 。/PUNCT",
                    },
                )
            )
        docs.append(doc)
    return _write_hand_corpus(root, "ja", docs)


def _comet_stand_in():
    """COMET cannot be downloaded here: a segment scores 1.0 when it equals the reference."""

    class Model:
        dtype = "torch.float32"

        def predict(self, data, batch_size, gpus, progress_bar):
            scores = [float(x["mt"] == x["ref"]) for x in data]
            return types.SimpleNamespace(scores=scores, system_score=sum(scores) / len(scores))

    return types.SimpleNamespace(download_model=lambda name: "/models/x.ckpt", load_from_checkpoint=lambda p: Model())


def _french(root):
    from contextual_mt.demo.corpus import generate_demo_data
    from muda.annotators.lexicon import LexiconAnnotator
    from muda.evaluation.evaluate import EvalOptions, run_eval

    data, results = root / "data" / "fr", root / "results" / "fr"
    generate_demo_data(str(data), train_docs=40, valid_docs=1, test_docs=30, seed=8)
    results.mkdir(parents=True)
    refs = (data / "test.fr").read_text().splitlines()
    planted = [json.loads(line) for line in (data / "test.planted.jsonl").read_text().splitlines()]
    outputs = {k: [line.split() for line in refs] for k in SYSTEMS}
    for p in planted:
        outputs["sentence"][p["line"] - 1][p["index"]] = p["alternative"]
        if p["phenomenon"] == "formality":
            outputs["context-gold"][p["line"] - 1][p["index"]] = p["alternative"]
    hyps = []
    for k in SYSTEMS:
        (results / f"{k}.test.fr").write_text("\n".join(" ".join(w) for w in outputs[k]) + "\n")
        hyps.append(str(results / f"{k}.test.fr"))
    options = EvalOptions(
        str(data / "test.en"),
        str(data / "test.fr"),
        str(data / "test.docids"),
        "fr",
        hyps,
        output=str(results / "muda" / "eval.json"),
        src_conllu=str(data / "test.en.conllu"),
        ref_conllu=str(data / "test.fr.conllu"),
        ref_alignments=str(data / "test.align"),
        bootstrap=1000,
        seed=3,
        comet_model="Unbabel/wmt22-comet-da",
    )
    return run_eval(
        options,
        LexiconAnnotator(str(data / "train.en.conllu"), str(data / "train.fr.conllu"), str(data / "train.align")),
    )


def _write_scores(root, lang, comet=False):
    from contextual_mt.metrics import score_files

    data, results = root / "data" / lang, root / "results" / lang
    systems = {
        k: score_files(
            str(results / f"{k}.test.{lang}"),
            str(data / f"test.{lang}"),
            docids=str(data / "test.docids"),
            source=str(data / "test.en") if comet else None,
            comet_model="Unbabel/wmt22-comet-da" if comet else None,
        )
        for k in SYSTEMS
    }
    (results / "scores.json").write_text(json.dumps({"systems": systems, "settings": {"lang": lang}}, indent=2))


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """results/{de,fr,ja}/muda/eval.json and results/{de,fr,ja}/scores.json; the eval results."""
    root = tmp_path_factory.mktemp("study")
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "comet", _comet_stand_in())
        evals = {"de": _german(root), "ja": _japanese(root), "fr": _french(root)}
        for lang in LANGS:
            _write_scores(root, lang, comet=lang == "fr")
    return root, evals


@pytest.fixture(scope="module")
def table(study, tmp_path_factory):
    root, _ = study
    out = tmp_path_factory.mktemp("table") / "out"
    return build_table(TableOptions(LANGS, str(root / "results"), str(out))), out


def _copy_results(study, tmp_path):
    shutil.copytree(study[0] / "results", tmp_path / "results")
    return tmp_path / "results"


def _row(table, lang, system):
    return next(r for r in table["rows"] if r["language"] == lang and r["system"] == system)


# ----------------------------------------------------------------------------- the planted corpora
def test_the_eval_files_are_muda_evals_of_the_planted_differences(study):
    """The premises of the other tests, on what `muda eval` wrote."""
    _, evals = study
    assert list(evals["de"]["systems"]) == list(SYSTEMS)
    assert list(evals["ja"]["systems"]) == [f"{k}.test.ja" for k in SYSTEMS]
    assert list(evals["fr"]["systems"]) == [f"{k}.test.fr" for k in SYSTEMS]
    de = evals["de"]["systems"]
    assert de["sentence"]["tags"]["formality"]["f"] < de["context"]["tags"]["formality"]["f"] == 1.0
    assert de["context-gold"]["tags"]["lexical_cohesion"]["f"] < de["sentence"]["tags"]["lexical_cohesion"]["f"]
    ja = evals["ja"]["systems"]
    assert "lexical_cohesion" in evals["ja"]["tags"]
    assert ja["sentence.test.ja"]["tags"]["lexical_cohesion"]["ref_words"] == 0
    assert ja["context.test.ja"]["tags"]["lexical_cohesion"]["hyp_words"] > 0
    assert "comet" in evals["fr"]["systems"]["context.test.fr"] and "comet" not in de["context"]
    assert {"a", "b", "bleu_p", "tags"} <= set(evals["de"]["comparisons"][0])


# ----------------------------------------------------------------------------- the table
def _expected_significance(results_dir, lang, alpha=0.05):
    """{(system key, column): marked?}, from eval.json alone."""
    ev = json.loads((results_dir / lang / "muda" / "eval.json").read_text())
    names = {system_key(n, lang): n for n in ev["systems"]}
    base = ev["systems"][names["sentence"]]
    marked = {}
    for key, name in names.items():
        if key == "sentence":
            continue
        c = next(c for c in ev["comparisons"] if {c["a"], c["b"]} == {names["sentence"], name})
        s = ev["systems"][name]
        marked[key, "bleu"] = c["bleu_p"] < alpha and s["bleu"] > base["bleu"]
        if "comet_p" in c:
            marked[key, "comet"] = c["comet_p"] < alpha and s["comet"] > base["comet"]
        for t in ev["tags"]:
            if t != "no tag" and base["tags"][t]["ref_words"] > 0:
                marked[key, t] = c["tags"][t]["f"] < alpha and s["tags"][t]["f"] > base["tags"][t]["f"]
    return marked


def test_the_marker_is_exactly_on_significantly_better_values(study, table):
    root, _ = study
    t, _ = table
    seen_worse_significant = 0
    for lang in LANGS:
        expected = _expected_significance(root / "results", lang)
        for r in t["rows"]:
            if r["language"] != lang:
                continue
            for key, marked in r["significant"].items():
                assert marked == expected.get((r["system"], key), False), (lang, r["system"], key)
                p = r["p"][key]
                if p is not None and p < 0.05 and not marked:
                    seen_worse_significant += 1
    assert seen_worse_significant  # a significant difference the wrong way is not marked
    # the planted cases
    assert _row(t, "de", "context")["significant"]["formality"]
    assert _row(t, "de", "context-gold")["significant"]["formality"]
    assert not _row(t, "de", "context")["significant"]["lexical_cohesion"]  # a tie
    gold = _row(t, "de", "context-gold")
    assert gold["p"]["lexical_cohesion"] < 0.05 and not gold["significant"]["lexical_cohesion"]  # worse
    assert _row(t, "ja", "context")["significant"]["formality"]
    ja_gold = _row(t, "ja", "context-gold")
    assert ja_gold["values"]["formality"] > _row(t, "ja", "sentence")["values"]["formality"]
    assert ja_gold["p"]["formality"] >= 0.05 and not ja_gold["significant"]["formality"]  # better, by chance
    fr_gold = _row(t, "fr", "context-gold")
    assert fr_gold["significant"]["pronouns"] and not fr_gold["significant"]["formality"]
    assert _row(t, "fr", "context")["significant"]["bleu"] and _row(t, "fr", "context")["significant"]["comet"]
    assert not any(r["significant"][k] for r in t["rows"] if r["system"] == "sentence" for k in r["significant"])


def test_markdown_has_the_layout_of_table_10(table):
    t, out = table
    md = (out / "table.md").read_text()
    lines = md.splitlines()
    head = next(line for line in lines if line.startswith("| language"))
    tags = [c for c in phenomenon_names() if f" {c} " in head]
    assert tags == t["tags"] == ["lexical_cohesion", "formality", "pronouns"]  # canonical order, only those that apply
    assert head == "| language | system | BLEU | COMET | lexical_cohesion | formality | pronouns | chrF | d-BLEU |"
    body = [line for line in lines if line.startswith("| ") and not line.startswith("| language")]
    assert [tuple(c.strip() for c in line.split("|")[1:3]) for line in body] == [
        (lang, k) for lang in LANGS for k in SYSTEMS
    ]
    labels = ["bleu", "comet", *t["tags"], "chrf", "d_bleu"]
    digits = {"bleu": 2, "comet": 4, "chrf": 2, "d_bleu": 2}
    for line, row in zip(body, t["rows"], strict=True):
        cells = [c.strip() for c in line.split("|")[3:-1]]
        for key, cell in zip(labels, cells, strict=True):
            value = row["values"][key]
            text = "-" if value is None else f"{value:.{digits.get(key, 3)}f}"
            assert cell == (f"**{text}**" if row["significant"][key] else text), (row["language"], row["system"], key)
    assert "p < 0.05" in md and "![" in md


def test_inapplicable_tags_and_missing_comet_are_dashes(table):
    t, out = table
    for k in SYSTEMS:
        assert _row(t, "fr", k)["values"]["lexical_cohesion"] is None  # no lexical cohesion in the demo
        assert _row(t, "ja", k)["values"]["lexical_cohesion"] is None  # only a hypothesis has it
        assert _row(t, "de", k)["values"]["pronouns"] is None and _row(t, "ja", k)["values"]["pronouns"] is None
        assert _row(t, "de", k)["values"]["comet"] is None and _row(t, "fr", k)["values"]["comet"] is not None
        assert _row(t, "de", k)["values"]["lexical_cohesion"] is not None
    assert t["languages"]["ja"]["ref_words"]["lexical_cohesion"] == 0
    md = (out / "table.md").read_text()
    ja_context = next(line for line in md.splitlines() if line.startswith("| ja | context |"))
    cells = [c.strip() for c in ja_context.split("|")[3:-1]]
    assert cells[1] == "-" and cells[2] == "-" and cells[4] == "-"  # COMET, lexical_cohesion, pronouns
    assert "0.000" not in ja_context


def test_csv_parses_and_matches_the_json(table):
    t, out = table
    on_disk = json.loads((out / "table.json").read_text())
    assert on_disk == json.loads(json.dumps(t))
    rows = list(csv.DictReader(io.StringIO((out / "table.csv").read_text())))
    assert len(rows) == len(t["rows"]) == 9
    tested = {c["key"] for c in t["columns"] if c["tested"]}
    assert tested == {"bleu", "comet", *t["tags"]}
    for row, r in zip(rows, on_disk["rows"], strict=True):
        assert (row["language"], row["system"]) == (r["language"], r["system"])
        for key, value in r["values"].items():
            assert row[key] == "-" if value is None else float(row[key]) == value
            if key in tested:
                assert row[f"{key}_sig"] == ("*" if r["significant"][key] else "")
            else:
                assert f"{key}_sig" not in row
    assert rows[0]["chrf"] != "-" and float(rows[0]["d_bleu"]) > 0


def test_figure_is_a_png(table):
    import matplotlib.image

    _, out = table
    png = out / "table.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(str(png))
    assert image.shape[0] > 100 and image.shape[1] > 100
    assert sorted(p.name for p in out.iterdir()) == sorted([*OUTPUT_FILES, ".stage"])  # no temporaries left
    assert [p.name for p in (out / ".stage").iterdir()] == ["table.json"]


def test_the_comet_of_scores_json_fills_in_untested(study, tmp_path):
    """A language whose eval.json has no COMET but whose scores.json has: shown, never marked."""
    results = _copy_results(study, tmp_path)
    ev = json.loads((results / "fr" / "muda" / "eval.json").read_text())
    for s in ev["systems"].values():
        del s["comet"]
    for c in ev["comparisons"]:
        del c["comet_p"]
    (results / "fr" / "muda" / "eval.json").write_text(json.dumps(ev))
    t = build_table(TableOptions(["fr"], str(results), str(tmp_path / "out")))
    scores = json.loads((results / "fr" / "scores.json").read_text())
    for k in SYSTEMS:
        r = _row(t, "fr", k)
        assert r["values"]["comet"] == scores["systems"][k]["comet"]["score"]
        assert r["p"]["comet"] is None and not r["significant"]["comet"]
    assert t["languages"]["fr"]["comet_from"] == ["scores.json"]


def test_without_bootstrap_nothing_is_marked(study, tmp_path):
    results = _copy_results(study, tmp_path)
    path = results / "de" / "muda" / "eval.json"
    ev = json.loads(path.read_text())
    ev["bootstrap"], ev["comparisons"] = 0, []  # as `muda eval --bootstrap 0` writes it
    path.write_text(json.dumps(ev))
    t = build_table(TableOptions(["de"], str(results), str(tmp_path / "out"), alpha=0.5))
    assert not any(v for r in t["rows"] for v in r["significant"].values())
    assert "--bootstrap 0" in (tmp_path / "out" / "table.md").read_text()


def test_alpha_moves_the_markers(study, tmp_path):
    t = build_table(TableOptions(["ja"], str(study[0] / "results"), str(tmp_path / "out"), alpha=0.6))
    gold = _row(t, "ja", "context-gold")
    assert gold["p"]["formality"] < 0.6 and gold["significant"]["formality"]


def test_system_names_map_from_hypothesis_files():
    assert system_key("sentence.test.de", "de") == "sentence"
    assert system_key("context-gold.test.de", "de") == "context-gold"
    assert system_key("context.de", "de") == "context"
    assert system_key("context", "de") == "context"
    assert system_key("sentence.test.fr", "de") == "sentence.test.fr"


# ----------------------------------------------------------------------------- errors
def _fails(options_or_langs, tmp_path, match, results=None):
    options = (
        options_or_langs
        if isinstance(options_or_langs, TableOptions)
        else TableOptions(options_or_langs, str(results), str(tmp_path / "out"))
    )
    with pytest.raises(InputError, match=match) as e:
        build_table(options)
    assert "\n" not in str(e.value)
    assert not (tmp_path / "out").exists()  # nothing written, not even the directory
    return str(e.value)


def test_missing_results_name_the_file_and_the_make_target(study, tmp_path):
    results = _copy_results(study, tmp_path)
    (results / "de" / "scores.json").unlink()
    _fails(["de"], tmp_path, r"results/de/scores\.json: .*not found.*make score LANG=de", results)
    # neither file: both make targets named
    _fails(
        ["xx"], tmp_path, r"results/xx/scores\.json: .*not found.*make score LANG=xx.*make muda-eval LANG=xx", results
    )
    # eval.json there but broken is still refused (only a MuDA run not made is tolerated)
    (results / "ja" / "muda" / "eval.json").write_text("")
    _fails(["ja"], tmp_path, r"results/ja/muda/eval\.json: empty file.*make muda-eval LANG=ja", results)


def test_a_language_without_muda_results_gets_its_other_columns(study, table, tmp_path, capsys):
    results = _copy_results(study, tmp_path)
    (results / "fr" / "muda" / "eval.json").unlink()
    built = build_table(TableOptions(LANGS, str(results), str(tmp_path / "out")))
    warning = capsys.readouterr().err.strip()
    assert warning.count("\n") == 0 and warning.startswith("warning: ") and "make muda-eval LANG=fr" in warning
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted([*OUTPUT_FILES, ".stage"])
    full, _ = table
    scores = json.loads((results / "fr" / "scores.json").read_text())["systems"]
    for system in SYSTEMS:
        row = _row(built, "fr", system)
        assert row["values"]["bleu"] == scores[system]["bleu"]["score"]  # sacreBLEU's, from scores.json
        assert row["values"]["chrf"] == scores[system]["chrf"]["score"]
        assert row["values"]["comet"] == scores[system]["comet"]["score"]
        assert all(row["values"][t] is None for t in built["tags"]) and not any(row["significant"].values())
        before = _row(full, "de", system)  # the other languages as before (in the columns still there)
        assert all(
            _row(built, "de", system)[part][k] == before[part][k]
            for part in ("values", "p", "significant")
            for k in _row(built, "de", system)[part]
        )
    assert built["languages"]["fr"]["muda"] is False and built["languages"]["de"]["muda"] is True
    md = (tmp_path / "out" / "table.md").read_text()
    fr_rows = [line for line in md.splitlines() if line.startswith("| fr |")]
    assert len(fr_rows) == 3 and all(line.count("—") == len(built["tags"]) for line in fr_rows)
    assert "MuDA: not run for fr (make muda-eval LANG=fr)" in md
    assert not any(line.startswith("| de |") and "—" in line for line in md.splitlines())
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "table.csv").read_text())))
    fr = [r for r in rows if r["language"] == "fr"]
    assert all(r[t] == "missing" for r in fr for t in built["tags"])
    # no language with MuDA results: the table has no MuDA column, only the notes
    for lang in LANGS:
        (results / lang / "muda" / "eval.json").unlink(missing_ok=True)
    only = build_table(TableOptions(LANGS, str(results), str(tmp_path / "out2")))
    assert only["tags"] == [] and [c["key"] for c in only["columns"]] == ["bleu", "comet", "chrf", "d_bleu"]
    assert capsys.readouterr().err.count("warning: ") == 3


def test_malformed_json_names_the_file_and_line(study, tmp_path):
    results = _copy_results(study, tmp_path)
    path = results / "fr" / "muda" / "eval.json"
    lines = path.read_text().splitlines()
    lines[4] = lines[4] + " oops"
    path.write_text("\n".join(lines) + "\n")
    _fails(["de", "fr"], tmp_path, r"results/fr/muda/eval\.json:5: not valid JSON", results)
    (results / "de" / "scores.json").write_text('{"systems": {\n  "sentence": \n}\n')
    _fails(["de"], tmp_path, r"results/de/scores\.json:3: not valid JSON", results)
    (results / "de" / "scores.json").write_text("")
    _fails(["de"], tmp_path, r"results/de/scores\.json: empty file", results)
    (results / "de" / "scores.json").write_text("[1, 2]")
    _fails(["de"], tmp_path, r"results/de/scores\.json: the file is not an object", results)


def test_eval_without_the_sentence_baseline(study, tmp_path):
    results = _copy_results(study, tmp_path)
    path = results / "ja" / "muda" / "eval.json"
    ev = json.loads(path.read_text())
    del ev["systems"]["sentence.test.ja"]
    ev["comparisons"] = [c for c in ev["comparisons"] if "sentence.test.ja" not in (c["a"], c["b"])]
    path.write_text(json.dumps(ev, indent=2))
    _fails(["ja"], tmp_path, r"results/ja/muda/eval\.json: no sentence-level baseline system 'sentence'", results)


def test_systems_that_differ_between_scores_and_eval(study, tmp_path):
    results = _copy_results(study, tmp_path)
    path = results / "de" / "scores.json"
    scores = json.loads(path.read_text())
    good = copy.deepcopy(scores)
    del scores["systems"]["context-gold"]
    path.write_text(json.dumps(scores))
    message = _fails(
        ["de"],
        tmp_path,
        r"results/de/scores\.json: its systems .* differ from those of "
        r".*results/de/muda/eval\.json",
        results,
    )
    assert "context-gold only in" in message
    good["systems"]["big-context"] = good["systems"]["context"]
    path.write_text(json.dumps(good))
    assert "big-context only in" in _fails(["de"], tmp_path, "differ", results)


def test_a_system_scored_and_evaluated_from_different_files(study, tmp_path):
    """make score and make muda-eval of one system name, its file made again in between (a
    document-level output perturbed anew): one line, not a row that mixes two outputs."""
    results = _copy_results(study, tmp_path)
    path = results / "de" / "scores.json"
    scores = json.loads(path.read_text())
    scores["systems"]["context"]["bleu"]["score"] -= 3.0
    path.write_text(json.dumps(scores))
    message = _fails(
        ["de"], tmp_path, r"results/de/scores\.json: system 'context' has BLEU .* but .* in .*eval\.json", results
    )
    assert "different files" in message


def test_eval_of_another_language(study, tmp_path):
    results = _copy_results(study, tmp_path)
    shutil.copy(results / "fr" / "muda" / "eval.json", results / "de" / "muda" / "eval.json")
    _fails(["de"], tmp_path, r"results/de/muda/eval\.json: evaluates target language 'fr', not 'de'", results)


def test_a_broken_eval_structure_names_the_file(study, tmp_path):
    results = _copy_results(study, tmp_path)
    path = results / "de" / "muda" / "eval.json"
    ev = json.loads(path.read_text())
    ev["systems"]["context"]["tags"]["formality"]["f"] = "high"
    path.write_text(json.dumps(ev))
    _fails(
        ["de"], tmp_path, r"eval\.json: the f-measure of tag 'formality' of system 'context' is not a number", results
    )


@pytest.mark.parametrize(
    "langs, match",
    [
        ([], "no target language"),
        ("", "no target language"),
        (["de", "fr", "de"], "language 'de' given twice"),
        (["de", "../x"], "not a language code"),
        ([3], "give a list"),
    ],
)
def test_bad_langs(langs, match):
    with pytest.raises(InputError, match=match):
        TableOptions(langs, output_dir="out")


@pytest.mark.parametrize("alpha", [0, -0.1, 1.5, float("nan"), "0.05", True])
def test_bad_alpha(alpha):
    with pytest.raises(InputError, match="--alpha"):
        TableOptions(["de"], alpha=alpha)


def test_options_defaults_and_a_string_of_langs():
    o = TableOptions("de fr,ja", results_dir="res")
    assert o.langs == ["de", "fr", "ja"] and o.output_dir == "res/table" and o.alpha == 0.05
    assert TableOptions(["de"]).output_dir == "results/table"


def test_a_failure_keeps_the_previous_table(study, tmp_path):
    """All four files, or none: a later failed run leaves the earlier table as it was."""
    results = _copy_results(study, tmp_path)
    out = tmp_path / "out"
    build_table(TableOptions(["de", "ja"], str(results), str(out)))
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    (results / "ja" / "scores.json").unlink()
    with pytest.raises(InputError, match="make score LANG=ja"):
        build_table(TableOptions(["de", "ja"], str(results), str(out)))
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_an_unwritable_output_is_found_before_reading(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "table.csv").mkdir()
    with pytest.raises(InputError, match=r"table\.csv: is a directory"):
        build_table(TableOptions(["de"], str(tmp_path / "no-results"), str(tmp_path / "out")))


# ----------------------------------------------------------------------------- the command
def _parser():
    parser = argparse.ArgumentParser(prog="contextual-mt pipeline")
    add_stage_parsers(parser.add_subparsers(dest="command", required=True))
    return parser


def _run(argv):
    from commandkit.command_outputs import command_outputs
    from commandkit.console import run_command

    args = _parser().parse_args(argv)
    return run_command(args.func, args, command_outputs(args))


def test_command_prints_the_table_and_where_it_is(study, tmp_path, capsys):
    out = tmp_path / "t"
    args = _parser().parse_args(
        ["table", "--langs", "de", "ja", "--results-dir", str(study[0] / "results"), "--output-dir", str(out)]
    )
    assert args.output_dir_args == ("output_dir",) and args.alpha == 0.05
    assert (
        _run(
            [
                "table",
                "--langs",
                "de",
                "ja",
                "--results-dir",
                str(study[0] / "results"),
                "--output-dir",
                str(out),
                "--alpha",
                "0.01",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert printed.startswith("# ") and "| de | context |" in printed and str(out / "table.png") in printed
    assert printed.strip().splitlines()[-1].startswith("wrote ")
    assert sorted(p.name for p in out.iterdir()) == sorted([*OUTPUT_FILES, ".stage"])


def test_command_errors_are_one_line(tmp_path, capsys):
    assert _run(["table", "--langs", "de", "de", "--output-dir", str(tmp_path / "t")]) == 1
    assert capsys.readouterr().err.strip() == "error: --langs: language 'de' given twice (de de)"
    assert (
        _run(["table", "--langs", "fr", "--results-dir", str(tmp_path / "r"), "--output-dir", str(tmp_path / "t")]) == 1
    )
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "make muda-eval LANG=fr" in err
    assert not (tmp_path / "t").exists()
    assert _parser().parse_args(["table", "--langs", "de"]).output_dir is None  # -> results/table


def test_cxmi_column_from_the_pcxmi_summaries(study, tmp_path):
    results = _copy_results(study, tmp_path)
    (results / "fr" / "muda" / "eval.json").unlink()  # the column comes with or without MuDA
    for lang, cxmi in (("de", 0.0123), ("fr", -0.0042)):
        (results / lang / "pcxmi.summary.json").write_text(json.dumps({"cxmi": cxmi, "unit": "nats", "sentences": 10}))
    built = build_table(TableOptions(LANGS, str(results), str(tmp_path / "out")))
    assert [c["key"] for c in built["columns"]][-1] == "cxmi" and built["columns"][-1]["label"] == "CXMI (nats)"
    for lang, cxmi in (("de", 0.0123), ("fr", -0.0042), ("ja", None)):
        got = {s: _row(built, lang, s)["values"]["cxmi"] for s in SYSTEMS}
        # the context model's number, on the rows of the systems it translated
        assert got == {s: (cxmi if s in ("context", "context-gold") else None) for s in SYSTEMS}, (lang, got)
    md = (tmp_path / "out" / "table.md").read_text()
    assert "| CXMI (nats) |" in md and "0.0123" in md and "-0.0042" in md and "context model's corpus CXMI" in md
    # a broken summary is refused, naming it and the make target
    (results / "ja" / "pcxmi.summary.json").write_text(json.dumps({"cxmi": "high", "unit": "nats"}))
    _fails(["ja"], tmp_path / "a", r"results/ja/pcxmi\.summary\.json: 'cxmi' is not a number", results)
    (results / "ja" / "pcxmi.summary.json").write_text(json.dumps({"cxmi": 0.1, "unit": "bits"}))
    _fails(LANGS, tmp_path / "b", r"different units", results)


def test_the_table_has_a_stage_record_and_a_rerun_reads_it(study, tmp_path, capsys):
    results = _copy_results(study, tmp_path)
    o = TableOptions(LANGS, str(results), str(tmp_path / "table"))
    first = build_table(o)
    record = json.loads((tmp_path / "table" / ".stage" / "table.json").read_text())
    assert record["stage"] == "table" and sorted(k.split("/")[-1] for k in record["outputs"]) == sorted(OUTPUT_FILES)
    capsys.readouterr()
    assert build_table(o) == first and "up to date" in capsys.readouterr().err
    # another alpha, or a language's results changed: made again
    build_table(TableOptions(LANGS, str(results), str(tmp_path / "table"), alpha=0.01))
    assert "up to date" not in capsys.readouterr().err
    (results / LANGS[0] / "scores.json").write_text((results / LANGS[0] / "scores.json").read_text() + "\n")
    build_table(TableOptions(LANGS, str(results), str(tmp_path / "table"), alpha=0.01))
    assert "up to date" not in capsys.readouterr().err
    build_table(TableOptions(LANGS, str(results), str(tmp_path / "table"), alpha=0.01))
    assert "up to date" in capsys.readouterr().err
