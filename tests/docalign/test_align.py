"""docalign: chrF against sacreBLEU, the dynamic program's links, its band, the rule for
merges and additions, the output formats and the perturbation generator's known links."""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest

from commandkit.errors import InputError
from docalign import chrf as chrf_module
from docalign import dp, words
from docalign.align import AlignOptions, align_documents, align_system_output
from docalign.chrf import Profile, Runs, chrf
from docalign.formats import read_system_output
from docalign.links import summary
from docalign.perturb import Rates, link_accuracy, perturb
from docalign.segmenter import Segmenter
from tests.docalign.reference import levenshtein

SUBJECTS = ["Le chat", "Ma sœur", "Notre voisin", "La directrice", "Un enfant", "Le vieux pêcheur", "Cette équipe"]
VERBS = ["regarde", "achète", "répare", "dessine", "cherche", "oublie", "vend"]
OBJECTS = ["la maison rouge", "un vélo ancien", "le journal du matin", "une lettre", "la voiture", "un gâteau"]
TAILS = ["", ", sans rien dire", ", puis il part", " depuis des années", ", comme chaque jour"]


def corpus(n_docs: int = 30, seed: int = 0):
    """Varied French sentences in documents of 4-12 lines: (lines, ids)."""
    rng = random.Random(seed)
    lines, ids = [], []
    for d in range(n_docs):
        for _ in range(rng.randint(4, 12)):
            s = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(TAILS)}."
            lines.append(s)
            ids.append(f"doc{d}")
    return lines, ids


def noisy(lines, seed: int = 1):
    """Another system's translation of the same lines: a word changed in some."""
    rng = random.Random(seed)
    out = []
    for line in lines:
        words = line.split()
        if rng.random() < 0.5:
            words[rng.randrange(len(words))] = rng.choice(VERBS)
        out.append(" ".join(words))
    return out


def joined(lines, ids):
    texts, prev = [], None
    for line, i in zip(lines, ids, strict=True):
        if i == prev:
            texts[-1] += " " + line
        else:
            texts.append(line)
        prev = i
    return texts


def test_chrf_is_sacrebleus_sentence_chrf_with_beta_1():
    from sacrebleu.metrics import CHRF

    metric = CHRF(beta=1)
    lines, _ = corpus(5)
    rng = random.Random(3)
    pairs = [
        (rng.choice(lines), rng.choice(lines) + " " * rng.randint(0, 1) + rng.choice(["", lines[0]]))
        for _ in range(200)
    ]
    pairs += [("", "a"), ("a", ""), ("ab", "xy"), ("même", "même")]
    # n-grams repeated a different number of times on each side (clipped matches), at every order
    pairs += [("la la la la", "la la"), ("abcabcabc", "abcabc x abc"), ("aaaaaaa", "aaa"), ("aaa", "aaaaaaa")]
    for hyp, ref in pairs:
        assert chrf(Profile(hyp), Profile(ref)) == pytest.approx(
            metric.sentence_score(hyp, [ref]).score / 100, abs=1e-12
        )


@pytest.mark.parametrize("key_bits", [62, 0])  # 0: every sort on separate keys (numbers too wide to pack)
def test_the_batched_chrf_of_runs_is_the_profiles_chrf_exactly(key_bits, monkeypatch):
    """``Runs`` (every candidate link of every document at once) gives the very floats of
    ``chrf(Profile(..), Profile(..))``: repeated n-grams, texts shorter than the orders, empty
    texts, whitespace of every kind, characters outside the BMP, groups of different sizes."""
    monkeypatch.setattr(chrf_module, "KEY_BITS", key_bits)
    rng = random.Random(4)
    lines, _ = corpus(4)
    odd = ["", " ", "a", "ab", "la la la la", "aaaaaaa", "abcabc x abc", "日本語の文。", "\U0001d518 \U0001f600 ok"]
    # and texts of few letters: every n-gram repeated within a text and across its neighbours
    few = ["".join(rng.choice("aab c") for _ in range(rng.randrange(15))) for _ in range(40)]
    pool = [*lines, *odd, "x\ty\u00a0z", *few]
    lists, groups = [], []
    for group in range(24):
        for _ in (0, 1):
            lists.append([rng.choice(pool) for _ in range(rng.randint(0, 6))])
            groups.append(group)
    runs = Runs(lists, groups)
    hyps, refs, expected = [], [], []
    for group in range(24):
        refs_list, hyps_list = 2 * group, 2 * group + 1
        for i in range(len(lists[refs_list])):
            for a in (1, 2)[: len(lists[refs_list]) - i]:
                for j in range(len(lists[hyps_list])):
                    for b in (1, 2)[: len(lists[hyps_list]) - j]:
                        hyps.append(runs.text_id(hyps_list, j, b))
                        refs.append(runs.text_id(refs_list, i, a))
                        hyp = " ".join(lists[hyps_list][j : j + b])
                        ref = " ".join(lists[refs_list][i : i + a])
                        expected.append(chrf(Profile(hyp), Profile(ref)))
    assert len(expected) > 100
    assert runs.scores(hyps, refs).tolist() == expected  # equal floats, not approximately


