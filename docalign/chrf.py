"""chrF between two texts, fast when the same texts are compared many times.

The aligner compares every candidate group of output segments with the sentence-level
translation of every nearby source line: each text's character n-gram counts (``Profile``) are
made once and reused. The score is sacreBLEU's sentence chrF (character orders 1-6, whitespace
removed, precision and recall averaged over the orders both texts have, no smoothing) with
beta = 1: a link is symmetric, so recall (beta = 2, sacreBLEU's default) must not outweigh
precision, or a merged segment would look like a good match for either of its sentences.
"""

from __future__ import annotations

import operator
from collections import Counter
from typing import Hashable, List, Optional, Sequence, Set, Tuple

import numpy as np

ORDER = 6


class Profile:
    """The character n-grams of a text (whitespace removed), per order 1..ORDER that the text is
    long enough to have: (their number, a set in which an n-gram seen k times is k members: the
    n-gram, then (n-gram, 2) .. (n-gram, k)). The clipped matches of two texts, the sum over
    n-grams of the smaller count, are then the size of their sets' intersection, which Python
    computes in C (the aligner compares tens of thousands of pairs per thousand lines)."""

    __slots__ = ("orders",)

    def __init__(self, text: str) -> None:
        chars = "".join(text.split())
        self.orders: List[Tuple[int, Set[Hashable]]] = []
        grams: List[str] = []
        for n in range(1, min(ORDER, len(chars)) + 1):
            # the n-grams: each (n-1)-gram with the character after it (concatenated in C)
            grams = list(chars) if n == 1 else list(map(operator.add, grams, chars[n - 1 :]))
            members: Set[Hashable] = set(grams)
            if len(members) < len(grams):  # repeated n-grams: one member per occurrence
                members.update([(g, k) for g, c in Counter(grams).items() if c > 1 for k in range(2, c + 1)])
            self.orders.append((len(grams), members))


def chrf(hyp: Profile, ref: Profile, beta: float = 1.0) -> float:
    """chrF in [0, 1] (sacreBLEU's ``CHRF(beta=beta).sentence_score(...).score / 100``): precision
    and recall averaged over the orders both texts have (the shorter text's: ``zip`` stops there)."""
    precision = recall = 0.0
    for (h, hyp_grams), (r, ref_grams) in zip(hyp.orders, ref.orders, strict=False):
        m = len(hyp_grams & ref_grams)
        precision += m / h
        recall += m / r
    orders = min(len(hyp.orders), len(ref.orders))
    if not orders:
        return 0.0
    precision, recall = precision / orders, recall / orders
    if not precision + recall:
        return 0.0
    factor = beta * beta
    return (1 + factor) * precision * recall / (factor * precision + recall)


