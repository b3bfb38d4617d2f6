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

from docalign.chrf import Profile, chrf

MOVES = ((1, 1), (1, 0), (0, 1), (1, 2), (2, 1), (2, 2))  # (lines, segments); ties go to the first


@dataclass(frozen=True)
class Weights:
    """The costs of the dynamic program, in units of (1 - chrF) per sentence."""

    # chosen on the demo's validation split, perturbed (bench/RESULTS.md, "Whole-document output"):
    # an omission at 0.4 against 0.5 / 0.6 made the difference (link accuracy 0.998 / 0.997 / 0.996);
    # an addition at 0.5 rather than 0.4 kept outputs far from the pivot aligned (15% / 30% of the
    # words changed: 0.993 / 0.976 against 0.978 / 0.925), the others unchanged
    omission: float = 0.4  # a 1-1 link of chrF under 0.1 loses to an omission and an addition
    addition: float = 0.5
    split_merge: float = 0.1  # a 1-2 or 2-1 link, on top of its (1 - chrF)
    two_two: float = 0.4  # a 2-2 link
    length: float = 0.1  # per unit of Gale-Church's -log P(length difference)
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
    """The profiles of single texts and of two consecutive ones joined, made once each."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = texts
        self.single = [Profile(t) for t in texts]
        self.lengths = [len(t) for t in texts]
        self.pairs: Dict[int, Profile] = {}

    def profile(self, start: int, count: int) -> Profile:
        if count == 1:
            return self.single[start]
        if start not in self.pairs:
            self.pairs[start] = Profile(self.texts[start] + " " + self.texts[start + 1])
        return self.pairs[start]

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
    n, m = len(pivots), len(segments)
    if n == 0 or m == 0:
        return [Link((i, 1), (0, 0), None) for i in range(n)] + [Link((n, 0), (j, 1), None) for j in range(m)]
    lines, segs = Groups(pivots), Groups(segments)
    cache: Dict[Key, float] = {}

    def similarity(i: int, a: int, j: int, b: int) -> float:
        key = (i, a, j, b)
        if key not in cache:
            cache[key] = chrf(segs.profile(j, b), lines.profile(i, a))
            if model is not None and key in model:
                cache[key] = (1 - weights.model) * cache[key] + weights.model * model[key]
        return cache[key]

    w = weights

    def costs(i: int, a: int, js: np.ndarray, b: int) -> np.ndarray:
        if a == 0 or b == 0:
            return np.full(len(js), w.omission * a + w.addition * b)
        extra = w.two_two if a + b == 4 else w.split_merge if a + b == 3 else 0.0
        length = lines.length(i, a)
        return np.array(
            [
                (a + b) / 2 * (1 - similarity(i, a, j, b))
                + extra
                + w.length * length_cost(length, segs.length(j, b), w.variance)
                for j in js.tolist()
            ]
        )

    if corridor is not None:
        links, _ = _search(n, m, reachable(corridor, n, m), costs, w.addition)
    else:
        width = max(band, 1)
        while True:
            links, touched = _search(n, m, _diagonal(n, m, width), costs, w.addition)
            if not touched or width >= max(n, m):
                break
            width *= 2
    return [Link((i, a), (j, b), similarity(i, a, j, b) if a and b else None) for i, a, j, b in links]


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


def _search(n: int, m: int, band: Corridor, costs: Costs, addition: float) -> Tuple[List[Key], bool]:
    """The best path in the band and whether it touches the band's edge (inside 0..m). Row by
    row (a line boundary), every cell of the row at once; the additions, which step along a row,
    by a running minimum: best[j] = min over k <= j of (reached[k] + (j - k) x addition)."""
    lo, hi = band
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
        shifted = here - addition * js
        running = np.minimum.accumulate(shifted)
        added = running < shifted
        here = np.where(added, running + addition * js, here)
        row_move[added] = ADDITION
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