@pytest.mark.parametrize("key_bits", [62, 0])
def test_the_batched_chrf_of_texts_of_few_letters_every_pair_of_a_group(key_bits, monkeypatch):
    """Texts of two or three letters repeat every n-gram within a text and across its neighbours
    (a joined text counts its first text's n-grams, those running on, then its second's): every
    pair of texts of a group, either list, one text or two joined."""
    monkeypatch.setattr(chrf_module, "KEY_BITS", key_bits)
    for seed in range(20):
        rng = random.Random(seed)
        letters = rng.choice(["ab", "abc", "ab ", "aab  c", "xyz日"])
        lists, groups = [], []
        for group in range(rng.randint(1, 6)):
            for _ in range(rng.randint(1, 3)):
                size = rng.randint(0, 6)
                lists.append(["".join(rng.choice(letters) for _ in range(rng.randint(0, 14))) for _ in range(size)])
                groups.append(group)
        runs = Runs(lists, groups)
        texts = [
            (group, runs.text_id(k, start, count), " ".join(texts[start : start + count]))
            for k, (texts, group) in enumerate(zip(lists, groups, strict=True))
            for start in range(len(texts))
            for count in (1, 2)[: len(texts) - start]
        ]
        pairs = [(x, y) for x in texts for y in texts if x[0] == y[0]]
        expected = [chrf(Profile(x[2]), Profile(y[2])) for x, y in pairs]
        assert runs.scores([x[1] for x, _ in pairs], [y[1] for _, y in pairs]).tolist() == expected, seed


def test_word_edit_distances_of_many_pairs_at_once_are_levenshteins(monkeypatch):
    """Pairs of every length, empty ones too, over several chunks (the references longest first
    within a chunk, each pair leaving the rows once its reference has ended)."""
    monkeypatch.setattr(words, "CHUNK", 64)
    rng = random.Random(7)
    refs = [np.array([rng.randrange(6) for _ in range(rng.randrange(14))], dtype=np.int32) for _ in range(300)]
    hyps = [np.array([rng.randrange(6) for _ in range(rng.randrange(14))], dtype=np.int32) for _ in range(300)]
    assert words.distances(refs, hyps).tolist() == [
        levenshtein(r.tolist(), h.tolist()) for r, h in zip(refs, hyps, strict=True)
    ]
    vocabulary = words.Vocabulary()
    texts = ["Le chat, dort.", "", "le CHAT dort"]
    assert [a.tolist() for a in vocabulary.encode_all(texts)] == [[0, 1, 2, 3, 4], [], [0, 1, 3]]


def test_every_link_type_is_found():
    pivots = ["Salut Paul, mon ami.", "Tu vois le gâteau.", "Ma sœur lit beaucoup.", "Tu achètes la maison.",
              "Nous aimons la maison.", "Elle est très moderne et grande."]  # fmt: skip
    # an unrelated sentence right beside an omitted line would be linked to it, as mwerSegmenter
    # links words (a substitution of every word costs less than deleting them and inserting others)
    segments = ["Salut Paul, mon ami, tu vois le gâteau.", "Une phrase ajoutée sans rapport.", "Ma sœur lit beaucoup.",
                "Nous aimons la maison.", "Elle est très moderne", "et grande."]  # fmt: skip
    links = dp.align(pivots, segments, band=2)
    assert [(link.kind, link.lines[0], link.segments[0]) for link in links] == [
        ("2-1", 0, 0), ("0-1", 2, 1), ("1-1", 2, 2), ("1-0", 3, 3), ("1-1", 4, 3), ("1-2", 5, 4)
    ]  # fmt: skip
    two_two = dp.align(
        ["Le chat dort sur le canapé du salon.", "Le chien joue dans le jardin derrière la maison."],
        ["Le chat dort sur le canapé du salon, le chien joue", "dans le jardin derrière la maison."],
    )
    assert [link.kind for link in two_two] == ["2-2"]


