"""Per-tag word precision, recall and f-measure of system outputs against a tagged reference
(the compare-mt measure the MuDA paper uses): word matching, counts per sentence and document,
and the scores computed from them (significance tests are in ``significance``).

Words are matched within a sentence by form: the k-th occurrence of a word in the hypothesis
matches the k-th occurrence in the reference. A tagged reference word counts towards recall,
a tagged hypothesis word towards precision (hypotheses are tagged in their own document context).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

import numpy as np

from muda.formats.tags import TagDump

NO_TAG = "no tag"
# count columns: reference words, matched reference words, hypothesis words, matched hypothesis words
REF, REF_OK, HYP, HYP_OK = range(4)


def match(ref: Sequence[str], hyp: Sequence[str]) -> Tuple[List[bool], List[bool]]:
    """Which reference and which hypothesis words have a partner (k-th occurrence to k-th)."""
    ref_count, hyp_count = Counter(ref), Counter(hyp)
    seen: Counter = Counter()
    ref_ok = []
    for w in ref:
        seen[w] += 1
        ref_ok.append(seen[w] <= hyp_count[w])
    seen.clear()
    hyp_ok = []
    for w in hyp:
        seen[w] += 1
        hyp_ok.append(seen[w] <= ref_count[w])
    return ref_ok, hyp_ok


def sentence_counts(ref: List[Dict], hyp: List[Dict]) -> Dict[str, np.ndarray]:
    """Counts per tag (and for untagged words) for one sentence pair of tag dumps."""
    ref_ok, hyp_ok = match([t["token"] for t in ref], [t["token"] for t in hyp])
    out: Dict[str, np.ndarray] = defaultdict(lambda: np.zeros(4, dtype=np.int64))
    for tok, ok in zip(ref, ref_ok, strict=True):
        for tag in tok["tags"] or [NO_TAG]:
            out[tag][REF] += 1
            out[tag][REF_OK] += ok
    for tok, ok in zip(hyp, hyp_ok, strict=True):
        for tag in tok["tags"] or [NO_TAG]:
            out[tag][HYP] += 1
            out[tag][HYP_OK] += ok
    return out


def document_counts(ref: TagDump, hyp: TagDump, tags: Sequence[str]) -> np.ndarray:
    """Array (documents, tags, 4) of counts; ``ref`` and ``hyp`` have the same documents."""
    out = np.zeros((len(ref), len(tags), 4), dtype=np.int64)
    index = {t: k for k, t in enumerate(tags)}
    for d, (rdoc, hdoc) in enumerate(zip(ref, hyp, strict=True)):
        for rs, hs in zip(rdoc, hdoc, strict=True):
            for tag, c in sentence_counts(rs, hs).items():
                if tag in index:
                    out[d, index[tag]] += c
    return out


def prf(counts: np.ndarray) -> np.ndarray:
    """Precision, recall, F for counts (..., 4); 0 where undefined (compare-mt's convention)."""
    counts = np.asarray(counts, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(counts[..., HYP] > 0, counts[..., HYP_OK] / counts[..., HYP], 0.0)
        r = np.where(counts[..., REF] > 0, counts[..., REF_OK] / counts[..., REF], 0.0)
        f = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    return np.stack([p, r, f], axis=-1)


@dataclass
class TagScore:
    precision: float
    recall: float
    f: float
    ref_words: int
    hyp_words: int


def scores(doc_counts: np.ndarray, tags: Sequence[str]) -> Dict[str, TagScore]:
    total = doc_counts.sum(axis=0)
    values = prf(total)
    return {
        t: TagScore(
            float(values[k][0]), float(values[k][1]), float(values[k][2]), int(total[k, REF]), int(total[k, HYP])
        )
        for k, t in enumerate(tags)
    }


def present_tags(dumps: Sequence[TagDump], order: Sequence[str]) -> List[str]:
    found = {t for dump in dumps for doc in dump for s in doc for tok in s for t in (tok["tags"] or [NO_TAG])}
    return [t for t in [*order, NO_TAG] if t in found] + sorted(found - set(order) - {NO_TAG})
