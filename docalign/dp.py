"""The banded monotonic dynamic program that links output segments to source lines.

Links take 1 or 2 source lines and 0, 1 or 2 segments, or 1 segment and no line: 1-1, 1-0
(an omission), 0-1 (an addition), 1-2 (a split), 2-1 (a merge) and 2-2. A link of a lines and
b segments costs ``(a + b) / 2 * (1 - chrF)`` between the lines' sentence-level translations (the
pivot) and the segments, plus a fixed cost per link type and a Gale-Church length cost (the
pivot's length against the segments'); an omission costs ``omission``, an addition ``addition``. The path of
least cost is searched in a band of ``band`` segments either side of the diagonal (line i of n
against segment i * m / n of m), so the work grows with the document's length, not its square;
where the best path touches the band's edge, the band is doubled and the search run again. A
row of the band (one line boundary) is computed at once with numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from docalign import words
from docalign.chrf import Runs
from docalign.words import Vocabulary

MOVES = ((1, 1), (1, 0), (0, 1), (1, 2), (2, 1), (2, 2))  # (lines, segments); ties go to the first


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
    split_merge: float = 3.0  # a 1-2 or 2-1 link
    two_two: float = 3.0  # a 2-2 link (6.0: exact lines 0.973 against 0.993 at noise 0.3)
    length: float = 0.0  # per unit of Gale-Church's -log P(length difference); word edits already count length
    # with a model's link scores, their share of the similarity (chrF has the rest): on the validation split
    # 0.1 and 0.25 linked 0.9976-1.000 of the lines, 0.5 0.9927-0.9976 (chrF alone 0.9976)
    model: float = 0.25
    variance: float = 6.8  # Gale-Church's s^2: variance of the length difference per character


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


class Groups:
    """The words of single texts and of two consecutive ones joined, made once each."""

    def __init__(self, texts: Sequence[str], vocabulary: Vocabulary) -> None:
        self.texts = texts
        self.lengths = [len(t) for t in texts]
        self.tokens = [vocabulary.encode(t) for t in texts]
        self.joined = [np.concatenate(self.tokens[k : k + 2]) for k in range(len(texts) - 1)]
        self.counts = np.array([len(t) for t in self.tokens], dtype=float)
        self.words_in = [float(len(t)) for t in self.tokens]  # the same, for one link at a time

    def words(self, start: int, count: int) -> np.ndarray:
        return self.tokens[start] if count == 1 else self.joined[start]

    def size(self, start: int, count: int) -> float:
        """The words of ``count`` texts from ``start``."""
        return self.words_in[start] if count == 1 else self.words_in[start] + self.words_in[start + 1]

    def length(self, start: int, count: int) -> int:
        return sum(self.lengths[start : start + count]) + count - 1


def length_cost(a: int, b: int, variance: float) -> float:
    """Gale-Church: -log P(|delta|) of the length difference, the lengths of one language."""
    if a + b == 0:
        return 0.0
    delta = abs(b - a) / math.sqrt(variance * (a + b) / 2)
    return -math.log(max(math.erfc(delta / math.sqrt(2)), 1e-12))


Key = Tuple[int, int, int, int]  # a candidate link: (first line, lines, first segment, segments)
Corridor = Tuple[List[int], List[int]]  # per line boundary 0..n: the lowest and highest segment boundary
Costs = Callable[[int, int, np.ndarray, int], np.ndarray]  # (first line, lines, first segments, segments)


class _Document:
    """One document's search: its texts' words, the costs and chrF of the links costed so far."""

    def __init__(self, pivots: Sequence[str], segments: Sequence[str], vocabulary: Vocabulary) -> None:
        self.n, self.m = len(pivots), len(segments)
        self.lines, self.segs = Groups(pivots, vocabulary), Groups(segments, vocabulary)
        self.similarity: Dict[Key, float] = {}
        self.link_costs: Dict[Key, float] = {}

    def costs(self, weights: Weights) -> Costs:
        w, link_costs, counts = weights, self.link_costs, self.lines.counts

        def costs(i: int, a: int, js: np.ndarray, b: int) -> np.ndarray:
            if b == 0:
                return np.full(len(js), w.unlinked * counts[i] + w.omission)
            return np.array([link_costs[(i, a, j, b)] for j in js.tolist()])

        return costs


def align(
    pivots: Sequence[str],
    segments: Sequence[str],
    band: int = 20,
    weights: Weights = Weights(),
    model: Optional[Mapping[Key, float]] = None,
    corridor: Optional[Corridor] = None,
) -> List[Link]:
    """The least-cost monotonic links of ``pivots`` (one per source line) and ``segments``.
    ``model``: a model's similarity of candidate links (``candidates``), mixed with their chrF;
    the search then stays in ``corridor`` (``corridor_of`` a first path)."""
    return align_many([(pivots, segments)], band, weights, None if model is None else [model], [corridor])[0]


def align_many(
    documents: Sequence[Tuple[Sequence[str], Sequence[str]]],
    band: int = 20,
    weights: Weights = Weights(),
    models: Optional[Sequence[Mapping[Key, float]]] = None,
    corridors: Optional[Sequence[Optional[Corridor]]] = None,
) -> List[List[Link]]:
    """``align`` of each document's (pivots, segments), the links of all documents costed together:
    their chrF (``Runs``) and word edits (``words.distances``) in one batch per widening of the band."""
    w = weights
    vocabulary = Vocabulary()
    docs = [_Document(p, s, vocabulary) for p, s in documents]
    runs = Runs([texts for pair in documents for texts in pair], [d for d in range(len(documents)) for _ in (0, 1)])
    result: List[List[Link]] = [[] for _ in documents]
    pending: Dict[int, Corridor] = {}  # document: its band or corridor to search
    widths: Dict[int, int] = {}
    fixed = set()
    for d, doc in enumerate(docs):
        n, m = doc.n, doc.m
        if n == 0 or m == 0:
            result[d] = [Link((i, 1), (0, 0), None) for i in range(n)] + [Link((n, 0), (j, 1), None) for j in range(m)]
        elif corridors is not None and corridors[d] is not None:
            pending[d] = reachable(corridors[d], n, m)  # type: ignore[arg-type]
            fixed.add(d)
        else:
            widths[d] = max(band, 1)
            pending[d] = _diagonal(n, m, widths[d])
    while pending:
        _prepare(docs, pending, runs, w, models)
        searched: Dict[int, Corridor] = {}
        for d, corridor in pending.items():
            doc = docs[d]
            additions = w.unlinked * doc.segs.counts + w.addition
            links, touched = _search(doc.n, doc.m, corridor, doc.costs(w), additions)
            if d in fixed or not touched or widths[d] >= max(doc.n, doc.m):
                result[d] = [
                    Link((i, a), (j, b), doc.similarity[(i, a, j, b)] if a and b else None) for i, a, j, b in links
                ]
            else:
                widths[d] *= 2
                searched[d] = _diagonal(doc.n, doc.m, widths[d])
        pending = searched
    return result


def _prepare(
    docs: Sequence[_Document],
    bands: Mapping[int, Corridor],
    runs: Runs,
    w: Weights,
    models: Optional[Sequence[Mapping[Key, float]]],
) -> None:
    """The costs of every link in the documents' bands not costed yet: their chrF and word edits at once."""
    todo = [(d, key) for d, band in bands.items() for key in candidates(band) if key not in docs[d].link_costs]
    if not todo:
        return
    hyps = [runs.text_id(2 * d + 1, j, b) for d, (_, _, j, b) in todo]
    refs = [runs.text_id(2 * d, i, a) for d, (i, a, _, _) in todo]
    scores = link_chrf(runs, hyps, refs).tolist()
    edits = words.distances(
        [docs[d].lines.words(i, a) for d, (i, a, _, _) in todo],
        [docs[d].segs.words(j, b) for d, (_, _, j, b) in todo],
    ).tolist()
    for (d, key), c, e in zip(todo, scores, edits, strict=True):
        doc = docs[d]
        model = models[d] if models is not None else None
        if model is not None and key in model:
            c = (1 - w.model) * c + w.model * model[key]
        doc.similarity[key] = c
        i, a, j, b = key
        size = (doc.lines.size(i, a) + doc.segs.size(j, b)) / 2
        extra = w.two_two if a + b == 4 else w.split_merge if a + b == 3 else 0.0
        lengths = length_cost(doc.lines.length(i, a), doc.segs.length(j, b), w.variance) if w.length else 0.0
        cost = e + w.similarity * size * (1 - c) + extra + w.length * lengths
        if c < w.unrelated:  # no better than leaving them unlinked: omissions and additions
            unlinked = w.unlinked * 2 * size + w.omission * a + w.addition * b
            cost = max(cost, unlinked + UNRELATED)
        doc.link_costs[key] = cost


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


