"""Word-level edit distance (Levenshtein: substitutions, insertions and deletions of words, each
costing 1), as mwerSegmenter scores a segmentation: for many pairs at once, with numpy.

Words are what ``tokens`` finds: runs of letters and digits, each kana or Han character (text
written without spaces), and each other visible character alone (so "balle," and "balle ," are
the same two words), lowercased (mwerSegmenter compares case-insensitively)."""

from __future__ import annotations

import re
from itertools import chain
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

    def encode_all(self, texts: Sequence[str]) -> List[np.ndarray]:
        """``encode`` of each text, the words of all numbered in one pass."""
        words = [tokens(t) for t in texts]
        flat = list(chain.from_iterable(words))
        ids = self.ids
        for w in dict.fromkeys(flat):  # the new words, in the order they first appear
            if w not in ids:
                ids[w] = len(ids)
        numbers = np.fromiter(map(ids.__getitem__, flat), dtype=np.int32, count=len(flat))
        return np.split(numbers, np.cumsum([len(w) for w in words])[:-1]) if texts else []


def distances(refs: Sequence[np.ndarray], hyps: Sequence[np.ndarray]) -> np.ndarray:
    """The word edit distance of each pair (``refs[k]``, ``hyps[k]``) (``distances_in``)."""
    arrays = [*refs, *hyps]
    lengths = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
    starts = np.cumsum(lengths) - lengths
    flat = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int32)
    k = len(refs)
    return distances_in(flat, starts[:k], lengths[:k], starts[k:], lengths[k:])


def distances_in(
    words: np.ndarray, ref_start: np.ndarray, ref_length: np.ndarray, hyp_start: np.ndarray, hyp_length: np.ndarray
) -> np.ndarray:
    """The word edit distance of each pair of runs of ``words``: ``words[ref_start[k]:][:ref_length[k]]``
    against ``words[hyp_start[k]:][:hyp_length[k]]``. Row by row of the reference, every pair and
    every hypothesis position at once; the insertions along a row by a running minimum:
    D[r][c] = c + min over k <= c of (T[k] - k), T the row before's moves. The pairs in chunks of
    similar hypothesis lengths, the longest reference first within a chunk: a pair whose
    reference has ended leaves the rows after it."""
    out = np.zeros(len(ref_start), dtype=np.int64)
    order = np.lexsort((ref_length, hyp_length))
    for start in range(0, len(order), CHUNK):
        chunk = order[start : start + CHUNK]
        chunk = chunk[np.argsort(-ref_length[chunk], kind="stable")]
        rl, hl = ref_length[chunk], hyp_length[chunk]
        out[chunk] = _chunk(_padded(words, ref_start[chunk], rl, -2), _padded(words, hyp_start[chunk], hl, -1), rl, hl)
    return out


def _chunk(ref: np.ndarray, hyp: np.ndarray, rl: np.ndarray, hl: np.ndarray) -> np.ndarray:
    """One chunk, its references longest first; the arrays are (position, pair): the running
    minimum runs down contiguous rows of pairs."""
    k = len(rl)
    cols, rows = hyp.shape[0], ref.shape[0]
    steps = np.arange(cols + 1, dtype=np.int32)[:, None]
    row = np.repeat(steps, k, axis=1)
    pairs = np.arange(k)
    out = row[hl, pairs].astype(np.int64)  # an empty reference: every word inserted
    longer = np.searchsorted(-rl, -np.arange(rows + 1), side="left")  # the pairs with more words than that
    for at in range(rows):
        active = int(longer[at])  # the pairs whose reference has word ``at``: the first ones
        row = row[:, :active]
        moves = np.empty_like(row)
        moves[0] = row[0] + 1
        np.minimum(row[1:] + 1, row[:-1] + (hyp[:, :active] != ref[at, :active]), out=moves[1:])
        moves -= steps
        row = np.minimum.accumulate(moves, axis=0)
        row += steps
        done = pairs[int(longer[at + 1]) : active]
        out[done] = row[hl[done], done]
    return out


def _padded(words: np.ndarray, start: np.ndarray, length: np.ndarray, fill: int) -> np.ndarray:
    """The runs of ``words`` as the columns of one (longest, runs) array, ``fill`` below each one's end."""
    out = np.full((int(length.max(initial=0)), len(start)), fill, dtype=np.int32)
    column = np.repeat(np.arange(len(start)), length)
    position = np.arange(len(column)) - (np.cumsum(length) - length)[column]
    out[position, column] = words[start[column] + position]
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
