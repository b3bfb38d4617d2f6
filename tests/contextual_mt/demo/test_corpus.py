"""The demo corpus generator: deterministic, and its gold annotations are consistent."""

import filecmp
import json
import re
from collections import defaultdict

import pytest

from contextual_mt.demo.corpus import AMBIGUOUS, WINDOW, generate_demo_data


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    stats = generate_demo_data(str(out), train_docs=120, valid_docs=10, test_docs=40, seed=5)
    return out, stats


def conllu_sentences(path):
    sents, cur = [], []
    for line in path.read_text().splitlines():
        if not line:
            if cur:
                sents.append(cur)
            cur = []
        elif not line.startswith("#"):
            cur.append(line.split("\t"))
    return sents


def test_deterministic(demo, tmp_path):
    out, _ = demo
    generate_demo_data(str(tmp_path), train_docs=120, valid_docs=10, test_docs=40, seed=5)
    for f in out.iterdir():
        assert filecmp.cmp(f, tmp_path / f.name, shallow=False), f.name
    other = tmp_path / "other"
    generate_demo_data(str(other), train_docs=120, valid_docs=10, test_docs=40, seed=6)
    assert (other / "train.en").read_text() != (out / "train.en").read_text()


@pytest.mark.parametrize("split", ["train", "valid", "test"])
def test_annotations_are_consistent(demo, split):
    out, stats = demo
    src = (out / f"{split}.en").read_text().splitlines()
    tgt = (out / f"{split}.fr").read_text().splitlines()
    ids = (out / f"{split}.docids").read_text().splitlines()
    align = (out / f"{split}.align").read_text().splitlines()
    src_conllu = conllu_sentences(out / f"{split}.en.conllu")
    tgt_conllu = conllu_sentences(out / f"{split}.fr.conllu")
    assert len(src) == len(tgt) == len(ids) == len(align) == len(src_conllu) == len(tgt_conllu)
    assert stats[split]["sentences"] == len(src)
    for s, t, a, sc, tc in zip(src, tgt, align, src_conllu, tgt_conllu, strict=True):
        sw, tw = s.split(), t.split()
        assert [r[1] for r in sc] == sw and [r[1] for r in tc] == tw
        for rows in (sc, tc):
            assert all(len(r) == 10 for r in rows)
            heads = [int(r[6]) for r in rows]
            assert heads.count(0) == 1 and all(0 <= h <= len(rows) for h in heads)
            assert all(
                r[3] in {"NOUN", "PROPN", "VERB", "AUX", "ADJ", "ADP", "DET", "PRON", "PUNCT", "INTJ", "NUM", "ADV"}
                for r in rows
            )
        pairs = [tuple(map(int, p.split("-"))) for p in a.split()]
        assert pairs and all(0 <= i < len(sw) and 0 <= j < len(tw) for i, j in pairs)
        assert {i for i, _ in pairs} == set(range(len(sw)))  # every source word aligned
    planted = [json.loads(text) for text in (out / f"{split}.planted.jsonl").read_text().splitlines()]
    for p in planted:
        assert tgt[p["line"] - 1].split()[p["index"]] == p["gold"]  # lines are 1-based
        assert p["alternative"] != p["gold"]
        assert tgt_conllu[p["line"] - 1][p["index"]][1] == p["gold"]
        if p["agrees_with"] is not None:  # the token it agrees with is an earlier planted one
            assert p["agrees_with"] < p["index"]
            assert any(q["line"] == p["line"] and q["index"] == p["agrees_with"] for q in planted)
    counts = defaultdict(int)
    for p in planted:
        counts[p["phenomenon"]] += 1
    assert all(counts[k] == stats[split][k] > 0 for k in ("pronouns", "formality", "lexical_choice"))


def test_planted_tokens_need_context(demo):
    """The same source sentence maps to both planted alternatives somewhere in the corpus,
    and the deciding cue lies within WINDOW previous sentences of the same document."""
    out, _ = demo
    src = (out / "train.en").read_text().splitlines()
    tgt = (out / "train.fr").read_text().splitlines()
    ids = (out / "train.docids").read_text().splitlines()
    planted = [json.loads(text) for text in (out / "train.planted.jsonl").read_text().splitlines()]
    by_phen = defaultdict(lambda: defaultdict(set))
    for p in planted:
        # the source sentence with its content word abstracted: same template, other gold
        key = (" ".join(src[p["line"] - 1].split()[:2]), p["index"])
        by_phen[p["phenomenon"]][key].add(p["gold"].lower())
    assert any(len(golds) == 2 for golds in by_phen["pronouns"].values())
    assert any(len(golds) == 2 for golds in by_phen["formality"].values())
    for noun in AMBIGUOUS:
        assert len(by_phen["lexical_choice"][(f"This {noun}", 1)]) == 2
    for p in planted:
        line = p["line"] - 1
        window = [tgt[j] for j in range(max(0, line - WINDOW), line) if ids[j] == ids[line]]
        if p["phenomenon"] == "pronouns":
            gender_cue = {"il": r"\ble\b", "elle": r"\bla\b"}[p["gold"].lower()]
            assert re.search(gender_cue, window[-1]), (window, tgt[line])
        elif p["phenomenon"] == "formality":
            formal = p["gold"].lower() in ("vous",) or p["gold"].endswith("ez")
            cue = r"monsieur|\bVous\b" if formal else r"mon ami|\bTu\b"
            assert any(re.search(cue, w) for w in window), (window, tgt[line])
        else:
            assert any(p["gold"] in w for w in window), (window, tgt[line])


def test_coreference_entities_balanced(demo):
    out, _ = demo
    text = (out / "test.en.conllu").read_text()
    opened = re.findall(r"Entity=\(e(\d+)-object(?!\))", text)
    closed = re.findall(r"Entity=e(\d+)\)", text)
    singles = re.findall(r"Entity=\(e(\d+)-object\)", text)
    assert sorted(opened) == sorted(closed) and singles
    # every pronoun "It" of a planted pronoun sentence is a mention
    for sent in conllu_sentences(out / "test.en.conllu"):
        if sent[0][1] == "It":
            assert sent[0][9].startswith("Entity=(e")
