"""docalign's batched link costs against plain reference implementations, on random inputs: the
word edit distances of many runs from shared starts (one bit-parallel program per pair of starts)
and the chrF of runs of many texts (each made from the run before it, over the n-grams both sides
have)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from docalign import chrf as chrf_module
from docalign import dp, words
from docalign.chrf import Profile, Runs, chrf
from tests.docalign.reference import levenshtein


@pytest.mark.parametrize("chunk, rows", [(1 << 14, 1 << 21), (3, 40)])  # one batch; many small ones
def test_runs_from_shared_starts_get_each_pairs_levenshtein(chunk, rows, monkeypatch):
    """Pairs of runs of one word array, many from the same two starts (a line's pivot against 1, 2,
    .. segments from j; 1, 2, .. lines' pivots): references of more than one and two 64-bit words
    (carries between the words of a bit vector), empty runs on either side, few and many distinct
    words."""
    monkeypatch.setattr(words, "CHUNK", chunk)
    monkeypatch.setattr(words, "ROWS", rows)
    for seed in range(12):
        rng = random.Random(seed)
        vocabulary = rng.choice([2, 5, 40])
        text = np.array([rng.randrange(vocabulary) for _ in range(rng.choice([60, 400]))], dtype=np.int32)
        starts = [(rng.randrange(len(text)), rng.randrange(len(text))) for _ in range(rng.randint(1, 12))]
        pairs = []
        for ref_start, hyp_start in starts:
            for _ in range(rng.randint(1, 10)):
                pairs.append((ref_start, rng.randint(0, min(len(text) - ref_start, 200)),
                              hyp_start, rng.randint(0, min(len(text) - hyp_start, 200))))  # fmt: skip
        got = words.distances_in(text, *(np.array(column) for column in zip(*pairs, strict=True)))
        expected = [levenshtein(text[a : a + b].tolist(), text[c : c + d].tolist()) for a, b, c, d in pairs]
        assert got.tolist() == expected, seed


def test_the_last_row_of_one_program_is_the_distance_to_every_prefix():
    """One reference against every prefix of a hypothesis (one program): the distances are the
    dynamic program's last row, as ``prefix_distances`` computes it row by row."""
    rng = random.Random(3)
    ref = np.array([rng.randrange(4) for _ in range(150)], dtype=np.int32)
    hyp = np.array([rng.randrange(4) for _ in range(170)], dtype=np.int32)
    text = np.concatenate([ref, hyp])
    lengths = np.arange(len(hyp) + 1)
    got = words.distances_in(text, np.zeros_like(lengths), np.full_like(lengths, len(ref)),
                             np.full_like(lengths, len(ref)), lengths)  # fmt: skip
    assert got.tolist() == words.prefix_distances(ref, hyp).tolist()
    assert got[[0, 1, 64, 170]].tolist() == [levenshtein(ref.tolist(), hyp[:c].tolist()) for c in (0, 1, 64, 170)]


@pytest.mark.parametrize("key_bits", [62, 0])
def test_runs_of_many_texts_compared_across_sides_are_the_profiles_chrf(key_bits, monkeypatch):
    """Runs of up to 8 texts (a paragraph's sentences), lists of two sides per group (pivots,
    segments), every run of one side against every run of the other: the very floats of
    ``chrf(Profile(..), Profile(..))``, whether the runs are made in one call or some first and
    the rest later; texts of few letters repeat n-grams within and across texts."""
    monkeypatch.setattr(chrf_module, "KEY_BITS", key_bits)
    for seed in range(8):
        rng = random.Random(seed)
        letters = rng.choice(["ab c", "abcdef gh", "xyz日 "])
        lists, groups, widths, sides = [], [], [], []
        for group in range(rng.randint(1, 4)):
            for side in (0, 1):
                lists.append(["".join(rng.choice(letters) for _ in range(rng.randint(0, 12)))
                              for _ in range(rng.randint(0, 7))])  # fmt: skip
                groups.append(group)
                widths.append(rng.randint(1, 8))
                sides.append(side)
        runs = Runs(lists, groups, widths, sides=sides)
        texts = [
            (group, side, runs.text_id(k, start, count), " ".join(texts[start : start + count]))
            for k, (texts, group, side, width) in enumerate(zip(lists, groups, sides, widths, strict=True))
            for start in range(len(texts))
            for count in range(1, min(width, len(texts) - start) + 1)
        ]
        pairs = [(x, y) for x in texts for y in texts if x[0] == y[0] and x[1] == 1 and y[1] == 0]
        rng.shuffle(pairs)
        expected = [chrf(Profile(x[3]), Profile(y[3])) for x, y in pairs]
        half = len(pairs) // 2
        first = runs.scores([x[2] for x, _ in pairs[:half]], [y[2] for _, y in pairs[:half]]).tolist()
        rest = runs.scores([x[2] for x, _ in pairs[half:]], [y[2] for _, y in pairs[half:]]).tolist()
        assert first + rest == expected, seed
        again = Runs(lists, groups, widths, sides=sides)
        assert again.scores([x[2] for x, _ in pairs], [y[2] for _, y in pairs]).tolist() == expected, seed


def test_the_search_of_every_move_at_once_is_the_plain_dynamic_program():
    """``dp._search`` (every move into a row at once, every document of a width class together)
    chooses at every cell the move a plain cell-by-cell program chooses: the least cost, ties to the
    first move in ``moves`` (link costs of few values: many ties), then the additions along the row
    where they cost strictly less."""
    rng = random.Random(5)
    vocabulary = ["le", "chat", "dort", "la", "maison", ",", "."]
    documents = []
    for _ in range(6):
        n, m = rng.randint(1, 9), rng.randint(1, 12)
        documents.append(([" ".join(rng.choices(vocabulary, k=rng.randint(1, 6))) for _ in range(n)],
                          [" ".join(rng.choices(vocabulary, k=rng.randint(1, 6))) for _ in range(m)]))  # fmt: skip
    moves = (*dp.MOVES, (1, 3), (3, 2), (3, 4))
    texts = dp.Texts(documents, [(3, 4)] * len(documents))
    cells = dp._Band([dp._diagonal(len(p), len(s), rng.randint(1, 4)) for p, s in documents])
    link_cost = {
        (a, b): np.array([rng.choice([0.0, 1.0, 2.0, 3.0, np.inf]) for _ in range(cells.cells)])
        for a, b in moves
        if a and b
    }
    w = dp.Weights()
    move = dp._search(texts, np.arange(len(documents)), cells, link_cost, w, moves)
    for d, (pivots, _) in enumerate(documents):
        first = int(cells.row_start[d])
        lo, hi = cells.lo.tolist(), cells.hi.tolist()
        start = cells.cell_start.tolist()
        added = [0.0]
        for words_ in texts.words[texts.single(1, d)].tolist():
            added.append(added[-1] + (w.unlinked * words_ + w.addition))
        omitted = [w.unlinked * x + w.omission for x in texts.words[texts.single(0, d)].tolist()]
        best: dict = {}
        for i in range(len(pivots) + 1):
            r = first + i
            here, chosen = [], []
            for j in range(lo[r], hi[r] + 1):
                value, pick = (0.0 if i == 0 and j == lo[r] else np.inf), -1
                for index, (a, b) in enumerate(moves):
                    if a == 0 or i < a or not lo[r - a] <= j - b <= hi[r - a]:
                        continue
                    cost = omitted[i - a] if b == 0 else link_cost[a, b][start[r] + j - lo[r]]
                    if best[i - a, j - b] + cost < value:
                        value, pick = best[i - a, j - b] + cost, index
                here.append(value)
                chosen.append(pick)
            running = np.inf
            for k, j in enumerate(range(lo[r], hi[r] + 1)):
                running = min(running, here[k] - added[j])
                if running < here[k] - added[j]:
                    here[k], chosen[k] = running + added[j], dp.ADDITION
                best[i, j] = here[k]
                assert move[start[r] + k] == chosen[k], (d, i, j)
