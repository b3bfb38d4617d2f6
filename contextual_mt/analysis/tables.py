"""Aggregate P-CXMI over joined units: per POS class, per tag, per vocabulary item, top tokens."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from contextual_mt.analysis.join import SentenceRecord, context_words, cue_words

NO_TAG, WITH_TAG, ALL = "no tag", "with tag", "all"


@dataclass
class Row:
    key: str
    count: int
    mean: float
    auc: Optional[float] = None  # ROC-AUC of this group's P-CXMI against untagged units


def roc_auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """Probability that a random positive scores above a random negative (ties count half):
    the Mann-Whitney U statistic over both sizes."""
    p, n = np.asarray(positive, float), np.asarray(negative, float)
    if len(p) == 0 or len(n) == 0:
        return float("nan")
    values = np.concatenate([p, n])
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    sorted_values = values[order]
    # average ranks over ties
    boundaries = np.flatnonzero(np.diff(sorted_values)) + 1
    starts = np.concatenate([[0], boundaries])
    ends = np.concatenate([boundaries, [len(values)]])
    for s, e in zip(starts, ends, strict=True):
        ranks[order[s:e]] = (s + e + 1) / 2
    return float((ranks[: len(p)].sum() - len(p) * (len(p) + 1) / 2) / (len(p) * len(n)))


def _rows(groups: Dict[str, List[float]], min_count: int = 1) -> List[Row]:
    rows = [Row(k, len(v), float(np.mean(v))) for k, v in groups.items() if len(v) >= min_count]
    return sorted(rows, key=lambda r: (-r.mean, r.key))


def by_pos(sentences: Iterable[SentenceRecord], min_count: int = 1) -> List[Row]:
    groups: Dict[str, List[float]] = defaultdict(list)
    for s in sentences:
        for u in s.units:
            for c in u.classes:
                groups[c].append(u.pcxmi)
    return _rows(groups, min_count)


def by_tag(sentences: Sequence[SentenceRecord]) -> List[Row]:
    groups: Dict[str, List[float]] = defaultdict(list)
    for s in sentences:
        for u in s.units:
            for t in u.tags:
                groups[t].append(u.pcxmi)
            groups[WITH_TAG if u.tags else NO_TAG].append(u.pcxmi)
    untagged = groups.get(NO_TAG, [])
    rows = _rows(groups)
    for r in rows:
        if r.key != NO_TAG:
            r.auc = roc_auc(groups[r.key], untagged)
    return rows


def by_vocabulary(sentences: Iterable[SentenceRecord], min_count: int = 5, lowercase: bool = True) -> List[Row]:
    groups: Dict[str, List[float]] = defaultdict(list)
    for s in sentences:
        for u in s.units:
            groups[u.form.lower() if lowercase else u.form].append(u.pcxmi)
    return _rows(groups, min_count)


def top_tokens(sentences: Sequence[SentenceRecord], n: int = 50) -> List[Tuple[SentenceRecord, int]]:
    """The ``n`` units with the highest P-CXMI, as (sentence, unit index)."""
    scored = [(u.pcxmi, s.line, j) for s in sentences for j, u in enumerate(s.units)]
    scored.sort(key=lambda x: (-x[0], x[1], x[2]))
    by_line = {s.line: s for s in sentences}
    return [(by_line[line], j) for _, line, j in scored[:n]]


def context_of(sentence: SentenceRecord, by_line: Dict[int, SentenceRecord]) -> Dict[str, List[str]]:
    """The previous sentences the model saw as context (those present in the records)."""

    def side(k: int, attr: str) -> List[str]:
        lines = range(sentence.line - k, sentence.line)
        return [getattr(by_line[i], attr) for i in lines if i in by_line and by_line[i].doc == sentence.doc]

    return {
        "source": side(sentence.context.get("source", 0), "source"),
        "target": side(sentence.context.get("target", 0), "reference"),
    }


def _fmt(x: Optional[float], digits: int = 3) -> str:
    return "" if x is None or x != x else f"{x:.{digits}f}"


def rows_markdown(rows: Sequence[Row], title: str, key_name: str, limit: Optional[int] = None) -> str:
    with_auc = any(r.auc is not None for r in rows)
    head = f"| {key_name} | count | mean P-CXMI |" + (" ROC-AUC vs no tag |" if with_auc else "")
    lines = [f"### {title}", "", head, "|---|---:|---:|" + ("---:|" if with_auc else "")]
    for r in rows[:limit]:
        key = r.key.replace("|", "\\|")
        lines.append(f"| {key} | {r.count} | {r.mean:.4f} |" + (f" {_fmt(r.auc)} |" if with_auc else ""))
    if limit is not None and len(rows) > limit:
        lines.append(f"\n({len(rows) - limit} more rows in the CSV)")
    return "\n".join(lines) + "\n"


def rows_csv(rows: Sequence[Row], key_name: str) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([key_name, "count", "mean_pcxmi", "roc_auc_vs_no_tag"])
    for r in rows:
        w.writerow([r.key, r.count, f"{r.mean:.6f}", _fmt(r.auc, 6)])
    return buf.getvalue()


def top_rows(sentences: Sequence[SentenceRecord], n: int) -> List[Dict]:
    by_line = {s.line: s for s in sentences}
    out = []
    for rank, (s, j) in enumerate(top_tokens(sentences, n), start=1):
        u = s.units[j]
        ctx = context_of(s, by_line)
        out.append(
            {
                "rank": rank,
                "token": u.form,
                "pcxmi": u.pcxmi,
                "pos": u.upos or "",
                "tags": u.tags,
                "line": s.line,
                "doc": s.doc,
                "sentence": s.reference,
                "source": s.source,
                "target_context": ctx["target"],
                "source_context": ctx["source"],
            }
        )
    return out


def top_markdown(rows: Sequence[Dict]) -> str:
    lines = [
        "### Top tokens",
        "",
        "| # | token | P-CXMI | POS | tags | line | sentence | target context |",
        "|---:|---|---:|---|---|---:|---|---|",
    ]
    for r in rows:

        def esc(t: str) -> str:
            return t.replace("|", "\\|")

        lines.append(
            f"| {r['rank']} | **{esc(r['token'])}** | {r['pcxmi']:.4f} | {r['pos']} | "
            f"{', '.join(r['tags'])} | {r['line']} | {esc(r['sentence'])} | "
            f"{esc(' / '.join(r['target_context']))} |"
        )
    return "\n".join(lines) + "\n"


def top_csv(rows: Sequence[Dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "rank",
            "token",
            "pcxmi",
            "pos",
            "tags",
            "line",
            "doc",
            "sentence",
            "source",
            "target_context",
            "source_context",
        ]
    )
    for r in rows:
        w.writerow(
            [
                r["rank"],
                r["token"],
                f"{r['pcxmi']:.6f}",
                r["pos"],
                " ".join(r["tags"]),
                r["line"],
                r["doc"],
                r["sentence"],
                r["source"],
                " ||| ".join(r["target_context"]),
                " ||| ".join(r["source_context"]),
            ]
        )
    return buf.getvalue()


# --- (target word, cue word) pairs of the attribution records ---


@dataclass
class PairRow:
    group: str  # a tag, "no tag", or "all"
    target: str  # the context-sensitive target word (lowercased)
    side: str  # where the cue is: the source or the target context
    cue: str  # the cue word (lowercased)
    count: int
    mean_score: float  # mean cue score over the pair's occurrences


def _word_pairs(s: SentenceRecord, a: Dict) -> Dict[Tuple[int, int, int], Tuple[float, List[str]]]:
    """{(target word, context sentence, cue word): (score, tags)} of one sentence: one occurrence per
    word pair (the highest score over their pieces); tags: those of the units holding the
    selected pieces (the report's words may be cut otherwise than sentencepiece's)."""
    from contextual_mt.analysis.pcxmi_scorer import split_words

    word_of = {p: w for w, (_, ps) in enumerate(split_words(a["tokens"][:-1])) for p in ps}
    out: Dict[Tuple[int, int, int], Tuple[float, List[str]]] = {}
    for (t, c, w), score in cue_words(a).items():
        if t not in word_of:  # EOS: selection never picks it, but it is no word
            continue
        u = s.piece_units[t] if t < len(s.piece_units) else -1
        tags = s.units[u].tags if u >= 0 else []
        key = (word_of[t], c, w)
        old_score, old_tags = out.get(key, (score, []))
        out[key] = (max(old_score, score), sorted(set(old_tags) | set(tags)))
    return out


def cue_pairs(sentences: Sequence[SentenceRecord], attribution: Dict[int, Dict], tagged: bool) -> List[PairRow]:
    """Every (target word, cue word) pair by group: "all", then (with tags) each tag the word has
    and "no tag"; within a group, most frequent first (ties: higher mean score, then the words)."""
    from contextual_mt.analysis.pcxmi_scorer import split_words

    groups: Dict[Tuple[str, str, str, str], List[float]] = defaultdict(list)
    for s in sentences:
        a = attribution[s.line]
        targets = [w for w, _ in split_words(a["tokens"][:-1])]
        contexts = context_words(a)
        for (tw, c, w), (score, tags) in _word_pairs(s, a).items():
            side, _, words = contexts[c]
            pair = (targets[tw].lower(), side, words[w][0].lower())
            for g in [ALL] + ((tags or [NO_TAG]) if tagged else []):
                groups[(g, *pair)].append(score)
    rows = [PairRow(g, t, side, c, len(v), float(np.mean(v))) for (g, t, side, c), v in groups.items()]
    order = {ALL: 0, NO_TAG: 2}
    return sorted(
        rows, key=lambda r: (order.get(r.group, 1), r.group, -r.count, -r.mean_score, r.target, r.side, r.cue)
    )


def top_pairs(rows: Sequence[PairRow], n: int) -> List[PairRow]:
    """The first ``n`` rows of each group (``rows`` as ``cue_pairs`` sorts them)."""
    seen: Dict[str, int] = defaultdict(int)
    out = []
    for r in rows:
        seen[r.group] += 1
        if seen[r.group] <= n:
            out.append(r)
    return out


def pairs_markdown(rows: Sequence[PairRow], n: int) -> str:
    lines = [
        f"### Most frequent (target word, cue word) pairs per tag (top {n})",
        "",
        "Context-sensitive target words (CTI) and the context words they rely on (CCI), from the attribution "
        "records; words are lowercased; a pair counts once per sentence and word pair, with its highest "
        "cue score over their subwords.",
        "",
        "| group | target word | cue side | cue word | count | mean cue score |",
        "|---|---|---|---|---:|---:|",
    ]
    esc = lambda t: t.replace("|", "\\|")  # noqa: E731
    for r in top_pairs(rows, n):
        lines.append(f"| {esc(r.group)} | {esc(r.target)} | {r.side} | {esc(r.cue)} | {r.count} | {r.mean_score:.4f} |")
    if not rows:
        lines.append("| (no cues) | | | | 0 | |")
    return "\n".join(lines) + "\n"


def pairs_csv(rows: Sequence[PairRow]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["group", "rank", "target_word", "cue_side", "cue_word", "count", "mean_cue_score"])
    rank: Dict[str, int] = defaultdict(int)
    for r in rows:
        rank[r.group] += 1
        w.writerow([r.group, rank[r.group], r.target, r.side, r.cue, r.count, f"{r.mean_score:.6f}"])
    return buf.getvalue()