def candidates(corridor: Corridor) -> List[Key]:
    """Every link of lines and segments (1-1, 1-2, 2-1, 2-2) whose two ends lie in the corridor."""
    lo, hi = corridor
    n = len(lo) - 1
    m = hi[-1]
    return [
        (i, a, j, b)
        for i in range(n)
        for j in range(lo[i], hi[i] + 1)
        for a, b in MOVES
        if a and b and i + a <= n and j + b <= m and lo[i + a] <= j + b <= hi[i + a]
    ]


ADDITION = MOVES.index((0, 1))
UNRELATED = 1e-3  # an unrelated link costs this much more than leaving its lines and segments unlinked


def _search(n: int, m: int, band: Corridor, costs: Costs, additions: np.ndarray) -> Tuple[List[Key], bool]:
    """The best path in the band and whether it touches the band's edge (inside 0..m). Row by
    row (a line boundary), every cell of the row at once; the additions, which step along a row,
    by a running minimum: best[j] = min over k <= j of (reached[k] + the cost of adding segments
    k..j-1), with the costs' running sum ``added``."""
    lo, hi = band
    added = np.concatenate([[0.0], np.cumsum(additions)])
    best: List[np.ndarray] = []
    move: List[np.ndarray] = []
    for i in range(n + 1):
        js = np.arange(lo[i], hi[i] + 1)
        here = np.full(len(js), np.inf)
        row_move = np.full(len(js), -1, dtype=np.int8)
        if i == 0:
            here[0] = 0.0
        for k, (a, b) in enumerate(MOVES):
            if a == 0 or i < a:
                continue
            pi = i - a
            at = np.nonzero((js - b >= lo[pi]) & (js - b <= hi[pi]))[0]
            if not at.size:
                continue
            before = best[pi][js[at] - b - lo[pi]]
            at, before = at[before < np.inf], before[before < np.inf]
            if not at.size:
                continue
            c = before + costs(pi, a, js[at] - b, b)
            better = c < here[at]
            here[at[better]], row_move[at[better]] = c[better], k
        shifted = here - added[js]
        running = np.minimum.accumulate(shifted)
        by_addition = running < shifted
        here = np.where(by_addition, running + added[js], here)
        row_move[by_addition] = ADDITION
        best.append(here)
        move.append(row_move)
    path: List[Key] = []
    touched = False
    i, j = n, m
    while i or j:
        if (j == lo[i] and lo[i] > 0) or (j == hi[i] and hi[i] < m):
            touched = True
        a, b = MOVES[int(move[i][j - lo[i]])]
        i, j = i - a, j - b
        path.append((i, a, j, b))
    path.reverse()
    return path, touched
