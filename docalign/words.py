"""Word-level edit distance (Levenshtein: substitutions, insertions and deletions of words, each
costing 1), as mwerSegmenter scores a segmentation: for many pairs at once, with numpy.

Words are what ``tokens`` finds: runs of letters and digits, each kana or Han character (text
written without spaces), and each other visible character alone (so "balle," and "balle ," are
the same two words), lowercased (mwerSegmenter compares case-insensitively)."""

from __future__ import annotations

import re
from typing import Dict, List, Sequence

import numpy as np

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kana and Han: a word per character
WORD = re.compile(f"[{CJK}]|[^\\W{CJK}]+|[^\\w\\s]")
CHUNK = 4096  # pairs computed together (memory: pairs x the longest hypothesis)


def tokens(text: str) -> List[str]:
    return WORD.findall(text.lower())


class Vocabulary:
    """Words as integers, one number per distinct word."""

    def __init__(self) -> None:
        self.ids: Dict[str, int] = {}

    def encode(self, text: str) -> np.ndarray:
        return np.array([self.ids.setdefault(w, len(self.ids)) for w in tokens(text)], dtype=np.int32)


def distances(refs: Sequence[np.ndarray], hyps: Sequence[np.ndarray]) -> np.ndarray:
    """The word edit distance of each pair (``refs[k]``, ``hyps[k]``). Row by row of the
    reference, every pair and every hypothesis position at once; the insertions along a row by a
    running minimum: D[r][c] = c + min over k <= c of (T[k] - k), T the row before's moves."""
    out = np.zeros(len(refs), dtype=np.int64)
    order = sorted(range(len(refs)), key=lambda k: (len(hyps[k]), len(refs[k])))
    for start in range(0, len(order), CHUNK):
        chunk = order[start : start + CHUNK]
        out[chunk] = _chunk([refs[k] for k in chunk], [hyps[k] for k in chunk])
    return out


def _chunk(refs: Sequence[np.ndarray], hyps: Sequence[np.ndarray]) -> np.ndarray:
    """One chunk; the arrays are (hypothesis position, pair): the running minimum runs down
    contiguous rows of pairs."""
    k = len(refs)
    rl = np.array([len(r) for r in refs])
    hl = np.array([len(h) for h in hyps])
    cols, rows = int(hl.max(initial=0)), int(rl.max(initial=0))
    hyp = np.full((cols, k), -1, dtype=np.int32)
    ref = np.full((rows, k), -2, dtype=np.int32)
    for q, (r, h) in enumerate(zip(refs, hyps, strict=True)):
        hyp[: len(h), q], ref[: len(r), q] = h, r
    steps = np.arange(cols + 1, dtype=np.int32)[:, None]
    row = np.repeat(steps, k, axis=1)
    pairs = np.arange(k)
    out = row[hl, pairs].astype(np.int64)  # an empty reference: every word inserted
    moves = np.empty_like(row)
    for at in range(rows):
        moves[0] = row[0] + 1
        np.minimum(row[1:] + 1, row[:-1] + (hyp != ref[at]), out=moves[1:])
        moves -= steps
        row = np.minimum.accumulate(moves, axis=0)
        row += steps
        done = np.nonzero(rl == at + 1)[0]
        out[done] = row[hl[done], done]
    return out


def prefix_distances(ref: np.ndarray, hyp: np.ndarray) -> np.ndarray:
    """The edit distance of ``ref`` to each prefix of ``hyp``: ``out[c]`` for ``hyp[:c]``."""
    steps = np.arange(len(hyp) + 1)
    row = steps.astype(np.int64)
    for word in ref.tolist():
        moves = np.empty_like(row)
        moves[0] = row[0] + 1
        moves[1:] = np.minimum(row[1:] + 1, row[:-1] + (hyp != word))
        row = np.minimum.accumulate(moves - steps) + steps
    return row
