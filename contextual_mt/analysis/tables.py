"""Aggregate P-CXMI over joined units: per POS class, per tag, per vocabulary item, top tokens."""
from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from contextual_mt.analysis.join import SentenceRecord

NO_TAG, WITH_TAG = "no tag", "with tag"


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
    for s, e in zip(starts, ends):
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
    return {"source": side(sentence.context.get("source", 0), "source"),
            "target": side(sentence.context.get("target", 0), "reference")}


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
        out.append({"rank": rank, "token": u.form, "pcxmi": u.pcxmi, "pos": u.upos or "", "tags": u.tags,
                    "line": s.line, "doc": s.doc, "sentence": s.reference, "source": s.source,
                    "target_context": ctx["target"], "source_context": ctx["source"]})
    return out


def top_markdown(rows: Sequence[Dict]) -> str:
    lines = ["### Top tokens", "", "| # | token | P-CXMI | POS | tags | line | sentence | target context |",
             "|---:|---|---:|---|---|---:|---|---|"]
    for r in rows:
        def esc(t: str) -> str:
            return t.replace("|", "\\|")
        lines.append(f"| {r['rank']} | **{esc(r['token'])}** | {r['pcxmi']:.4f} | {r['pos']} | "
                     f"{', '.join(r['tags'])} | {r['line']} | {esc(r['sentence'])} | "
                     f"{esc(' / '.join(r['target_context']))} |")
    return "\n".join(lines) + "\n"


def top_csv(rows: Sequence[Dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["rank", "token", "pcxmi", "pos", "tags", "line", "doc", "sentence", "source",
                "target_context", "source_context"])
    for r in rows:
        w.writerow([r["rank"], r["token"], f"{r['pcxmi']:.6f}", r["pos"], " ".join(r["tags"]), r["line"],
                    r["doc"], r["sentence"], r["source"], " ||| ".join(r["target_context"]),
                    " ||| ".join(r["source_context"])])
    return buf.getvalue()
