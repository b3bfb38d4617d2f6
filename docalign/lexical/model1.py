"""IBM Model 1 (Brown et al. 1993) by EM, with numpy: t(f | e), the probability that a source word
e translates as the target word f, learned from a sentence-aligned corpus (the pair's training
data), a NULL source word included. Only what the gloss needs is kept: each source word's ``TOP``
most probable translations and their probabilities.

The table is cached beside the data it was learned from, with the data's fingerprint (the
SHA-256 of both files and the settings): a table learned from other data, or from an older
version of these files, is never used; it is learned again. ``make data`` (the pipeline's data
stage) leaves the table of a study's training split there.

Sizes: EM holds one number per (source word, target word) pair co-occurring in a sentence pair:
sentences over ``MAX_WORDS`` words are left out and at most ``MAX_PAIRS`` co-occurrences are read
(the first sentences of the corpus: about a million for TED talks' 20-word sentences), about a
gigabyte at most, seconds to a minute on one core."""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from commandkit.errors import Code, InputError
from commandkit.outputs import atomic_write_text
from commandkit.text import file_sha256, read_lines

logger = logging.getLogger(__name__)

ITERATIONS = 5  # EM iterations: Model 1's likelihood changes little after about five
MAX_WORDS = 60  # longer sentence pairs are left out (mostly misaligned or lists)
MAX_PAIRS = 20_000_000  # co-occurrences read at most (numpy arrays of about 1 GB in all)
VERSION = 1  # the table file's format and the learning's settings: a change invalidates old tables
WORDS = re.compile(r"\w+|[^\w\s]")
NULL = ""  # the empty source word, which a target word may come from
TOP = 3  # translations kept per source word
FLOOR = 0.01  # translations less likely than this are not kept
Translations = Dict[str, List[Tuple[str, float]]]  # source word -> its best translations, most probable first


def words(text: str) -> List[str]:
    """The words the table knows: lower-cased words and punctuation marks."""
    return WORDS.findall(text.lower())


@dataclass(frozen=True)
class Table:
    """Each source word's most probable translations and t(f | e) of each."""

    translations: Translations
    fingerprint: str


def train(sources: Sequence[str], targets: Sequence[str], iterations: int = ITERATIONS) -> Translations:
    """Learn t(f | e) from sentence pairs; each source word's best translations."""
    import numpy as np

    e_vocab: Dict[str, int] = {NULL: 0}
    f_vocab: Dict[str, int] = {}
    e_parts, f_parts, f_ids_parts = [], [], []  # per sentence: every (e, f) pair, and f's occurrence
    occurrence = 0
    pairs = 0
    for source, target in zip(sources, targets, strict=True):
        es, fs = words(source), words(target)
        if not es or not fs or len(es) > MAX_WORDS or len(fs) > MAX_WORDS:
            continue
        if pairs + (len(es) + 1) * len(fs) > MAX_PAIRS:
            break
        e_ids = np.array([0] + [e_vocab.setdefault(w, len(e_vocab)) for w in es], dtype=np.int64)
        f_ids = np.array([f_vocab.setdefault(w, len(f_vocab)) for w in fs], dtype=np.int64)
        e_parts.append(np.tile(e_ids, len(f_ids)))
        f_parts.append(np.repeat(f_ids, len(e_ids)))
        f_ids_parts.append(np.repeat(np.arange(occurrence, occurrence + len(f_ids)), len(e_ids)))
        occurrence += len(f_ids)
        pairs += len(e_ids) * len(f_ids)
    if not e_parts:
        return {}
    e_all, f_all, slot = np.concatenate(e_parts), np.concatenate(f_parts), np.concatenate(f_ids_parts)
    # one parameter per distinct (e, f) pair
    keys, pair = np.unique(e_all * len(f_vocab) + f_all, return_inverse=True)
    e_of, f_of = keys // len(f_vocab), keys % len(f_vocab)
    t = np.ones(len(keys))  # uniform over the co-occurring words: the first E step counts co-occurrences
    for _ in range(iterations):
        p = t[pair]
        posterior = p / np.bincount(slot, weights=p, minlength=occurrence)[slot]  # E: f's source, distributed
        counts = np.bincount(pair, weights=posterior, minlength=len(keys))
        t = counts / np.bincount(e_of, weights=counts, minlength=len(e_vocab))[e_of]  # M: normalized per e
    # each source word's best translations: the pairs sorted by e, then by t, the first TOP of each e
    order = np.lexsort((-t, e_of))
    e_sorted = e_of[order]
    starts = np.searchsorted(e_sorted, e_sorted)  # where each e's run begins
    keep = (np.arange(len(order)) - starts < TOP) & (t[order] >= FLOOR) & (e_sorted != 0)
    e_words = {i: w for w, i in e_vocab.items()}
    f_words = {i: w for w, i in f_vocab.items()}
    out: Translations = {}
    for e, f, p in zip(e_sorted[keep].tolist(), f_of[order][keep].tolist(), t[order][keep].tolist(), strict=True):
        out.setdefault(e_words[e], []).append((f_words[f], round(p, 6)))
    return out


def table_path(source: str, target: str) -> str:
    """Where the table of ``source`` and ``target`` (a corpus's two sides) is cached: beside them."""
    return str(Path(target).with_name(f"{Path(source).name}-{Path(target).name}.model1.json"))


def fingerprint(source: str, target: str) -> str:
    return f"v{VERSION} {file_sha256(source)} {file_sha256(target)}"


def lexical_table(source: str, target: str) -> Table:
    """The table learned from the corpus ``source`` / ``target`` (two line-aligned files): read from
    its cache beside them when the cache was learned from these files as they are now, else
    learned (seconds to a minute) and cached. One line naming the file when the corpus is unusable."""
    key = fingerprint(source, target)
    path = table_path(source, target)
    cached = _read(path, key)
    if cached is not None:
        return Table(cached, key)
    logger.info("learning a lexical table (IBM Model 1) from %s and %s", source, target)
    sources, targets = read_lines(source), read_lines(target)
    if len(sources) != len(targets):
        raise InputError(
            f"{target}: {len(targets)} lines, but {source} has {len(sources)}: not a parallel corpus",
            code=Code.LINE_COUNT,
        )
    translations = train(sources, targets)
    if not translations:
        raise InputError(
            f"{source}: no sentence pair to learn a lexical table from (empty or too long)", code=Code.EMPTY
        )
    text = json.dumps({"fingerprint": key, "translations": translations}, ensure_ascii=False, separators=(",", ":"))
    try:
        atomic_write_text(path, text + "\n", transactional=False)
    except OSError as e:  # a read-only data folder: the table is used, not kept
        logger.warning("cannot cache the lexical table at %s (%s): it is learned again next time", path, e.strerror)
    return Table(translations, key)


def _read(path: str, key: str) -> Translations | None:
    """The cached table at ``path`` if it was learned from the data of fingerprint ``key``."""
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("fingerprint") != key:
            return None
        return {e: [(f_, float(p)) for f_, p in best] for e, best in data["translations"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # a damaged cache is learned again
