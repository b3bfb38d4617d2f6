"""From links to a line-aligned hypothesis, the alignment records and their statistics.

The rule for what each source line receives (documented in docs/explanations/alignment.md):

* 1-1, 1-2 and 1-b: the line gets its segment(s), as written (two segments joined by what stood
  between them).
* 1-0 (an omission): the line gets an empty hypothesis.
* 2-1, 2-2, and any link of several lines (a merge): the text of the segment(s) is cut at the
  word boundaries where the parts best match the lines' pivots (the fewest word edits in all,
  mwerSegmenter's search, an output sentence's end worth ``Weights.sentence_end`` edits: with a
  reference pivot a tie-break, with a gloss more; then the higher chrF; a
  closing mark such as a comma stays with the part before); each line gets its part, so that no
  word is scored twice (``cut_into``). The alignment record keeps the whole text beside the part.
* an omission beside a link whose text holds the omitted line's words (a short line the output
  ran on into a long one's sentence): the text is cut among them all, and the lines given a part
  join the link (``absorb_omissions``).
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
from itertools import pairwise
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

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
MAX_CUTS = 200  # cut positions whose chrF is compared, among those of fewest word edits
# an omitted line beside a link takes a part of the link's text only when that saves more word
# edits than this share of its pivot's words (at least OMIT_EDITS), and the part's chrF against its
# pivot is at least OMIT_CHRF: a word or two in common by chance is no translation of it
OMIT_SHARE = 0.0
OMIT_EDITS = 1.0
OMIT_CHRF = 0.2
TIE = 1e-3  # a cut not at the end of an output sentence: only a tie-break between cuts of equal edits


def _gaps(text: str) -> List[int]:
    """The character positions where ``text`` may be cut: after a word, never before a closing
    mark (a comma written after a space stays with the part before); in a text written without
    spaces, after a clause mark (``CLAUSE``), else any character."""
    gaps = [m.start() for m in re.finditer(r"\s+", text) if not CLOSING.match(text, m.end())]
    gaps = gaps or [m.start() for m in re.finditer(r"\s+", text)]
    gaps = gaps or [m.end() for m in CLAUSE.finditer(text) if m.end() < len(text)]
    return gaps or list(range(1, len(text)))


def cut(text: str, first: str, second: str, ends: Sequence[int] = (), sentence_end: float = 0.0) -> int:
    """Where to cut ``text`` in two so that the parts best match ``first`` and ``second``: the
    position among ``_gaps`` where the word edits of the two parts against them are fewest
    (mwerSegmenter's measure), a cut at the end of one of the output's sentences (``ends``: where
    they end in ``text``) counting ``sentence_end`` edits fewer (``Weights.sentence_end``: 0 with a
    reference pivot); of equal edits, a sentence end, then the higher sum of chrF, then the earlier
    position."""
    gaps = _gaps(text)
    if not gaps:
        return len(text)
    vocabulary = Vocabulary()
    hyp = vocabulary.encode(text)
    head = prefix_distances(vocabulary.encode(first), hyp)
    tail = prefix_distances(vocabulary.encode(second)[::-1], hyp[::-1])[::-1]
    at = [len(tokens(text[:k])) for k in gaps]
    sentence_ends = set(ends)
    edits = [
        (head[w] + tail[w] - (sentence_end if k in sentence_ends else 0), k not in sentence_ends)
        for k, w in zip(gaps, at, strict=True)
    ]
    fewest = min(edits)
    best = [k for k, e in zip(gaps, edits, strict=True) if e == fewest]
    if len(best) == 1:
        return best[0]
    if len(best) > MAX_CUTS:
        best = best[:: -(-len(best) // MAX_CUTS)]
    p1, p2 = Profile(first), Profile(second)
    return max(best, key=lambda k: (chrf(Profile(text[:k]), p1) + chrf(Profile(text[k:]), p2), -k))


def cuts(
    text: str,
    pivots: Sequence[str],
    ends: Sequence[int] = (),
    omissible: Sequence[bool] = (),
    sentence_end: float = 0.0,
) -> List[int]:
    """Where to cut ``text`` into one part per pivot (the parts' ends, ``len(text)`` last): the
    cuts among ``_gaps`` whose parts differ from their pivots by the fewest word edits in all
    (mwerSegmenter's search: one edit distance of the pivots' words joined against the text's,
    each pivot starting where the one before may end), a cut at one of the output's sentence
    ``ends`` costing ``sentence_end`` fewer, one elsewhere ``TIE`` more. A pivot marked
    ``omissible`` may instead get no part at a cost of its words less ``max(OMIT_EDITS,
    OMIT_SHARE x its words)`` (its part is then empty, its end that of the part before)."""
    vocabulary = Vocabulary()
    hyp = vocabulary.encode(text)
    n = len(hyp)
    words = [0] * (n + 1)  # the text's word position -> the character position of a cut there
    allowed = np.full(n + 1, np.inf)
    allowed[0] = allowed[n] = 0.0
    sentence_ends = set(ends)
    for k in _gaps(text):
        w = len(tokens(text[:k]))
        if 0 < w < n and not np.isfinite(allowed[w]):
            words[w], allowed[w] = k, -sentence_end if k in sentence_ends else TIE
    words[n] = len(text)
    steps = np.arange(n + 1, dtype=np.float64)
    row = np.full(n + 1, np.inf)
    row[0] = 0.0
    tables: List[Tuple[np.ndarray, np.ndarray]] = []  # per pivot: its edit rows, where it was omitted
    for q, pivot in enumerate(pivots):
        start = row + allowed if q else row
        rows = [start]
        current = start
        for word in vocabulary.encode(pivot).tolist():
            moves = np.empty_like(current)
            moves[0] = current[0] + 1
            moves[1:] = np.minimum(current[1:] + 1, current[:-1] + (hyp != word))
            current = np.minimum.accumulate(moves - steps) + steps
            rows.append(current)
        skipped = np.zeros(n + 1, dtype=bool)
        if q < len(omissible) and omissible[q]:
            length = len(rows) - 1
            skip = start + length - max(OMIT_EDITS, OMIT_SHARE * length)
            skipped = skip < current
            current = np.where(skipped, skip, current)
        tables.append((np.array(rows), skipped))
        row = current
    ends_out = [0] * len(pivots)
    w = n
    for q in range(len(pivots) - 1, -1, -1):  # back through each pivot's rows to where it started
        ends_out[q] = words[w]
        table, skipped_at = tables[q]
        if skipped_at[w]:
            continue
        r = len(table) - 1
        pivot_words = vocabulary.encode(pivots[q])
        while r > 0:  # at r = 0, w is where the pivot's part starts: the end of the part before
            here = table[r][w]
            if w > 0 and _same(here, table[r - 1][w - 1] + (hyp[w - 1] != pivot_words[r - 1])):
                r, w = r - 1, w - 1
            elif _same(here, table[r - 1][w] + 1):
                r -= 1
            else:
                w -= 1
    return ends_out


def _same(a: float, b: float) -> bool:
    return abs(a - b) < 1e-7


def cut_into(
    text: str,
    pivots: Sequence[str],
    ends: Sequence[int] = (),
    omissible: Sequence[bool] = (),
    sentence_end: float = 0.0,
) -> List[str]:
    """``text`` cut into one part per pivot (``cuts``; ``ends``: where the output's sentences end
    in ``text``, a cut there worth ``sentence_end`` word edits), then each two neighbouring parts
    cut again between them (``cut``: the same edits, ties to the higher chrF); a pivot marked
    ``omissible`` may get an empty part."""
    if len(pivots) == 1:
        return [text.strip()]
    if len(pivots) == 2 and not any(omissible):
        k = cut(text, pivots[0], pivots[1], ends, sentence_end) if text else 0
        return [text[:k].strip(), text[k:].strip()]
    bounds = [0, *cuts(text, pivots, ends, omissible, sentence_end)]
    for q in range(len(pivots) - 1):
        a, b, c = bounds[q], bounds[q + 1], bounds[q + 2]
        if a < b < c:
            local = [e - a for e in ends if a < e < c]
            bounds[q + 1] = a + cut(text[a:c], pivots[q], pivots[q + 1], local, sentence_end)
    return [text[a:b].strip() for a, b in pairwise(bounds)]


Parts = Dict[Tuple[int, int], List[str]]  # a link's lines -> each line's part of its text, where decided


def absorb_omissions(
    d: DocumentAlignment, pivots: Sequence[str], index: Sequence[int], sentence_end: float = 0.0
) -> Tuple[List[Link], Parts]:
    """``d.links`` with each run of omitted lines offered to the link before it, then to the link
    after it: the link's text is cut among the link's lines and the omitted ones (``cut_into``, an
    omitted line ``omissible``), and taken where more lines then have a part; lines at either end
    left without a part stay omissions. A short line whose output ran on into the sentence of a long
    one beside it (a headline, a post without a full stop) gets its words back instead of leaving
    them scored on its neighbour."""
    links = list(d.links)
    parts: Parts = {}
    changed = True
    while changed:  # each change gives more lines a part: it ends
        changed = False
        x = 0
        while x < len(links) and not changed:
            if links[x].kind != "1-0":
                x += 1
                continue
            y = x
            while y < len(links) and links[y].kind == "1-0":
                y += 1
            for at, lo, hi in ((x - 1, x - 1, y), (y, x, y + 1)):
                if 0 <= at < len(links) and _linked(links[at]):
                    new = _join(d, links[lo:hi], links[at], pivots, index, parts, sentence_end)
                    if new is not None:
                        links[lo:hi] = new
                        changed = True
                        break
            x = y
    return links, parts


def _linked(link: Link) -> bool:
    return link.lines[1] > 0 and link.segments[1] > 0


def _join(
    d: DocumentAlignment,
    group: List[Link],
    link: Link,
    pivots: Sequence[str],
    index: Sequence[int],
    parts: Parts,
    sentence_end: float = 0.0,
) -> Optional[List[Link]]:
    """The omitted lines of ``group`` (``link`` and the omissions just before or after it) given
    parts of ``link``'s text: the group's links anew (omissions at either end, one link of the lines
    between), with ``parts`` set; None where no more lines have a part than before."""
    first, count = group[0].lines[0], sum(g.lines[1] for g in group)
    (i, a), (j, b) = link.lines, link.segments
    lines = [pivots[index[first + q]] for q in range(count)]
    omissible = [not i <= first + q < i + a for q in range(count)]
    whole = span_text(d.text, d.spans, j, b)
    ends = [len(span_text(d.text, d.spans, j, c)) for c in range(1, b)]
    refused: Set[int] = set()
    while True:  # a part of chrF under OMIT_CHRF against its line's pivot is no translation of it
        kept = [q for q in range(count) if q not in refused]
        got = cut_into(whole, [lines[q] for q in kept], ends, [omissible[q] for q in kept], sentence_end)
        cut_parts = [""] * count
        for q, part in zip(kept, got, strict=True):
            cut_parts[q] = part
        poor = {
            q
            for q in kept
            if omissible[q] and cut_parts[q] and chrf(Profile(cut_parts[q]), Profile(lines[q])) < OMIT_CHRF
        }
        if not poor:
            break
        refused |= poor
    given = [q for q in range(count) if cut_parts[q]]
    before = parts.get(link.lines) or []
    if len(given) <= (sum(1 for p in before if p) if before else a):
        return None
    lo, hi = given[0], given[-1] + 1
    merged = Link((first + lo, hi - lo), (j, b), chrf(Profile(whole), Profile(" ".join(lines[lo:hi]))))
    parts[merged.lines] = cut_parts[lo:hi]
    omitted = [Link((first + q, 1), (j if q < lo else j + b, 0), None) for q in [*range(lo), *range(hi, count)]]
    return [*omitted[:lo], merged, *omitted[lo:]]


def resolve(
    d: DocumentAlignment, pivots: Sequence[str], lines: int, index: Sequence[int], sentence_end: float = 0.0
) -> None:
    """Fill ``d.hypotheses`` (``lines``, one per line of the document) and ``d.records`` by the
    rule above (``sentence_end``: the word edits a merge's cut at an output sentence's end is
    worth, ``Weights.sentence_end``). The links number the aligned lines; ``index`` maps them to the document's lines
    (lines whose pivot is empty are not aligned: they get an empty hypothesis, link "empty")."""
    hyps = [""] * lines
    records: List[Dict] = []
    n = len(index)
    pending: List[str] = []  # additions before the document's first line
    d.links, decided = absorb_omissions(d, pivots, index, sentence_end)
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
        line_pivots = [pivots[index[i + q]] for q in range(a)]
        parts = decided.get(link.lines) or (
            cut_into(whole, line_pivots, ends, sentence_end=sentence_end) if a > 1 else [whole]
        )
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
