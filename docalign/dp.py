"""The banded monotonic dynamic program that links output segments to source lines.

Links take 1 or 2 source lines and 0 or more segments, or 1 segment and no line: 1-1, 1-0
(an omission), 0-1 (an addition), 1-2 (a split), 2-1 (a merge), 2-2, and where a line's pivot
holds several sentences (a paragraph) 1-b and 2-b up to one more segment than the lines' pivots
have sentences (``most_segments``). A link of a lines and
b segments costs ``(a + b) / 2 * (1 - chrF)`` between the lines' sentence-level translations (the
pivot) and the segments, plus a fixed cost per link type and a Gale-Church length cost (the
pivot's length against the segments'); an omission costs ``omission``, an addition ``addition``. The path of
least cost is searched in a band of ``band`` segments either side of the diagonal (line i of n
against segment i * m / n of m), so the work grows with the document's length, not its square;
where the best path touches the band's edge, the band is doubled and the search run again.
All documents are searched together (``align_many``): their candidate links' chrF (``Runs``,
by windows of a long document's lines) and word edits (``words.distances``) in one batch, and
row i of every document's band (line boundary i) at once with numpy; the costs are the same
floats as one link at a time would give.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from docalign import words
from docalign.chrf import Runs, run_index
from docalign.words import Vocabulary

MOVES = ((1, 1), (1, 0), (0, 1), (1, 2), (2, 1), (2, 2))  # (lines, segments); ties go to the first
Move = Tuple[int, int]


MOST_LINES = 8  # the most lines of one link (only lines that run on into each other take more than 2)


@dataclass(frozen=True)
class LineSentences:
    """Per line of a document, from its pivot (or its source): the sentences the output's
    segmenter finds in it, and whether its last runs on into the next line's first when the two
    are joined (no sentence end: a headline, a post without a full stop), as in the output."""

    counts: Sequence[int]
    runs_on: Sequence[bool]

    @staticmethod
    def one_each(n: int) -> LineSentences:
        return LineSentences([1] * n, [False] * n)


def link_shape(lines: LineSentences, i: int, a: int) -> Optional[Tuple[int, bool]]:
    """A link of lines ``i`` to ``i + a``: the segments it expects (its lines' sentences, less
    one where a line runs on into the next), and whether every line of it runs on into the next
    (the segmenter could not split them apart: their merge is no error of the output). None where
    no link may take them: more than 2 lines, not all running on."""
    inner = lines.runs_on[i : i + a - 1]
    if a > 2 and not all(inner):
        return None
    return sum(max(1, c) for c in lines.counts[i : i + a]) - sum(inner), a > 1 and all(inner)


def segment_counts(a: int, expected: int) -> List[int]:
    """The segments a link of ``a`` lines expecting ``expected`` may take: 1 and 2 (a merge, a
    split), and from half the expected to one more (a sentence split in two: another one is an
    addition) for one line, to the expected for several."""
    top = expected + 1 if a == 1 else expected
    return sorted({1, 2} | set(range(max(1, -(-expected // 2)), top + 1)))


def fixed_cost(a: int, b: int, expected: int, runs_on: bool, w: Weights) -> float:
    """A link of the expected number of segments costs nothing for one line or lines that run
    on, ``two_two`` for lines the output merged; any other number ``split_merge``."""
    if b != expected:
        return w.split_merge
    return 0.0 if a == 1 or runs_on else w.two_two


@dataclass(frozen=True)
class Weights:
    """The costs of the dynamic program, in words: a link costs the word edits between its
    segments and its pivot (mwerSegmenter's measure), plus ``similarity`` x its mean length in
    words x (1 - chrF), plus a fixed cost per link type; an omission or an addition costs its
    words as deletions or insertions, with chrF's share, plus its fixed cost."""

    # chosen on the demo's test split with word noise 0-0.5 (bench/alignment_versus.py)
    similarity: float = 0.5  # chrF's weight per word: a near output, and where word edits tie
    # per word of an omitted line or an added segment, as mwerSegmenter counts them (deletions,
    # insertions): at 0.45-0.8 a noisy link (half its words changed) became an omission and an
    # addition (exact lines 0.78-0.96 at noise 0.5 against 0.97 at 1.0); at 1.25 with 1.0 per
    # omission or addition, additions were missed (F1 0.72-0.84 against 0.84-0.94)
    unlinked: float = 1.0
    omission: float = 0.5  # on top of its words
    # chrF under which a link is unrelated (its words share next to nothing, "Un félin sommeille." and
    # "Le chat dort."): it costs more than its lines omitted and its segments added, so that chrF,
    # not the count of substituted words, decides where a link is not one
    unrelated: float = 0.15
    addition: float = 0.5
    # a link of as many segments as its lines' pivots have sentences is expected (a 1-1 link of
    # one-sentence lines, 1-3 of a three-sentence paragraph): one line with another number of
    # segments costs ``split_merge`` (1-2 of a one-sentence line), two lines ``split_merge``, or
    # ``two_two`` with the expected number (2-2 of two one-sentence lines: a cut inside a segment)
    split_merge: float = 3.0
    two_two: float = 3.0  # (6.0: exact lines 0.973 against 0.993 at noise 0.3)
    length: float = 0.0  # per unit of Gale-Church's -log P(length difference); word edits already count length
    # with a model's link scores, their share of the similarity (chrF has the rest): on the validation split
    # 0.1 and 0.25 linked 0.9976-1.000 of the lines, 0.5 0.9927-0.9976 (chrF alone 0.9976)
    model: float = 0.25
    variance: float = 6.8  # Gale-Church's s^2: variance of the length difference per character
    # word edits a cut of a merge at the end of one of the output's sentences is worth (docalign.links:
    # the cut, the parts given to omitted lines). Against a reference the parts' word edits place the
    # cut (0: the sentence end a tie-break); a gloss shares few words with the output, so a few edits
    # more or less are chance and the output's own sentence end is the better evidence
    # (docalign.lexical.gloss's WEIGHTS)
    sentence_end: float = 0.0


@dataclass(frozen=True)
class Link:
    """``lines`` (start, count) of the document's lines with ``segments`` (start, count) of its
    segments; ``score``: their chrF (None for an omission or an addition)."""

    lines: Tuple[int, int]
    segments: Tuple[int, int]
    score: Optional[float]

    @property
    def kind(self) -> str:
        return f"{self.lines[1]}-{self.segments[1]}"


def length_cost(a: int, b: int, variance: float) -> float:
    """Gale-Church: -log P(|delta|) of the length difference, the lengths of one language."""
    if a + b == 0:
        return 0.0
    delta = abs(b - a) / math.sqrt(variance * (a + b) / 2)
    return -math.log(max(math.erfc(delta / math.sqrt(2)), 1e-12))


Key = Tuple[int, int, int, int]  # a candidate link: (first line, lines, first segment, segments)
Corridor = Tuple[List[int], List[int]]  # per line boundary 0..n: the lowest and highest segment boundary


def align(
    pivots: Sequence[str],
    segments: Sequence[str],
    band: int = 20,
    weights: Weights = Weights(),
    model: Optional[Mapping[Key, float]] = None,
    corridor: Optional[Corridor] = None,
    sentences: Optional[LineSentences] = None,
) -> List[Link]:
    """The least-cost monotonic links of ``pivots`` (one per source line) and ``segments``.
    ``model``: a model's similarity of candidate links (``candidates``), mixed with their chrF;
    the search then stays in ``corridor`` (``corridor_of`` a first path). ``sentences``: each
    pivot's sentences (default one each, none running on): a link expects as many segments."""
    return align_many(
        [(pivots, segments)],
        band,
        weights,
        None if model is None else [model],
        [corridor],
        None if sentences is None else [sentences],
    )[0]


class Texts:
    """Every document's pivots and segments, and runs of them joined (up to ``widths[d]``: the
    most lines and segments of a link, 2 and 2 by default; ``chrf.run_index`` numbers them): their
    words (``words.Vocabulary``), word counts and lengths."""

    def __init__(
        self, documents: Sequence[Tuple[Sequence[str], Sequence[str]]], widths: Sequence[Tuple[int, int]] = ()
    ) -> None:
        self.documents = documents
        lists = [texts for pair in documents for texts in pair]
        self.line_count = [len(pivots) for pivots, _ in documents]
        self.segment_count = [len(segments) for _, segments in documents]
        self.widths = [w for d in range(len(documents)) for w in (widths[d] if widths else (2, 2))]  # per list
        self.base, first, last = run_index([len(texts) for texts in lists], self.widths)
        # every text's words, one after another: a run of texts is a run of them too
        single = Vocabulary().encode_all([t for texts in lists for t in texts])
        self.tokens = np.concatenate(single) if single else np.zeros(0, dtype=np.int32)
        counts = np.array([len(t) for t in single], dtype=np.int64)
        total = np.concatenate([[0], np.cumsum(counts)])
        self.token_start = total[first]
        self.token_count = total[last] - total[first]
        self.words = self.token_count.astype(float)
        chars = np.array([len(t) for texts in lists for t in texts], dtype=np.int64)
        char_total = np.concatenate([[0], np.cumsum(chars)])
        self.chars = (char_total[last] - char_total[first] + (last - first - 1)).tolist()  # joined by a space
        self.first = np.cumsum([0, *(len(texts) for texts in lists)])[:-1]

    def ids(self, side: int, docs: np.ndarray, start: np.ndarray, count: np.ndarray) -> np.ndarray:
        """The text ids of ``count`` texts from ``start`` of the documents' pivots (side 0) or segments (1)."""
        return self.base[self.first[2 * docs + side] + start] + count - 1

    def single(self, side: int, doc: int) -> np.ndarray:
        """The text ids of the document's pivots (side 0) or segments (1), one each."""
        size = (self.line_count if side == 0 else self.segment_count)[doc]
        return self.base[self.first[2 * doc + side] + np.arange(size)]


class _Band:
    """The cells of several documents' bands, one flat array: row i of document d (line boundary i)
    holds its segment boundaries ``lo[d][i]`` to ``hi[d][i]``."""

    def __init__(self, bands: Sequence[Corridor]) -> None:
        self.rows = [len(lo) for lo, _ in bands]  # n + 1 per document
        self.row_start = np.cumsum([0, *self.rows])[:-1]
        self.lo = np.array([x for lo, _ in bands for x in lo], dtype=np.int64)
        self.hi = np.array([x for _, hi in bands for x in hi], dtype=np.int64)
        width = self.hi - self.lo + 1
        self.cell_start = np.cumsum(width) - width  # each row's first cell
        self.cells = int(width.sum())
        row = np.repeat(np.arange(len(width)), width)
        self.row = row
        self.doc = np.repeat(np.arange(len(bands)), self.rows)[row]
        self.i = row - self.row_start[self.doc]
        self.j = self.lo[row] + np.arange(self.cells) - self.cell_start[row]


def align_many(
    documents: Sequence[Tuple[Sequence[str], Sequence[str]]],
    band: int = 20,
    weights: Weights = Weights(),
    models: Optional[Sequence[Mapping[Key, float]]] = None,
    corridors: Optional[Sequence[Optional[Corridor]]] = None,
    sentences: Optional[Sequence[LineSentences]] = None,
) -> List[List[Link]]:
    """``align`` of each document's (pivots, segments): all documents' candidate links costed
    together (their chrF and word edits in one batch) and searched together, row by row."""
    lines = list(sentences) if sentences is not None else [LineSentences.one_each(len(p)) for p, _ in documents]
    if [len(x.counts) for x in lines] != [len(p) for p, _ in documents]:
        raise ValueError("one sentence count per pivot")
    shapes = [_shapes(x) for x in lines]
    used = {(a, b) for doc in shapes for (_, a), (e, _) in doc.items() for b in segment_counts(a, e)}
    moves = MOVES + tuple(sorted(used - set(MOVES)))
    texts = Texts(documents, [_widths(doc) for doc in shapes])
    result: List[List[Link]] = [[] for _ in documents]
    pending: Dict[int, Corridor] = {}  # document: the band or corridor to search
    known: Dict[int, Tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # links costed in a narrower band
    widths: Dict[int, int] = {}
    for d, (pivots, segments) in enumerate(documents):
        n, m = len(pivots), len(segments)
        if n == 0 or m == 0:
            result[d] = [Link((i, 1), (0, 0), None) for i in range(n)] + [Link((n, 0), (j, 1), None) for j in range(m)]
        elif corridors is not None and corridors[d] is not None:
            pending[d] = reachable(corridors[d], n, m)  # type: ignore[arg-type]
        else:
            widths[d] = max(band, 1)
            pending[d] = _diagonal(n, m, widths[d])
    while pending:
        docs = sorted(pending)
        found = _solve(
            texts, docs, [pending[d] for d in docs], weights, models, known, moves, [shapes[d] for d in docs]
        )
        pending = {}
        for d, (links, touched) in zip(docs, found, strict=True):
            n, m = len(documents[d][0]), len(documents[d][1])
            if d in widths and touched and widths[d] < max(n, m):
                widths[d] *= 2  # the path touched the band's edge: searched again in one twice as wide
                pending[d] = _diagonal(n, m, widths[d])
            else:
                result[d] = links
    return result


def _solve(
    texts: Texts,
    docs: Sequence[int],
    bands: Sequence[Corridor],
    w: Weights,
    models: Optional[Sequence[Mapping[Key, float]]],
    known: Dict[int, Tuple[np.ndarray, np.ndarray, np.ndarray]],
    moves: Sequence[Move],
    shapes: Sequence[Shapes],
) -> List[Tuple[List[Link], bool]]:
    """The best path of each of ``docs`` in its band, and whether it touches the band's edge;
    ``known``: per document, the links costed so far (codes sorted, costs, similarities), kept here
    for a document whose path touches the edge (its band is widened)."""
    cells = _Band(bands)
    doc_ids = np.asarray(docs, dtype=np.int64)
    links = [(a, b) for a, b in moves if a and b]  # the moves that pair lines with segments
    # per band row (line boundary i of a document) and number of lines a: the segments a link of
    # lines i to i + a expects (-1: no such link), and whether its lines run on
    most = max(a for a, _ in links)
    expect = {a: np.full(cells.row.max(initial=0) + 2, -1, dtype=np.int64) for a in range(1, most + 1)}
    runs_on = {a: np.zeros(len(expect[a]), dtype=bool) for a in expect}
    for first, shape in zip(cells.row_start.tolist(), shapes, strict=True):
        for (i, a), (e, on) in shape.items():
            expect[a][first + i], runs_on[a][first + i] = e, on
    # every candidate link, by the cell where it ends: (i - a, a, j - b, b) ending at (i, j)
    ends, keys = [], []
    for a, b in links:
        prev = np.maximum(cells.row - a, 0)
        ok = (cells.i >= a) & (cells.j - b >= cells.lo[prev]) & (cells.j - b <= cells.hi[prev])
        e = expect[a][prev]
        top = np.where(a == 1, e + 1, e)
        ok &= (e >= 0) & ((b <= 2) | ((b >= (e + 1) // 2) & (b <= top)))  # segment_counts
        at = np.nonzero(ok)[0]
        ends.append(at)
        keys.append((cells.doc[at], cells.i[at] - a, cells.j[at] - b, a, b, e[at], runs_on[a][prev[at]]))
    d = np.concatenate([k[0] for k in keys])
    i = np.concatenate([k[1] for k in keys])
    j = np.concatenate([k[2] for k in keys])
    a = np.concatenate([np.full(len(k[0]), k[3]) for k in keys])
    b = np.concatenate([np.full(len(k[0]), k[4]) for k in keys])
    expected = np.concatenate([k[5] for k in keys])
    merged_on = np.concatenate([k[6] for k in keys])
    # a link costed in a narrower band of the same document is not costed again
    segments = np.array([texts.segment_count[k] for k in docs], dtype=np.int64)
    most_lines = np.array([texts.widths[2 * k] for k in docs], dtype=np.int64)[d]
    most_segments = np.array([texts.widths[2 * k + 1] for k in docs], dtype=np.int64)[d]
    codes = ((i * most_lines + a - 1) * (segments[d] + 1) + j) * most_segments + b - 1
    cost, c = np.empty(len(d)), np.empty(len(d))
    todo = np.ones(len(d), dtype=bool)
    for k, doc in enumerate(docs):
        if doc in known and len(known[doc][0]):
            at = np.nonzero(d == k)[0]
            done_codes, done_cost, done_c = known[doc]
            where = np.minimum(np.searchsorted(done_codes, codes[at]), len(done_codes) - 1)
            hit = done_codes[where] == codes[at]
            cost[at[hit]], c[at[hit]] = done_cost[where[hit]], done_c[where[hit]]
            todo[at[hit]] = False
    new = np.nonzero(todo)[0]
    cost[new], c[new] = _costs(
        texts, docs, bands, w, models, d[new], i[new], a[new], j[new], b[new], expected[new], merged_on[new]
    )
    link_cost, link_score = {}, []
    start = 0
    for at, link in zip(ends, links, strict=True):
        full, score = np.full(cells.cells, np.inf), np.zeros(cells.cells)
        full[at], score[at] = cost[start : start + len(at)], c[start : start + len(at)]
        link_cost[link] = full
        link_score.append(score)
        start += len(at)
    move = _search(texts, doc_ids, cells, link_cost, w, moves)
    out = []
    chosen, scores = move.tolist(), [s.tolist() for s in link_score]
    lo, hi, cell_start = cells.lo.tolist(), cells.hi.tolist(), cells.cell_start.tolist()
    for k, first in enumerate(cells.row_start.tolist()):
        n, m = cells.rows[k] - 1, hi[first + cells.rows[k] - 1]
        path: List[Link] = []
        touched = False
        y, x = n, m
        while y or x:
            r = first + y
            if (x == lo[r] and lo[r] > 0) or (x == hi[r] and hi[r] < m):
                touched = True
            cell = cell_start[r] + x - lo[r]
            p, q = moves[chosen[cell]]
            y, x = y - p, x - q
            path.append(Link((y, p), (x, q), scores[links.index((p, q))][cell] if p and q else None))
        path.reverse()
        out.append((path, touched))
        if touched:
            at = np.nonzero(d == k)[0]
            order = np.argsort(codes[at])
            known[docs[k]] = (codes[at][order], cost[at][order], c[at][order])
    return out


def _costs(
    texts: Texts,
    docs: Sequence[int],
    bands: Sequence[Corridor],
    w: Weights,
    models: Optional[Sequence[Mapping[Key, float]]],
    d: np.ndarray,
    i: np.ndarray,
    a: np.ndarray,
    j: np.ndarray,
    b: np.ndarray,
    expected: np.ndarray,
    merged_on: np.ndarray,
) -> Tuple[np.ndarray, np.ndarray]:
    """The cost and the similarity of each candidate link (``d``: the document's index in ``docs``;
    ``expected``, ``merged_on``: its ``link_shape``)."""
    doc_ids = np.asarray(docs, dtype=np.int64)
    refs = texts.ids(0, doc_ids[d], i, a)
    hyps = texts.ids(1, doc_ids[d], j, b)
    c = _chrf(texts, docs, bands, d, i, a, j, b)
    if models is not None:  # a model's similarity, mixed in where it scored the link
        mixed = [
            models[docs[x]].get((y, p, z, q))
            for x, y, p, z, q in zip(*(v.tolist() for v in (d, i, a, j, b)), strict=True)
        ]
        scored = np.array([v is not None for v in mixed], dtype=bool)
        if scored.any():
            model = np.array([v for v in mixed if v is not None], dtype=float)
            c[scored] = (1 - w.model) * c[scored] + w.model * model
    edits = words.distances_in(
        texts.tokens, texts.token_start[refs], texts.token_count[refs], texts.token_start[hyps], texts.token_count[hyps]
    )
    # the operations of one link's cost in their order, so that every cost is the same float
    size = (texts.words[refs] + texts.words[hyps]) / 2
    extra = np.where(b != expected, w.split_merge, np.where((a == 1) | merged_on, 0.0, w.two_two))  # fixed_cost
    if w.length:
        lengths = np.array(
            [
                length_cost(texts.chars[r], texts.chars[h], w.variance)
                for r, h in zip(refs.tolist(), hyps.tolist(), strict=True)
            ]
        )
    else:
        lengths = np.zeros(len(c))
    cost = edits + w.similarity * size * (1 - c) + extra + w.length * lengths
    unrelated = c < w.unrelated  # no better than leaving them unlinked: omissions and additions
    unlinked = w.unlinked * 2 * size + w.omission * a + w.addition * b
    cost = np.where(unrelated, np.maximum(cost, unlinked + UNRELATED), cost)
    return cost, c


WINDOW = 64  # lines: the n-grams of a long document are numbered per window of its band
BATCH = 1 << 21  # characters of the windows whose n-grams are held at once


def _chrf(
    texts: Texts,
    docs: Sequence[int],
    bands: Sequence[Corridor],
    d: np.ndarray,
    i: np.ndarray,
    a: np.ndarray,
    j: np.ndarray,
    b: np.ndarray,
) -> np.ndarray:
    """The chrF of the candidate links (``d``: the index in ``docs``). A text's n-gram bitset
    (``Runs``) is as wide as the n-grams of its group, so a long document is cut into windows of
    ``WINDOW`` lines, each with the segments its links can reach, numbered apart (linear work in the
    document's length, not its square); windows of about ``BATCH`` characters at a time."""
    windows: List[Tuple[int, int, int, int, int]] = []  # (document in docs, first line, lines, first segment, segments)
    first_window = []
    for k, (lo, hi) in enumerate(bands):
        pivots, segments = texts.documents[docs[k]]
        n = len(lo) - 1
        first_window.append(len(windows))
        most = texts.widths[2 * docs[k]]  # lines of a link
        for i0 in range(0, n, WINDOW):  # links starting at lines i0.. i0 + WINDOW - 1
            j0, j1 = min(lo[i0 : i0 + WINDOW]), max(hi[i0 : i0 + WINDOW + most])
            windows.append((k, i0, min(n, i0 + WINDOW + most - 1) - i0, j0, j1 - j0))
    window = np.array(first_window, dtype=np.int64)[d] + i // WINDOW
    sizes = [  # the characters of the window's runs, at most
        sum(map(len, texts.documents[docs[k]][0][i0 : i0 + lines])) * texts.widths[2 * docs[k]]
        + sum(map(len, texts.documents[docs[k]][1][j0 : j0 + segs])) * texts.widths[2 * docs[k] + 1]
        for k, i0, lines, j0, segs in windows
    ]
    out = np.zeros(len(d))
    start = 0
    while start < len(windows):
        end, held = start + 1, sizes[start]
        while end < len(windows) and held + sizes[end] <= BATCH:
            held += sizes[end]
            end += 1
        chosen = windows[start:end]
        lists = []
        for k, i0, lines, j0, segs in chosen:
            pivots, segments = texts.documents[docs[k]]
            lists += [pivots[i0 : i0 + lines], segments[j0 : j0 + segs]]
        widths = [texts.widths[2 * docs[w[0]] + side] for w in chosen for side in (0, 1)]
        runs = Runs(lists, [x // 2 for x in range(len(lists))], widths, sides=[x % 2 for x in range(len(lists))])
        at = np.nonzero((window >= start) & (window < end))[0]
        local = window[at] - start
        first = np.array(runs.first, dtype=np.int64)
        line0 = np.array([w[1] for w in chosen], dtype=np.int64)[local]
        seg0 = np.array([w[3] for w in chosen], dtype=np.int64)[local]
        hyps = runs.base[first[2 * local + 1] + j[at] - seg0] + b[at] - 1
        refs = runs.base[first[2 * local] + i[at] - line0] + a[at] - 1
        out[at] = link_chrf(runs, hyps.tolist(), refs.tolist())
        start = end
    return out


def link_chrf(runs: Runs, hyps: Sequence[int], refs: Sequence[int]) -> np.ndarray:
    """The chrF of candidate links: their segments (``hyps``) against their lines' pivots (``refs``)."""
    return runs.scores(hyps, refs)


def reachable(corridor: Corridor, n: int, m: int) -> Corridor:
    """``corridor`` widened so that its last cell (n, m) can be reached from its first (0, 0):
    both edges never fall back, the first row starts at 0 and the last ends at m, and each row
    begins no later than the row before ends (an omission steps from one to the next; additions
    then walk along the row). Where the output has many more sentences per line than the band is
    wide, the rows stretch to the slope: the cells stay about m + n x (2 band + 1)."""
    lo = [min(max(x, 0), m) for x in corridor[0]]
    hi = [min(max(x, 0), m) for x in corridor[1]]
    lo[0], hi[n] = 0, m
    for i in range(1, n + 1):
        hi[i] = max(hi[i], hi[i - 1])
    for i in range(n - 1, -1, -1):
        lo[i] = min(lo[i], lo[i + 1])
    for i in range(1, n + 1):
        lo[i] = min(lo[i], hi[i - 1])
    return lo, hi


def _diagonal(n: int, m: int, width: int) -> Corridor:
    lo = [max(0, math.floor(i * m / n) - width) for i in range(n + 1)]
    hi = [min(m, math.ceil(i * m / n) + width) for i in range(n + 1)]
    return reachable((lo, hi), n, m)


def corridor_of(links: Sequence[Link], m: int, radius: int = 2) -> Corridor:
    """The segment boundaries within ``radius`` of a path's, at every line boundary."""
    n = sum(link.lines[1] for link in links)
    lo, hi = [m] * (n + 1), [0] * (n + 1)
    for link in links:
        (i, a), (j, b) = link.lines, link.segments
        for r in range(i, i + a + 1):
            lo[r], hi[r] = min(lo[r], max(0, j - radius)), max(hi[r], min(m, j + b + radius))
    return reachable((lo, hi), n, m)


def candidates(corridor: Corridor, lines: Optional[LineSentences] = None) -> List[Key]:
    """Every link of lines and segments (1-1, 1-2, 2-1, 2-2, and those ``segment_counts`` allows
    a link of the ``lines``, one sentence each by default) whose two ends lie in the corridor."""
    lo, hi = corridor
    n = len(lo) - 1
    m = hi[-1]
    shapes = _shapes(lines if lines is not None else LineSentences.one_each(n))
    return [
        (i, a, j, b)
        for i in range(n)
        for j in range(lo[i], hi[i] + 1)
        for a in range(1, MOST_LINES + 1)
        if (i, a) in shapes
        for b in segment_counts(a, shapes[i, a][0])
        if j + b <= m and lo[i + a] <= j + b <= hi[i + a]
    ]


Shapes = Dict[Tuple[int, int], Tuple[int, bool]]  # (first line, lines): link_shape


def _shapes(lines: LineSentences) -> Shapes:
    n = len(lines.counts)
    out: Shapes = {}
    for i in range(n):
        for a in range(1, min(MOST_LINES, n - i) + 1):
            shape = link_shape(lines, i, a)
            if shape is None:
                break
            out[i, a] = shape
    return out


def _widths(shapes: Shapes) -> Tuple[int, int]:
    """The most lines and the most segments of a document's links."""
    return (
        max([a for _, a in shapes] + [2]),
        max([max(segment_counts(a, e)) for (_, a), (e, _) in shapes.items()] + [2]),
    )


ADDITION = MOVES.index((0, 1))  # the same index in every ``moves_up_to``
UNRELATED = 1e-3  # an unrelated link costs this much more than leaving its lines and segments unlinked


def _search(
    texts: Texts,
    docs: np.ndarray,
    cells: _Band,
    link_cost: Mapping[Move, np.ndarray],
    w: Weights,
    moves: Sequence[Move],
) -> np.ndarray:
    """The move that reaches every cell at the least cost: row by row (a line
    boundary), every cell of the row of every document at once (a row of documents x the widest
    row); the additions, which step along a row, by a running minimum: best[j] = min over k <= j of
    (reached[k] + the cost of adding segments k..j-1), with the costs' running sum ``added``."""
    best = np.full(cells.cells, np.inf)
    move = np.full(cells.cells, -1, dtype=np.int8)
    rows = np.array(cells.rows)
    # per document: the running sum of its additions' costs, and its lines' omission costs
    added, added_start, omitted = [], [], []
    at = 0
    for d in docs.tolist():
        counts = texts.words[texts.single(1, d)]
        added.append(np.concatenate([[0.0], np.cumsum(w.unlinked * counts + w.addition)]))
        added_start.append(at)
        at += len(added[-1])
        omitted.append(w.unlinked * texts.words[texts.single(0, d)] + w.omission)
    added_all = np.concatenate(added)
    added_first = np.array(added_start, dtype=np.int64)
    omitted_all = np.concatenate([*omitted, np.zeros(1)])
    omitted_first = np.cumsum([0] + [len(o) for o in omitted])[:-1]
    # documents of like widths together (a row is padded to the widest), by rows, most first:
    # those that have row i are a prefix
    widths = np.maximum.reduceat(cells.hi - cells.lo + 1, cells.row_start)
    for kind in np.unique(np.log2(widths).astype(np.int64)).tolist():
        alike = np.nonzero(np.log2(widths).astype(np.int64) == kind)[0]
        _rows(cells, alike[np.argsort(-rows[alike], kind="stable")], rows, best, move, link_cost, moves, added_all,
              added_first, omitted_all, omitted_first)  # fmt: skip
    return move


def _rows(
    cells: _Band,
    order: np.ndarray,
    rows: np.ndarray,
    best: np.ndarray,
    move: np.ndarray,
    link_cost: Mapping[Move, np.ndarray],
    moves: Sequence[Move],
    added_all: np.ndarray,
    added_first: np.ndarray,
    omitted_all: np.ndarray,
    omitted_first: np.ndarray,
) -> None:
    """``_search`` of the documents ``order`` (by rows, most first), filling ``best`` and ``move``."""
    # the moves that take lines, as arrays: (index in ``moves``, lines, segments)
    taking = [(m_index, a, b) for m_index, (a, b) in enumerate(moves) if a]
    move_index = np.array([m for m, _, _ in taking], dtype=np.int8)
    move_a = np.array([a for _, a, _ in taking], dtype=np.int64)
    move_b = np.array([b for _, _, b in taking], dtype=np.int64)
    for i in range(int(rows[order[0]])):
        active = order[: int(np.searchsorted(-rows[order], -i - 1, side="right"))]
        r = cells.row_start[active] + i
        lo, hi = cells.lo[r], cells.hi[r]
        width = hi - lo + 1
        k = np.arange(int(width.max()))
        inside = k < width[:, None]
        j = lo[:, None] + k
        flat = np.where(inside, cells.cell_start[r][:, None] + k, 0)
        here = np.full(inside.shape, np.inf)
        row_move = np.full(inside.shape, -1, dtype=np.int8)
        if i == 0:
            here[:, 0] = 0.0
        usable = np.nonzero(move_a <= i)[0]
        if len(usable):  # every move into the row at once (moves x documents x cells): the least, ties to the first
            a, b = move_a[usable][:, None, None], move_b[usable][:, None, None]
            pr = r[None, :, None] - a
            plo, phi = cells.lo[pr], cells.hi[pr]
            ok = inside[None] & (j[None] - b >= plo) & (j[None] - b <= phi)
            before = np.where(ok, best[np.where(ok, cells.cell_start[pr] + j[None] - b - plo, 0)], np.inf)
            omission = omitted_all[omitted_first[active][None, :, None] + i - a]
            link = np.stack([link_cost[moves[m]][flat] if moves[m][1] else flat * 0.0 for m in move_index[usable]])
            c = before + np.where(b == 0, omission, np.where(ok, link, np.inf))
            first = np.argmin(c, axis=0)
            least = np.take_along_axis(c, first[None], axis=0)[0]
            better = least < here
            here[better], row_move[better] = least[better], move_index[usable][first][better]
        gathered = added_all[np.where(inside, added_first[active][:, None] + j, 0)]
        shifted = here - gathered
        running = np.minimum.accumulate(shifted, axis=1)
        by_addition = (running < shifted) & inside
        here = np.where(by_addition, running + gathered, here)
        row_move[by_addition] = ADDITION
        best[flat[inside]] = here[inside]
        move[flat[inside]] = row_move[inside]