class Runs:
    """The character n-gram multisets of many texts at once, for the chrF of many pairs of them
    (every candidate link of every document): the numbers of ``chrf(Profile(hyp), Profile(ref))``.

    ``lists``: lists of texts; ``groups``: each list's group, 0, 1, .. nondecreasing (a document:
    its pivots and its segments); only texts of one group are compared. A text is a run of up to
    ``widths[list]`` (default 2) consecutive texts of a list joined (``text_id``): a source line's
    pivot is one or two, an output's segments as many as a line's pivot has sentences and more.
    ``sides``: each list's side where texts of one side are never compared with each other (a
    document's pivots, its segments): an n-gram only one side of a group has never matches, and is
    left out. The n-grams are numbered with numpy (a sort per order of every character position);
    each text's multiset of each order is a Python int, a bitset over its group's n-grams, where
    an n-gram seen k times sets k bits: two texts' clipped matches are the bits they share,
    ``(a & b).bit_count()``, counted in C. The bitsets are made for the texts ``scores`` compares."""

    def __init__(
        self,
        lists: Sequence[Sequence[str]],
        groups: Sequence[int],
        widths: Sequence[int] = (),
        sides: Optional[Sequence[int]] = None,
    ) -> None:
        self.singles = [t for texts in lists for t in texts]
        chars = ["".join(t.split()) for t in self.singles]
        sizes = np.array([len(texts) for texts in lists], dtype=np.int64)
        self.first = (np.cumsum([0, *sizes.tolist()])[:-1]).tolist()  # each list's first text
        width = widths or [2] * len(lists)
        self.base, self.single, self.last = run_index(sizes.tolist(), width)
        size = np.array([len(c) for c in chars], dtype=np.int64)
        total = np.concatenate([[0], np.cumsum(size)])
        self.length = total[self.last] - total[self.single]  # characters (whitespace removed)
        self.group = np.repeat(np.asarray(groups, dtype=np.int64), sizes)[self.single]
        self.begin = total[self.single]
        self.char_begin, self.char_end = total[:-1], total[1:]  # per single text
        self.list_last = np.repeat(np.cumsum(sizes) - 1, sizes)  # per single text: its list's last
        stream = np.frombuffer("".join(chars).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        one = grams = _dense(stream.astype(np.int64))
        # per character position: its text, and the last text an n-gram from it may reach in a run
        owner = np.repeat(np.arange(len(size), dtype=np.int64), size)
        list_of = np.repeat(np.arange(len(lists), dtype=np.int64), sizes)
        reach = np.minimum(np.arange(len(size)) + np.repeat(np.asarray(width, dtype=np.int64), sizes) - 1,
                           np.repeat(np.cumsum(sizes) - 1, sizes))[owner] if len(size) else owner  # fmt: skip
        side = None if sides is None else np.asarray(sides, dtype=np.int64)[list_of][owner]
        group = np.asarray(groups, dtype=np.int64)[list_of][owner] if len(size) else owner
        self.grams: List[np.ndarray] = []  # per order: each position's n-gram, -1 where never matched
        for n in range(1, ORDER + 1):
            if n > 1:  # the (n-1)-gram and the character after it, numbered anew
                grams = _dense(grams[:-1] * (int(one.max(initial=0)) + 1) + one[n - 1 :])
            self.grams.append(grams if side is None else _shared(grams, owner, reach, group, side, n))
        self.sets: List[List[int]] = [[] for _ in range(ORDER)]  # per order: each text's multiset as a bitset
        self.made = np.zeros(len(self.length), dtype=bool)

    def text_id(self, list_index: int, start: int, count: int) -> int:
        """Text ``start`` of list ``list_index`` joined with the ``count - 1`` after it."""
        return int(self.base[self.first[list_index] + start]) + count - 1

    def text(self, text_id: int) -> str:
        """The text of a ``text_id``, as its n-grams were counted (its texts joined by a space)."""
        return " ".join(self.singles[int(self.single[text_id]) : int(self.last[text_id])])

    def _make(self, ids: np.ndarray) -> None:
        """The bitsets of the texts ``ids`` (and of those made before). The runs from one text
        are made one from the other: run (t, c) is run (t, c - 1) with the n-grams that end in
        text t + c - 1 (``piece`` (t, c)), numbered on from those of the run before (an n-gram's
        k-th occurrence from t sets its k-th bit), so each character is counted once per run start,
        not once per run."""
        wanted = self.made.copy()
        wanted[ids] = True
        if (wanted == self.made).all():
            return
        # per single text t: the longest run from it that is wanted, c = 1 .. that its pieces
        start = self.single[wanted]
        need = np.zeros(len(self.char_begin), dtype=np.int64)
        np.maximum.at(need, start, np.nonzero(wanted)[0] - self.base[start] + 1)
        unit = np.repeat(np.arange(len(need), dtype=np.int64), need)
        step = np.arange(int(need.sum()), dtype=np.int64) - np.repeat(np.cumsum(need) - need, need)  # c - 1
        end_text = np.minimum(unit + step, self.list_last[unit])
        beyond = unit + step > self.list_last[unit]  # past the list's end: nothing more (a cut run)
        group = self.group[self.base[unit]]
        run = self.base[unit] + step
        for n, grams in enumerate(self.grams, start=1):
            lo = np.maximum(self.char_begin[unit], self.char_begin[end_text] - n + 1)
            hi = np.where(beyond, lo, np.maximum(self.char_end[end_text] - n + 1, lo))
            kept = np.nonzero(grams >= 0)[0]  # the n-grams that may match; a piece's: a range of them
            first = np.searchsorted(kept, lo)
            made = _bitsets(grams[kept], first, np.searchsorted(kept, hi) - first, group, unit)
            for k in np.nonzero(step)[0].tolist():  # a run: the run before it and its piece
                made[k] |= made[k - 1]
            sets = np.array(self.sets[n - 1] or [0] * len(self.length), dtype=object)
            sets[run] = np.array([*made, None], dtype=object)[:-1]  # (None: kept an array of ints)
            self.sets[n - 1] = sets.tolist()
        self.made = wanted

    def scores(self, hyps: Sequence[int], refs: Sequence[int], beta: float = 1.0) -> np.ndarray:
        """chrF of each pair of texts (``text_id``s) of one group: ``chrf``'s operations in its order."""
        hyp_ids, ref_ids = np.asarray(hyps, dtype=np.int64), np.asarray(refs, dtype=np.int64)
        self._make(np.concatenate([hyp_ids, ref_ids]))
        hl, rl = self.length[hyp_ids], self.length[ref_ids]
        precision, recall, orders = np.zeros(len(hl)), np.zeros(len(hl)), np.zeros(len(hl))
        for n, sets in enumerate(self.sets, start=1):
            h, r = hl - n + 1, rl - n + 1
            both = (h > 0) & (r > 0)
            if not both.any():
                break
            m = np.array([(sets[a] & sets[b]).bit_count() for a, b in zip(hyps, refs, strict=True)], dtype=float)
            precision += np.where(both, m / np.maximum(h, 1), 0.0)
            recall += np.where(both, m / np.maximum(r, 1), 0.0)
            orders += both
        some = orders > 0
        precision[some] /= orders[some]
        recall[some] /= orders[some]
        some &= precision + recall != 0
        factor = beta * beta
        p, r = precision[some], recall[some]
        out = np.zeros(len(hl))
        out[some] = (1 + factor) * p * r / (factor * p + r)
        return out


def _shared(
    grams: np.ndarray, owner: np.ndarray, reach: np.ndarray, group: np.ndarray, side: np.ndarray, n: int
) -> np.ndarray:
    """``grams`` (the n-gram at each character position) with -1 where no text of another side of
    the group has that n-gram: an n-gram is a text's if it starts in one of the run's texts and ends
    in it or in one the run reaches (``reach``: the last text of the longest run from a text)."""
    if not len(grams):
        return grams
    start = np.arange(len(grams))
    inside = reach[start] >= owner[start + n - 1]  # ends no further than a run from its text reaches
    kind = _dense(group[: len(grams)] * (int(grams.max()) + 1) + grams)  # (group, n-gram), numbered
    side = side[: len(grams)]
    sides = np.zeros(int(kind.max()) + 1, dtype=np.int64)  # per kind: the sides that have it
    for s in np.unique(side).tolist():
        has = np.zeros(len(sides), dtype=bool)
        has[kind[inside & (side == s)]] = True
        sides += has
    keep = inside & (sides[kind] > 1)
    return np.where(keep, grams, -1)


def run_index(sizes: Sequence[int], widths: Sequence[int]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The runs of lists of ``sizes`` texts, up to ``widths`` texts each (per list): each text's
    first run (the run of text k and the c - 1 after it is ``base[k] + c - 1``), and per run its
    first text and one past its last, cut at its list's end (never compared: no link reaches past
    a list)."""
    size = np.asarray(sizes, dtype=np.int64)
    width = np.repeat(np.asarray(widths, dtype=np.int64), size)  # per text
    base = np.cumsum(width) - width
    single = np.repeat(np.arange(len(width), dtype=np.int64), width)
    count = np.arange(int(width.sum()), dtype=np.int64) - base[single] + 1
    end = np.repeat(np.cumsum(size), size)
    return base, single, np.minimum(single + count, end[single])


KEY_BITS = 62  # bits of the int64 sort keys that pack several numbers (else numpy sorts them apart)


def _dense(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct values: one sort of the values with each one's position
    in its low bits (a sort of plain integers is several times faster than ``argsort``)."""
    if not len(values):
        return values
    shift = max(len(values).bit_length(), 1)
    if int(values.max()).bit_length() + shift > KEY_BITS:  # too wide to carry the position
        return np.unique(values, return_inverse=True)[1].astype(np.int64).reshape(-1)
    packed = np.sort((values << shift) | np.arange(len(values), dtype=np.int64))
    kept = packed >> shift
    out = np.empty(len(values), dtype=np.int64)
    out[packed & ((1 << shift) - 1)] = np.cumsum(np.concatenate([[0], kept[1:] != kept[:-1]]))
    return out


def _bitsets(
    grams: np.ndarray, begin: np.ndarray, count: np.ndarray, group: np.ndarray, unit: Optional[np.ndarray] = None
) -> List[int]:
    """Each text's multiset of n-grams (``grams[begin : begin + count]``) as an int: bits ``base``
    to ``base + k - 1`` for an n-gram it has k times, ``base`` that n-gram's first bit in the
    text's group, where each n-gram has as many bits as the most times a text of the group has it.
    ``unit``: texts of one unit (consecutive) count their n-grams together, in their order: a text
    sets the bits of its n-grams' occurrences after those of the unit's texts before it."""
    total = int(count.sum())
    text = np.repeat(np.arange(len(begin), dtype=np.int64), count)
    gram = grams[np.repeat(begin - (np.cumsum(count) - count), count) + np.arange(total, dtype=np.int64)]
    if not total:
        return [0] * len(begin)
    # sorted by group, n-gram, text: a text's occurrences of an n-gram are a run, numbered from 0
    gbits, tbits = int(gram.max()).bit_length() or 1, int(text[-1]).bit_length() or 1
    if int(group[-1]).bit_length() + gbits + tbits <= KEY_BITS:
        keys = group[text] << gbits
        keys |= gram
        keys <<= tbits
        keys |= text
        keys.sort()
        kind, text = keys >> tbits, keys & ((1 << tbits) - 1)
        new_kind = np.concatenate([[True], kind[1:] != kind[:-1]])
    else:
        order = np.lexsort((text, gram, group[text]))
        text, gram = text[order], gram[order]
        owner = group[text]
        new_kind = np.concatenate([[True], (owner[1:] != owner[:-1]) | (gram[1:] != gram[:-1])])
    counter = text if unit is None else unit[text]  # whose occurrences are numbered together
    new_run = new_kind | np.concatenate([[True], counter[1:] != counter[:-1]])
    index = np.arange(total, dtype=np.int64)
    rank = index - np.maximum.accumulate(np.where(new_run, index, 0))
    starts = np.nonzero(new_kind)[0]
    width = np.maximum.reduceat(rank + 1, starts)  # the bits of each n-gram of each group
    kind_group = group[text[starts]]
    before = np.cumsum(width) - width
    first_of_group = np.concatenate([[True], kind_group[1:] != kind_group[:-1]])
    base = before - before[np.nonzero(first_of_group)[0]][np.cumsum(first_of_group) - 1]
    bit = base[np.cumsum(new_kind) - 1] + rank
    # each text's bytes, as many as its group's bits need
    groups = int(group[-1]) + 1
    group_bits = np.bincount(kind_group, weights=width, minlength=groups).astype(np.int64)
    nbytes = np.where(np.bincount(text, minlength=len(begin)) > 0, (group_bits[group] + 7) // 8, 0)  # none: 0
    offset = np.cumsum(nbytes) - nbytes
    bits = np.zeros(8 * int(nbytes.sum()), dtype=bool)
    bits[8 * offset[text] + bit] = True
    raw = np.packbits(bits, bitorder="little").tobytes()
    return [int.from_bytes(raw[o : o + w], "little") for o, w in zip(offset.tolist(), nbytes.tolist(), strict=True)]
