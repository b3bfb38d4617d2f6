"""Aligning without a reference (``--pivot none``): IBM Model 1 learned from tiny parallel data, its
cache beside the data (kept while the data is unchanged, learned again otherwise), and the gloss
(``contextual-mt align --pivot none``: tests/contextual_mt/test_align_no_reference.py)."""

from __future__ import annotations

import json

import pytest

import docalign.lexical.model1 as model1
from docalign.lexical.gloss import gloss, gloss_lines
from docalign.lexical.model1 import Table, lexical_table, table_path, train

# a tiny parallel corpus: each word seen in several contexts, so that EM can tell them apart
NOUNS = [("cat", "chat"), ("dog", "chien"), ("house", "maison"), ("car", "voiture"), ("bread", "pain")]
VERBS = [("sees", "voit", "."), ("likes", "aime", "."), ("wants", "veut", "!")]
SUBJECTS = [("Paul", "Paul"), ("Anna", "Anna"), ("my friend", "mon ami")]


def corpus():
    en, fr = [], []
    for s_en, s_fr in SUBJECTS:
        for v_en, v_fr, end in VERBS:
            for n_en, n_fr in NOUNS:
                en.append(f"{s_en} {v_en} the {n_en} {end}")
                fr.append(f"{s_fr} {v_fr} le {n_fr} {end}")
    return en, fr


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_model1_learns_which_word_translates_which():
    translations = train(*corpus())
    for en, fr in NOUNS + [(v[0], v[1]) for v in VERBS] + [("the", "le"), (".", ".")]:
        assert translations[en][0][0] == fr, (en, translations[en])
    assert all(p <= 1.0 for best in translations.values() for _, p in best)
    # "my friend" is always "mon ami": Model 1 cannot tell which word is which, and says so (a tie)
    (f1, p1), (f2, p2) = translations["friend"][:2]
    assert {f1, f2} == {"mon", "ami"} and p1 == pytest.approx(p2)


def test_the_gloss_translates_known_words_and_keeps_the_others():
    table = Table(train(*corpus()), "")
    assert gloss("Anna sees the car .", table) == "Anna voit le voiture ."
    assert gloss("so Anna sees my friend", table) == "so Anna voit mon ami"  # a name keeps its capital
    assert gloss("Bob sees 3 dogs", table) == "Bob voit 3 dogs"  # unknown words kept as written
    assert gloss_lines(["", "the cat"], table) == ["", "le chat"]


def test_the_table_is_cached_beside_its_data_and_learned_again_when_the_data_changes(tmp_path, monkeypatch):
    en, fr = corpus()
    src, tgt = write(tmp_path / "train.en", en), write(tmp_path / "train.fr", fr)
    first = lexical_table(src, tgt)
    cache = tmp_path / "train.en-train.fr.model1.json"
    assert table_path(src, tgt) == str(cache) and cache.exists()
    assert json.loads(cache.read_text(encoding="utf-8"))["fingerprint"] == first.fingerprint

    calls = []
    real_train = model1.train
    monkeypatch.setattr(model1, "train", lambda *a, **k: calls.append(1) or real_train(*a, **k))
    assert lexical_table(src, tgt).translations == first.translations and calls == []  # read from the cache

    write(tmp_path / "train.fr", [line.replace("chat", "minou") for line in fr])  # other data: learned again
    changed = lexical_table(src, tgt)
    assert calls == [1] and changed.translations["cat"][0][0] == "minou"
    assert changed.fingerprint != first.fingerprint

    cache.write_text("{not json", encoding="utf-8")  # a damaged cache: learned again, never an error
    assert lexical_table(src, tgt).translations == changed.translations and calls == [1, 1]


def test_a_corpus_whose_sides_differ_in_length_is_one_line(tmp_path):
    en, fr = corpus()
    src, tgt = write(tmp_path / "a.en", en), write(tmp_path / "a.fr", fr[:-1])
    with pytest.raises(Exception, match=r"a.fr: 44 lines, but .*a.en has 45: not a parallel corpus"):
        lexical_table(src, tgt)
    assert not (tmp_path / "a.en-a.fr.model1.json").exists()