def test_the_band_is_widened_where_the_path_needs_it_and_the_work_grows_linearly(monkeypatch):
    lines, _ = corpus(4, seed=5)
    pivots = lines[:40]
    segments = [f"Ajout numéro {k} qui ne ressemble à rien." for k in range(6)] + pivots[:34]  # off the diagonal
    narrow, wide = dp.align(pivots, segments, band=2), dp.align(pivots, segments, band=1000)
    assert narrow == wide
    assert [link.kind for link in wide[:7]] == ["0-1"] * 6 + ["1-1"]

    calls = []
    real = dp.link_chrf
    monkeypatch.setattr(dp, "link_chrf", lambda runs, hyps, refs: calls.extend(hyps) or real(runs, hyps, refs))
    many, _ = corpus(60, seed=6)
    dp.align(many[:200], many[:200], band=5)
    small = len(calls)
    calls.clear()
    dp.align(many[:400], many[:400], band=5)
    assert len(calls) < 2.3 * small  # twice the lines, about twice the work (not four times)


def test_documents_aligned_together_or_in_windows_get_the_links_they_get_alone(monkeypatch):
    """``align_many`` costs every document's links in one batch, a long document's n-grams by
    windows of its lines, some windows at a time: the links (and their chrF) are those of each
    document aligned alone with one window."""
    lines, _ = corpus(10, seed=8)
    docs = []
    for start, n in ((0, 30), (30, 7)):
        segments = noisy(lines[start : start + n], seed=start)
        segments[3:5] = [segments[3] + " " + segments[4]]  # a merge, an omission, an addition
        del segments[5]
        segments.insert(n // 2, "Une phrase ajoutée sans aucun rapport.")
        docs.append((lines[start : start + n], segments))
    docs.append((lines[37:40], []))
    alone = [dp.align(p, s, band=3) for p, s in docs]
    monkeypatch.setattr(dp, "WINDOW", 4)
    monkeypatch.setattr(dp, "BATCH", 300)
    together = dp.align_many(docs, band=3)
    assert together == alone
    assert {"2-1", "1-0", "0-1"} <= {link.kind for link in alone[0]} and alone[2] == [
        dp.Link((k, 1), (0, 0), None) for k in range(3)
    ]


def test_a_wide_document_is_not_searched_padded_together_with_narrow_ones(monkeypatch):
    """A row is padded to the widest document searched with it: one line translated as 300
    sentences is searched apart from 50 one-line documents (else 51 rows x 301 cells)."""
    docs = [(["Ligne numéro un."], [f"Phrase {k} de la sortie." for k in range(300)])]
    docs += [([f"Le chat {k} dort."], [f"Le chat {k} dort."]) for k in range(50)]
    searched = []
    real = dp._rows
    monkeypatch.setattr(
        dp, "_rows", lambda cells, order, *rest: searched.append(order.tolist()) or real(cells, order, *rest)
    )
    together = dp.align_many(docs, band=20)
    assert list(range(1, 51)) in searched and all(order == [0] for order in searched if 0 in order)
    assert together == [dp.align(p, s, band=20) for p, s in docs]


def test_a_widened_band_costs_only_the_links_it_adds(monkeypatch):
    lines, _ = corpus(4, seed=5)
    pivots = lines[:40]
    segments = [f"Ajout numéro {k} qui ne ressemble à rien." for k in range(6)] + pivots[:34]  # off the diagonal
    costed, searches = [], []
    real_costs, real_diagonal = dp._costs, dp._diagonal

    def costs(texts, docs, bands, w, models, d, i, a, j, b, *shape):
        costed.extend(zip(d.tolist(), i.tolist(), a.tolist(), j.tolist(), b.tolist(), strict=True))
        return real_costs(texts, docs, bands, w, models, d, i, a, j, b, *shape)

    monkeypatch.setattr(dp, "_costs", costs)
    monkeypatch.setattr(dp, "_diagonal", lambda *band: searches.append(band) or real_diagonal(*band))
    links = dp.align(pivots, segments, band=2)
    assert len(searches) >= 2  # widened at least once
    assert len(costed) == len(set(costed)) == len(dp.candidates(real_diagonal(*searches[-1])))
    monkeypatch.setattr(dp, "_costs", real_costs)
    assert links == dp.align(pivots, segments, band=searches[-1][2])


@pytest.mark.parametrize(
    "lines, sentences, band",
    [(1, 50, 20), (1, 5, 1), (1, 500, 20), (500, 1, 20), (3, 200, 2), (200, 3, 2)],
)
def test_the_band_reaches_every_cell_for_any_ratio_of_sentences_to_lines(lines, sentences, band):
    """Many more output sentences than lines (or many more lines than sentences): the band must
    still join the first cell to the last, and every sentence and line is in exactly one link."""
    pivots = [f"Ligne numéro {k} du document source." for k in range(lines)]
    segments = [f"Phrase {k} de la sortie, assez différente." for k in range(sentences)]
    links = dp.align(pivots, segments, band=band)
    assert sum(link.lines[1] for link in links) == lines
    assert sum(link.segments[1] for link in links) == sentences
    i = j = 0
    for link in links:  # contiguous and monotonic
        assert link.lines[0] == i and link.segments[0] == j
        i, j = i + link.lines[1], j + link.segments[1]


def test_one_line_translated_as_many_sentences_keeps_them_all_in_order():
    pivots = ["Le chat dort."]
    segments = ["Le chat dort."] + [f"Ajout {k}." for k in range(60)]
    links = dp.align(pivots, segments, band=1)
    assert links[0].kind == "1-1" and [link.kind for link in links[1:]] == ["0-1"] * 60


def test_the_corridor_grows_with_the_slope_not_the_square(monkeypatch):
    """A line per 20 sentences: the rows of the band cover the diagonal's slope, so the cells
    searched grow with the sentences, not with lines x sentences."""
    cells = []
    real = dp._diagonal

    def counted(n, m, width):
        lo, hi = real(n, m, width)
        cells.append(sum(h - lo_ + 1 for lo_, h in zip(lo, hi, strict=True)))
        return lo, hi

    monkeypatch.setattr(dp, "_diagonal", counted)
    dp.align([f"Ligne {k}." for k in range(20)], [f"Phrase {k}." for k in range(400)], band=2)
    assert cells[0] < 400 + 20 * 6  # the first band: about m + n x (2 band + 1), not n x m = 8000


def test_merges_are_cut_between_their_lines_and_additions_are_kept_with_the_line_before():
    pivots = ["Le chat dort.", "Le chien joue dehors.", "Il pleut."]
    ids = ["d"] * 3
    text = "Ajout au début. Le chat dort, le chien joue dehors. Une phrase ajoutée ici. Il pleut."
    a = align_documents([text], pivots, ids, AlignOptions(language="fr"))
    assert a.hypotheses == [
        "Ajout au début. Le chat dort,",
        "le chien joue dehors. Une phrase ajoutée ici.",
        "Il pleut.",
    ]
    kinds = [r["link"] for r in a.records()]
    assert kinds == ["2-1", "0-1", "2-1", "0-1", "1-1"]
    added = [r for r in a.records() if r["link"] == "0-1"]
    assert [r["attached_to"] for r in added] == [1, 2]
    assert a.statistics["merges"] == 1 and a.statistics["additions"] == 2
    assert summary(a.statistics).startswith(
        "aligned 3 lines to 4 output sentences: 1 merge, 0 splits, 0 omissions, 2 additions"
    )


def test_a_document_output_of_line_aligned_translations_gives_the_lines_back():
    lines, ids = corpus(20)
    pivots = noisy(lines)
    a = align_documents(joined(lines, ids), pivots, ids, AlignOptions(language="fr"))
    assert a.hypotheses == lines
    assert a.statistics["links"]["1-1"] == len(lines) and a.statistics["merges"] == 0


def test_lines_with_an_empty_pivot_are_not_aligned():
    a = align_documents(["Un. Deux."], ["Un.", "", "Deux."], ["d"] * 3)
    assert a.hypotheses == ["Un.", "", "Deux."]
    assert [r["link"] for r in a.records()] == ["1-1", "empty", "1-1"]


def test_perturbed_outputs_are_aligned_to_their_known_links():
    lines, ids = corpus(60, seed=2)
    docs = perturb(lines, ids, Rates(), seed=4)
    edits = {k: sum(d.edits[k] for d in docs) for k in ("merge", "split", "drop", "add")}
    n = len(lines)
    assert edits["merge"] == round(0.10 * n) and edits["drop"] == round(0.03 * n) and edits["add"] == round(0.02 * n)
    assert 0 < edits["split"] <= round(0.05 * n)
    assert link_accuracy([d.alignment() for d in docs], docs) == 1.0  # the measure: the truth scores 1
    a = align_documents([d.text for d in docs], noisy(lines), ids, AlignOptions(language="fr"))
    assert link_accuracy(a.documents, docs) >= 0.95


# ------------------------------------------------------------------------------------ formats
@pytest.fixture
def files(tmp_path):
    lines, ids = corpus(3)
    (tmp_path / "ids").write_text("\n".join(ids) + "\n")
    return tmp_path, lines, ids


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return str(path)


def test_jsonl_records_in_any_order_and_documents_per_line_are_read(files):
    tmp, lines, ids = files
    texts = joined(lines, ids)
    names = list(dict.fromkeys(ids))
    records = [{"doc": n, "text": t, "chunks": []} for n, t in zip(names, texts, strict=True)]
    out = read_system_output(write_jsonl(tmp / "o.jsonl", records[::-1]), ids, "ids", [True] * 3)
    assert out.format == "jsonl" and out.documents == texts and out.document_lines == [3, 2, 1]
    (tmp / "o.txt").write_text("\n".join(texts) + "\n")
    assert read_system_output(str(tmp / "o.txt"), ids, "ids", [True] * 3).documents == texts
    (tmp / "l.txt").write_text("\n".join(lines) + "\n")
    assert read_system_output(str(tmp / "l.txt"), ids, "ids", [True] * 3).format == "lines"
    assert align_system_output(str(tmp / "l.txt"), lines, ids, "ids") is None


def test_an_empty_document_is_aligned_as_omissions_with_one_warning(files, caplog):
    """A system that wrote nothing for a document (WMT24's Occiglot, 6 documents): every line of it
    gets an empty hypothesis, counted as an omission, and the file gets one warning line naming
    the first such document and how many there are; the other documents align as before."""
    tmp, lines, ids = files
    texts = joined(lines, ids)
    records = [{"doc": "doc0", "text": texts[0]}, {"doc": "doc1", "text": " "}, {"doc": "doc2", "text": ""}]
    with caplog.at_level("WARNING"):
        a = align_system_output(write_jsonl(tmp / "o.jsonl", records), lines, ids, "ids")
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    n1, n2 = ids.count("doc1"), ids.count("doc2")
    assert warnings == [
        f"{tmp / 'o.jsonl'}:2: document 'doc1' and 1 more are empty but the source is not (2 of 3 documents): "
        f"their {n1 + n2} lines are omissions"
    ]
    n0 = ids.count("doc0")
    assert a is not None and a.hypotheses[:n0] == lines[:n0] and a.hypotheses[n0:] == [""] * (n1 + n2)
    assert a.statistics["omissions"] == n1 + n2 and a.statistics["lines"] == len(lines)
    assert [r["link"] for r in a.records()][n0:] == ["1-0"] * (n1 + n2)


@pytest.mark.parametrize(
    "records, expected",
    [
        ([{"doc": "doc0", "text": "a"}, {"doc": "other", "text": "b"}], "o.jsonl:2: document 'other' is not in ids"),
        ([{"doc": "doc0", "text": "a"}, {"doc": "doc1", "text": "b"}], "o.jsonl: no record for document 'doc2'"),
        ([{"doc": "doc0", "text": "a"}, {"doc": "doc0", "text": "b"}], "o.jsonl:2: document 'doc0' again"),
        ([{"doc": "doc0", "text": 3}], "o.jsonl:1: a record needs"),
    ],
)
def test_bad_document_outputs_are_one_line_naming_the_file_and_line(files, records, expected):
    tmp, _lines, ids = files
    with pytest.raises(InputError, match=re.escape(expected)) as e:
        read_system_output(write_jsonl(tmp / "o.jsonl", records), ids, "ids", [True] * 3)
    assert "\n" not in str(e.value)


def test_an_output_of_neither_shape_is_an_unknown_format(files):
    tmp, _lines, ids = files
    (tmp / "o.txt").write_text("one\ntwo\n")
    with pytest.raises(InputError, match="unknown format"):
        read_system_output(str(tmp / "o.txt"), ids, "ids", [True] * 3)


def test_the_same_id_for_two_documents_matches_its_records_in_order(tmp_path):
    ids = ["a", "a", "b", "a"]
    path = write_jsonl(
        tmp_path / "o.jsonl", [{"doc": "a", "text": "first"}, {"doc": "b", "text": "x"}, {"doc": "a", "text": "second"}]
    )
    assert read_system_output(path, ids, "ids", [True] * 3).documents == ["first", "x", "second"]


# ----------------------------------------------------------------------------------- segmenter
@pytest.mark.parametrize("segmenter", ["rules", "sentencizer"])
def test_the_segmenter_splits_on_line_breaks_and_keeps_abbreviations(segmenter):
    text = "M. Dupont est là. Il part.\nSans point final\n\nFin."
    spans = Segmenter(segmenter, "fr").split([text])[0]
    assert [text[a:b] for a, b in spans] == ["M. Dupont est là.", "Il part.", "Sans point final", "Fin."]


def test_a_pipeline_that_is_not_installed_says_how_to_get_it():
    with pytest.raises(InputError, match=r"python -m spacy download xx_missing_pipeline"):
        Segmenter("xx_missing_pipeline", "fr")


@pytest.mark.parametrize("kind", ["empty folder", "file", "missing folder"])
def test_a_path_that_holds_no_pipeline_says_so_and_suggests_no_download(tmp_path, kind):
    """issue 50 item 4: `spacy download /a/folder` is no advice for a path."""
    path = tmp_path / "pipeline"
    if kind == "empty folder":
        path.mkdir()
    elif kind == "file":
        path.write_text("not a pipeline\n")
    with pytest.raises(InputError) as e:
        Segmenter(str(path), "fr")
    message = str(e.value)
    assert message.startswith(f"--segmenter {path}: ")
    assert "spacy download" not in message and "pip install" not in message
    expected = {"empty folder": "does not hold a spaCy pipeline", "file": "not a folder", "missing folder": "no such"}
    assert expected[kind] in message


def test_a_record_cut_off_in_its_text_says_where_the_string_starts(files):
    """json's message for an unterminated string ends in "starting at", its position apart."""
    tmp, _lines, ids = files
    path = tmp / "o.jsonl"
    path.write_text('{"doc": "doc0", "text": "a"}\n{"doc": "doc1", "text": "b\n')
    with pytest.raises(InputError) as e:
        read_system_output(str(path), ids, "ids", [True] * 3)
    assert str(e.value) == f"{path}:2: not a JSON record (Unterminated string starting at column 25)"


def test_a_model_link_score_decides_where_the_pivot_is_no_help():
    """The output paraphrases line 1, whose chrF to the pivot is too low for a 1-1 link: alone, the
    aligner does not link it to its line; a model that knows the pair links them, and it is asked
    only about the links near the chrF path, in one call."""
    pivots, sources = ["Le chat dort.", "Il pleut beaucoup ce soir."], ["The cat sleeps.", "It rains a lot tonight."]
    text = "Un félin sommeille. Il pleut beaucoup ce soir."
    ids = ["d", "d"]
    alone = align_documents([text], pivots, ids)
    # by words alone the paraphrase is no link of its own: taken into a 2-2 link with the next line
    assert [r["link"] for r in alone.records()] != ["1-1", "1-1"]
    calls = []

    def oracle(pairs):
        calls.append(list(pairs))
        right = {(sources[0], "Un félin sommeille."), (sources[1], "Il pleut beaucoup ce soir.")}
        return [1.0 if pair in right else 0.0 for pair in pairs]

    helped = align_documents([text], pivots, ids, sources=sources, link_model=oracle)
    assert [r["link"] for r in helped.records()] == ["1-1", "1-1"]
    assert helped.hypotheses == ["Un félin sommeille.", "Il pleut beaucoup ce soir."]
    assert len(calls) == 1 and helped.statistics["scored_by"] == "chrF and the model"
    with pytest.raises(InputError, match="needs the source lines"):
        align_documents([text], pivots, ids, link_model=oracle)


def test_the_model_scores_only_the_links_near_the_first_path():
    lines, ids = corpus(10, seed=7)
    sources = [f"source {k}" for k in range(len(lines))]
    asked = []

    def model(pairs):
        asked.extend(pairs)
        return [0.5] * len(pairs)

    align_documents(joined(lines, ids), noisy(lines), ids, sources=sources, link_model=model)
    sizes = [ids.count(d) for d in dict.fromkeys(ids)]  # a 1-1 path: its corridor is the diagonal +-3
    near = sum(len(dp.candidates(dp._diagonal(n, n, 3))) for n in sizes)
    band = sum(len(dp.candidates(dp._diagonal(n, n, 20))) for n in sizes)
    assert 0 < len(asked) <= near < band


def test_a_line_break_of_any_kind_never_reaches_a_hypothesis():
    """A record's text with CR LF (or CR) line breaks: the aligned file must keep one line per
    source line, whatever reads it (a CR left in a hypothesis is a line break to every reader)."""
    pivots = ["Bonjour, ça va bien aujourd'hui ?", "Au revoir."]
    for text in (
        "Bonjour,\r\nça va bien aujourd'hui ?\r\nAu revoir.",
        "Bonjour,\rça va bien aujourd'hui ?\rAu revoir.",
    ):
        a = align_documents([text], pivots, ["d", "d"], AlignOptions(language="fr"))
        assert a.hypotheses == pivots, text
        assert not any("\r" in r["output"] or "\r" in r["text"] for r in a.records())


def test_cjk_sentences_written_without_spaces_are_split():
    text = "这是第一句话。这是第二句话\uff01“这是第三句话\uff1f”最后一句。"  # fullwidth ! and ?
    for segmenter, language in [("rules", "zh"), ("rules", "xx")] + [("sentencizer", x) for x in ("xx", "ja", "zh")]:
        # spaCy's ja needs SudachiPy: the multi-language rules, with a warning
        spans = Segmenter(segmenter, language).split([text])[0]
        sentences = [text[a:b] for a, b in spans]
        assert sentences[:2] == ["这是第一句话。", "这是第二句话\uff01"] and sentences[-1] == "最后一句。", language
        assert "".join(sentences) == text, segmenter


def test_a_region_code_is_the_language_of_the_sentencizer(caplog):
    assert Segmenter("sentencizer", "pt-br").nlp.lang == "pt" and Segmenter("sentencizer", "zh_CN").nlp.lang == "zh"
    assert Segmenter("rules", "pt-br").rules.code == "pt" and Segmenter("rules", "zh_CN").rules.code == "zh"
    assert not caplog.records


def test_text_for_a_document_whose_source_is_empty_is_scored_on_its_first_line():
    """An addition where no line has a pivot: attached to the document's first line (every word
    the system wrote is scored), not dropped."""
    a = align_documents(["Bonjour.", "Texte ajouté.", "Au revoir."], ["Bonjour.", "", "", "Au revoir."], list("abbc"))
    assert a.hypotheses == ["Bonjour.", "Texte ajouté.", "", "Au revoir."]
    added = [r for r in a.records() if r["link"] == "0-1"]
    assert [(r["output"], r["attached_to"]) for r in added] == [("Texte ajouté.", 2)]
    assert [r["text"] for r in a.records() if r["link"] == "empty"] == ["Texte ajouté.", ""]


def test_a_document_line_longer_than_spacys_limit_is_split():
    """A document written as one line of over a million characters (spaCy's nlp.max_length)."""
    segmenter = Segmenter("sentencizer", "fr")
    segmenter.nlp.max_length = 50  # stands in for 1,000,000: the same refusal (E088) before
    text = " ".join(f"Le chat {k} dort." for k in range(10))
    assert len(segmenter.split([text])[0]) == 10


def test_a_merge_is_cut_with_its_closing_mark_before_the_cut_by_word_edits():
    """A comma written after a space (tokenized text) stays with the first part; the cut is where
    the fewest words differ from the two lines, even with words changed."""
    from docalign.links import cut

    text = "Il pleut , nous restons à la maison ce soir ."
    k = cut(text, "Il pleut .", "Nous restons à la maison ce soir .")
    assert (text[:k].strip(), text[k:].strip()) == ("Il pleut ,", "nous restons à la maison ce soir .")
    noisy = "Cette porte frappe balle , cette batte chat est jaune ."
    k = cut(noisy, "Cette batte frappe la balle .", "Cette batte est jaune .")
    assert noisy[:k].strip() == "Cette porte frappe balle ,"
