"""From links to a line-aligned hypothesis, the alignment records and their statistics.

The rule for what each source line receives (documented in docs/explanations/alignment.md):

* 1-1, 1-2 and 1-b: the line gets its segment(s), as written (two segments joined by what stood
  between them).
* 1-0 (an omission): the line gets an empty hypothesis.
* 2-1, 2-2, and any link of several lines (a merge): the text of the segment(s) is cut in two at
  the word boundary where the two parts best match the two lines' pivots (the fewest word edits,
  then the sum of their chrF; a closing mark such as a comma stays with the part before); each
  line gets its part, so that no word is scored twice (of more lines, the first line's part off the rest, then the rest
  likewise: ``cut_into``). The alignment record keeps the whole text beside the part.
* 0-1 (an addition): the segment is appended to the hypothesis of the line before it (of the
  line after it at a document's start; of the document's first line when its source is all
  empty), so that every word the system wrote is scored, as a line-aligned output with an extra
  sentence would be; the record says where it went.

With no merge, split, omission or addition, the hypothesis is the segments themselves: a document
output of a line-aligned translation evaluates to the same numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Sequence

from docalign.chrf import Profile, chrf
from docalign.dp import Link
from docalign.segmenter import LINE_BREAK, Span
from docalign.words import Vocabulary, prefix_distances, tokens

KINDS = ("1-1", "1-0", "0-1", "1-2", "2-1", "2-2")


@dataclass
class DocumentAlignment:
    """One document: its output text, its segments' spans, the links, and its lines' hypotheses."""

    doc: str
    first_line: int  # 0-based index of the document's first line in the source
    text: str
    spans: List[Span]
    links: List[Link]
    hypotheses: List[str] = field(default_factory=list)
    records: List[Dict] = field(default_factory=list)


def span_text(text: str, spans: Sequence[Span], start: int, count: int) -> str:
    """Segments ``start`` to ``start + count`` as written, a line break (LF, CR LF or CR) read as
    a space: a hypothesis is one line of the aligned file, whatever reads it."""
    if not count:
        return ""
    return LINE_BREAK.sub(" ", text[spans[start][0] : spans[start + count - 1][1]])


# an ideographic comma, fullwidth comma, semicolon and colon, and their ASCII forms
CLAUSE = re.compile("[\u3001\uff0c\uff1b\uff1a,;:]+")
# a mark that closes what comes before it: never the first thing of the second part of a cut
CLOSING = re.compile("[\u3001\u3002\uff0c\uff1b\uff1a\uff01\uff1f,;:.!?)\\]}»\u201d\u2019…]")
SENTENCE_END = 2  # word edits a cut at the end of an output's sentence is worth (``cut``)
MAX_CUTS = 200  # cut positions whose chrF is compared, among those of fewest word edits


def cut(text: str, first: str, second: str, ends: Sequence[int] = ()) -> int:
    """Where to cut ``text`` in two so that the parts best match ``first`` and ``second``: the
    whitespace position where the word edits of the two parts against them are fewest
    (mwerSegmenter's measure; ties to the higher sum of chrF, then the earlier position), never
    before a closing mark (a comma written after a space stays with the part before). In a text
    written without spaces, after a clause mark (``CLAUSE``), else a character position. ``ends``:
    where the output's sentences end in ``text``: a cut there is preferred to one that saves up to
    ``SENTENCE_END`` word edits elsewhere (a system that translated line by line ended a sentence
    at the line's end; a word or two more or less in common with the pivots is weaker evidence)."""
    gaps = [m.start() for m in re.finditer(r"\s+", text) if not CLOSING.match(text, m.end())]
    gaps = gaps or [m.start() for m in re.finditer(r"\s+", text)]
    gaps = gaps or [m.end() for m in CLAUSE.finditer(text) if m.end() < len(text)]
    gaps = gaps or list(range(1, len(text)))
    if not gaps:
        return len(text)
    vocabulary = Vocabulary()
    hyp = vocabulary.encode(text)
    head = prefix_distances(vocabulary.encode(first), hyp)
    tail = prefix_distances(vocabulary.encode(second)[::-1], hyp[::-1])[::-1]
    at = [len(tokens(text[:k])) for k in gaps]
    sentence_ends = set(ends)
    edits = [head[w] + tail[w] - (SENTENCE_END if k in sentence_ends else 0) for k, w in zip(gaps, at, strict=True)]
    fewest = min(edits)
    best = [k for k, e in zip(gaps, edits, strict=True) if e == fewest]
    if len(best) == 1:
        return best[0]
    if len(best) > MAX_CUTS:
        best = best[:: -(-len(best) // MAX_CUTS)]
    p1, p2 = Profile(first), Profile(second)
    return max(best, key=lambda k: (chrf(Profile(text[:k]), p1) + chrf(Profile(text[k:]), p2), -k))


def cut_into(text: str, pivots: Sequence[str], ends: Sequence[int] = ()) -> List[str]:
    """``text`` cut into one part per pivot: the first part off the rest (``cut`` against the
    first pivot and the others joined), then the rest likewise; ``ends``: where the output's
    sentences end in ``text``."""
    parts: List[str] = []
    rest, offset = text, 0  # the rest, and where it starts in text
    for q in range(len(pivots) - 1):
        local = [e - offset for e in ends if e > offset]
        k = cut(rest, pivots[q], " ".join(pivots[q + 1 :]), local) if rest else 0
        parts.append(rest[:k].strip())
        after = rest[k:]
        offset += k + len(after) - len(after.lstrip())
        rest = after.strip()
    return [*parts, rest]


def resolve(d: DocumentAlignment, pivots: Sequence[str], lines: int, index: Sequence[int]) -> None:
    """Fill ``d.hypotheses`` (``lines``, one per line of the document) and ``d.records`` by the
    rule above. The links number the aligned lines; ``index`` maps them to the document's lines
    (lines whose pivot is empty are not aligned: they get an empty hypothesis, link "empty")."""
    hyps = [""] * lines
    records: List[Dict] = []
    n = len(index)
    pending: List[str] = []  # additions before the document's first line
    for link in d.links:
        (i, a), (j, b) = link.lines, link.segments
        whole = span_text(d.text, d.spans, j, b)
        base = {
            "doc": d.doc,
            "link": link.kind,
            "segments": list(range(j, j + b)),
            "spans": [list(d.spans[k]) for k in range(j, j + b)],
            "output": whole,
            "score": None if link.score is None else round(link.score, 6),
        }
        if a == 0:
            target = index[i - 1] if i > 0 else None
            if target is None:
                pending.append(whole)
            else:
                hyps[target] = f"{hyps[target]} {whole}".strip()
            records.append({"line": None, **base, "attached_to": None if target is None else d.first_line + target + 1})
            continue
        ends = [len(span_text(d.text, d.spans, j, c)) for c in range(1, b)]  # the sentences' ends in whole
        parts = cut_into(whole, [pivots[index[i + q]] for q in range(a)], ends) if a > 1 else [whole]
        for q in range(a):
            hyps[index[i + q]] = parts[q]
            records.append({"line": d.first_line + index[i + q] + 1, **base, "text": parts[q]})
    if pending:  # to the first aligned line; to the first line where none is (a source all empty)
        first = index[0] if n else 0
        hyps[first] = " ".join([*pending, hyps[first]]).strip()
        for r in records:
            if r["line"] is None and r["attached_to"] is None:
                r["attached_to"] = d.first_line + first + 1
    for k in sorted(set(range(lines)) - set(index)):
        empty: Dict[str, Any] = {
            "doc": d.doc,
            "link": "empty",
            "segments": [],
            "spans": [],
            "output": "",
            "score": None,
        }
        records.append({"line": d.first_line + k + 1, **empty, "text": hyps[k]})
    d.hypotheses, d.records = hyps, sorted(records, key=_order)


def _order(record: Dict) -> float:
    """Records in line order, an addition after the line it is attached to."""
    if record["line"] is not None:
        return record["line"]
    return (record["attached_to"] or 0) + 0.5


def statistics(documents: Sequence[DocumentAlignment]) -> Dict:
    """Counts of each link type and what they mean (omissions, additions, merges, splits), and
    the mean chrF of the links that pair lines with segments."""
    counts = dict.fromkeys(KINDS, 0)  # and 1-b, a-b of paragraph lines where there are any
    scores: List[float] = []
    for d in documents:
        for link in d.links:
            counts[link.kind] = counts.get(link.kind, 0) + 1
            if link.score is not None:
                scores.append(link.score)
    of = {k: tuple(map(int, k.split("-"))) for k in counts}
    counts = {k: counts[k] for k in sorted(counts, key=lambda k: (KINDS.index(k) if k in KINDS else len(KINDS), of[k]))}
    return {
        "documents": len(documents),
        "lines": sum(len(d.hypotheses) for d in documents),
        "empty_lines": sum(len(d.hypotheses) - sum(link.lines[1] for link in d.links) for d in documents),
        "segments": sum(len(d.spans) for d in documents),
        "links": counts,
        "omissions": counts["1-0"],
        "additions": counts["0-1"],
        "merges": sum(v for k, v in counts.items() if of[k][0] >= 2),
        "splits": sum(v for k, v in counts.items() if of[k][0] == 1 and of[k][1] >= 2),
        "mean_link_score": round(sum(scores) / len(scores), 4) if scores else None,
    }


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary(stats: Dict) -> str:
    """The statistics in one line, as every command prints them: ``aligned 1644 lines to 1546
    output sentences: 164 merges, 82 splits, 49 omissions, 33 additions; mean link chrF 0.884``."""
    score = stats["mean_link_score"]
    counts = ", ".join(_count(stats[k + "s"], k) for k in ("merge", "split", "omission", "addition"))
    unscored = stats.get("links_over_model_positions")
    over = f"; {_count(unscored, 'candidate link')} over the model's positions scored without it" if unscored else ""
    return (
        f"aligned {_count(stats['lines'], 'line')} to {_count(stats['segments'], 'output sentence')}: {counts}; "
        f"mean link chrF {'-' if score is None else f'{score:.3f}'}{over}"
    )
