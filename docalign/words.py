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
CHUNK = 1 << 14  # programs (pairs of starts) computed together
ROWS = 1 << 21  # hypothesis words matched against the references of a batch, at most


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
    against ``words[hyp_start[k]:][:hyp_length[k]]``. Pairs of the same two starts are one dynamic
    program, as long as their longest: the distances of a line's pivot to b = 1, 2, .. segments
    from j are cells of one row of it, those of a lines' run of 1, 2, .. lines cells of one column.
    Each program is computed with Myers' bit-parallel algorithm (``_programs``), every program of
    a batch at once with numpy."""
    ref_start, ref_length = np.asarray(ref_start, dtype=np.int64), np.asarray(ref_length, dtype=np.int64)
    hyp_start, hyp_length = np.asarray(hyp_start, dtype=np.int64), np.asarray(hyp_length, dtype=np.int64)
    out = ref_length.copy()  # an empty hypothesis: every reference word deleted
    asked = np.nonzero(hyp_length > 0)[0]
    if not len(asked):
        return out
    # the programs: one per (reference start, hypothesis start), as long as its longest pair
    span = int(hyp_start.max()) + 1
    keys, program = np.unique(ref_start[asked] * span + hyp_start[asked], return_inverse=True)
    program = program.reshape(-1)
    starts = np.stack([keys // span, keys % span])
    cols = np.zeros(starts.shape[1], dtype=np.int64)
    np.maximum.at(cols, program, hyp_length[asked])
    # the references (the bit vectors' words): one per start, as long as its longest pair
    patterns, pattern = np.unique(starts[0], return_inverse=True)
    pattern = pattern.reshape(-1)
    length = np.zeros(len(patterns), dtype=np.int64)
    np.maximum.at(length, pattern[program], ref_length[asked])
    limbs = np.maximum((length + 63) // 64, 1)
    # batches of references of one size, of about CHUNK programs and ROWS words to match at most
    span_lo = np.full(len(patterns), np.iinfo(np.int64).max)
    span_hi = np.zeros(len(patterns), dtype=np.int64)
    np.minimum.at(span_lo, pattern, starts[1])
    np.maximum.at(span_hi, pattern, starts[1] + cols)
    by_size = np.lexsort((np.arange(len(patterns)), limbs))
    held = np.cumsum(np.bincount(pattern, minlength=len(patterns))[by_size])
    spans = np.cumsum((span_hi - span_lo)[by_size])
    batch = np.empty(len(patterns), dtype=np.int64)
    batch[by_size] = np.maximum(held // CHUNK, spans // ROWS) * len(patterns) + limbs[by_size]
    pair_batch = batch[pattern[program]]
    for chosen_batch in np.unique(batch).tolist():
        chosen = np.nonzero(batch == chosen_batch)[0]
        progs = np.nonzero(batch[pattern] == chosen_batch)[0]
        pairs = np.nonzero(pair_batch == chosen_batch)[0]
        local = np.full(len(patterns), -1, dtype=np.int64)
        local[chosen] = np.arange(len(chosen))
        where = np.full(len(cols), -1, dtype=np.int64)
        where[progs] = np.arange(len(progs))
        k = asked[pairs]
        out[k] = _programs(
            words, patterns[chosen], length[chosen], span_lo[chosen], span_hi[chosen], local[pattern[progs]],
            starts[1][progs], cols[progs], where[program[pairs]], ref_length[k], hyp_length[k],
            int(limbs[chosen[0]]),
        )  # fmt: skip
    return out


ONE, ALL = np.uint64(1), np.uint64(0xFFFFFFFFFFFFFFFF)


def _programs(
    words: np.ndarray,
    pattern_start: np.ndarray,
    pattern_length: np.ndarray,
    span_lo: np.ndarray,
    span_hi: np.ndarray,
    program_pattern: np.ndarray,
    program_start: np.ndarray,
    program_length: np.ndarray,
    pair_program: np.ndarray,
    pair_rows: np.ndarray,
    pair_cols: np.ndarray,
    limbs: int,
) -> np.ndarray:
    """Edit distances by Myers' bit-parallel algorithm (Hyyrö's formulation for the distance of two
    whole strings): a program's column (its reference, ``limbs`` uint64 words: bit r for row r + 1)
    holds the vertical differences D[r + 1][c] - D[r][c] as two bit vectors, +1 (``pv``) and -1
    (``mv``); one step per hypothesis word c, every program of the batch at once, programs longest
    first (one leaves the rows once its hypothesis has ended). D[r][c] is c plus the +1s less the
    -1s of rows 1..r. ``pattern_*``: the references (words from a start), with the span of words
    their programs' hypotheses cover; ``program_*``: each program's reference and hypothesis;
    ``pair_*``: the cells asked (program, rows, columns >= 1)."""
    lowest = int(words.min(initial=0))
    vocabulary = int(words.max(initial=0)) - lowest + 1
    # each reference's bit vector of each word it has: bits of the rows that are that word
    row_count = pattern_length
    row = np.arange(int(row_count.sum()), dtype=np.int64) - np.repeat(np.cumsum(row_count) - row_count, row_count)
    owner = np.repeat(np.arange(len(pattern_start), dtype=np.int64), row_count)
    keys = owner * vocabulary + (words[pattern_start[owner] + row] - lowest)
    known, entry = np.unique(keys, return_inverse=True)
    table = np.zeros((len(known) + 1, limbs), dtype=np.uint64)  # the last row: a word it has not
    np.bitwise_or.at(table, (entry.reshape(-1), row >> 6), ONE << (row & 63).astype(np.uint64))
    # per reference, the bit vector of each word of its span of hypothesis words
    span = span_hi - span_lo
    span_first = np.cumsum(span) - span
    owner = np.repeat(np.arange(len(pattern_start), dtype=np.int64), span)
    at = span_lo[owner] + np.arange(int(span.sum()), dtype=np.int64) - span_first[owner]
    keys = owner * vocabulary + (words[at] - lowest)
    found = np.minimum(np.searchsorted(known, keys), max(len(known) - 1, 0))
    found = np.where(known[found] == keys, found, len(known)) if len(known) else np.zeros(len(keys), dtype=np.int64)
    equal = table[found]
    # the programs, longest hypothesis first; the cells asked, by column
    order = np.argsort(-program_length, kind="stable")
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    first = (span_first - span_lo)[program_pattern[order]] + program_start[order]
    longest = int(program_length[order[0]])
    active = np.searchsorted(-program_length[order], -np.arange(1, longest + 1), side="right")
    asked = np.argsort(pair_cols, kind="stable")
    asked_pos = position[pair_program[asked]]
    asked_at = np.searchsorted(pair_cols[asked], np.arange(1, longest + 2), side="left")
    bits = np.clip(pair_rows[asked][:, None] - 64 * np.arange(limbs), 0, 64).astype(np.uint64)
    mask = np.where(bits >= 64, ALL, (ONE << np.minimum(bits, 63)) - ONE)
    plus, minus = np.zeros_like(mask), np.zeros_like(mask)
    pv = np.full((len(order), limbs), ALL)  # D[r][0] = r: every row one more than the row above
    mv = np.zeros((len(order), limbs), dtype=np.uint64)
    for c in range(longest):
        n = int(active[c])
        pv, mv = pv[:n], mv[:n]
        eq = equal[first[:n] + c]
        xv = eq | mv
        total = (eq & pv) + pv
        if limbs > 1:
            total = _carried(total, pv)
        xh = (total ^ pv) | eq
        ph = mv | ~(xh | pv)
        mh = pv & xh
        ph = _shifted(ph, limbs)
        ph[:, 0] |= ONE  # D[0][c] = c: the top row one more at every step
        mh = _shifted(mh, limbs)
        pv = mh | ~(xv | ph)
        mv = ph & xv
        lo, hi = int(asked_at[c]), int(asked_at[c + 1])
        if hi > lo:  # the cells of column c + 1
            plus[lo:hi] = pv[asked_pos[lo:hi]] & mask[lo:hi]
            minus[lo:hi] = mv[asked_pos[lo:hi]] & mask[lo:hi]
    out = np.empty(len(asked), dtype=np.int64)
    out[asked] = pair_cols[asked] + _popcount(plus) - _popcount(minus)
    return out


def _carried(total: np.ndarray, addend: np.ndarray) -> np.ndarray:
    """``total`` (the limbs' sums, each modulo 2^64) with each limb's carry added to the next."""
    carry = total < addend
    while carry[:, :-1].any():
        step = np.zeros_like(total)
        step[:, 1:] = carry[:, :-1]
        after = total + step
        carry = after < total
        total = after
    return total


def _shifted(x: np.ndarray, limbs: int) -> np.ndarray:
    """The bit vectors one bit up (towards later rows), limb to limb."""
    out = x << ONE
    if limbs > 1:
        out[:, 1:] |= x[:, :-1] >> np.uint64(63)
    return out


def _popcount(x: np.ndarray) -> np.ndarray:
    """The set bits of each row of uint64 words."""
    x = x - ((x >> ONE) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return ((x * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.int64).sum(axis=1)


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
