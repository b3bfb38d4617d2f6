"""Document outputs whose alignment is known: line-aligned translations joined into documents
after merging, splitting, dropping and adding sentences, as a whole-document translation does.
The bench (``bench/alignment.py``) and the tests measure the aligner against the known links.

* merge (rate ``merge``): two adjacent lines become one sentence (the first's final punctuation
  becomes a comma, written as the text writes its marks, the second's capital a small letter);
* split (``split``): a line with a comma inside becomes two sentences there;
* drop (``drop``): a line's translation is left out;
* add (``add``): a line of another document is inserted after a line.

Each line takes part in at most one edit; a split needs a comma away from the ends, so fewer
lines than asked may be split (``Perturbed.edits`` counts what was done)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from commandkit.documents import document_spans
from docalign.dp import Link
from docalign.links import DocumentAlignment
from docalign.segmenter import Span

END = ".!?"


@dataclass(frozen=True)
class Rates:
    merge: float = 0.10  # of adjacent pairs
    split: float = 0.05
    drop: float = 0.03
    add: float = 0.02


@dataclass
class Perturbed:
    """One perturbed document: its text, its sentences' spans and the true links."""

    doc: str
    first_line: int
    lines: int  # the document's source lines
    text: str
    spans: List[Span]
    links: List[Link]
    edits: Dict[str, int] = field(default_factory=dict)
    # per line, the words of the output that translate it, as written ("" for a dropped line; a
    # merged sentence cut after the comma that joined its two lines; a split line's two sentences)
    truth: List[str] = field(default_factory=list)
    added: Dict[int, List[str]] = field(default_factory=dict)  # line -> the sentences added after it

    def alignment(self) -> DocumentAlignment:
        return DocumentAlignment(self.doc, self.first_line, self.text, list(self.spans), list(self.links))


def _merge(first: str, second: str) -> Tuple[str, str]:
    """The two parts of the merged sentence: the first line ending with a comma (space-separated
    where the text is tokenized, its final mark written after a space), the second."""
    first = first.rstrip()
    head = first.rstrip(END)
    comma = " ," if head != first and head.endswith(" ") else ","
    tail = second.strip()
    if len(tail) > 1 and tail[0].isupper() and tail[1].islower():
        tail = tail[0].lower() + tail[1:]
    return head.rstrip() + comma, tail


def _split_point(text: str) -> Optional[int]:
    """A comma in the middle 60% of the line, followed by more words."""
    n = len(text)
    commas = [k for k, c in enumerate(text) if c == "," and 0.2 * n <= k <= 0.8 * n and text[k + 1 :].strip()]
    return commas[len(commas) // 2] if commas else None


def _split(text: str, k: int) -> Tuple[str, str]:
    head, tail = text[:k].rstrip(), text[k + 1 :].strip()
    tail = tail[0].upper() + tail[1:]
    return head + " .", tail if tail.rstrip()[-1:] in END else tail + " ."


def perturb(lines: Sequence[str], ids: Sequence[str], rates: Rates = Rates(), seed: int = 1) -> List[Perturbed]:
    """The documents of ``lines`` (one translation per line of ``ids``), perturbed."""
    rng = random.Random(seed)
    spans = document_spans(ids)
    n = len(lines)
    edit: List[Optional[str]] = [None] * n
    order = list(range(n))
    rng.shuffle(order)
    last_of_doc = {b - 1 for _, b in spans}
    wanted = {"merge": round(rates.merge * n), "split": round(rates.split * n), "drop": round(rates.drop * n)}
    for i in order:
        if not lines[i].strip() or edit[i]:
            continue
        for kind in ("merge", "split", "drop"):
            if not wanted[kind]:
                continue
            if kind == "merge" and (i in last_of_doc or edit[i + 1] or not lines[i + 1].strip()):
                continue
            if kind == "split" and _split_point(lines[i]) is None:
                continue
            edit[i] = kind
            if kind == "merge":
                edit[i + 1] = "merged"
            wanted[kind] -= 1
            break
    adds = set(rng.sample(range(n), round(rates.add * n)))
    out = []
    for start, end in spans:
        sentences: List[str] = []
        links: List[Link] = []
        truth: List[str] = [""] * (end - start)
        added: Dict[int, List[str]] = {}
        counts = dict.fromkeys(("merge", "split", "drop", "add"), 0)
        for line, i in enumerate(range(start, end)):
            k = len(sentences)
            if edit[i] == "merged":
                pass
            elif not lines[i].strip() or edit[i] == "drop":
                links.append(Link((line, 1), (k, 0), None))
                counts["drop"] += edit[i] == "drop"
            elif edit[i] == "merge":
                first, second = _merge(lines[i], lines[i + 1])
                sentences.append(f"{first} {second}")
                truth[line], truth[line + 1] = first, second
                links.append(Link((line, 2), (k, 1), None))
                counts["merge"] += 1
            elif edit[i] == "split":
                parts = _split(lines[i], _split_point(lines[i]) or 0)
                sentences.extend(parts)
                truth[line] = " ".join(parts)
                links.append(Link((line, 1), (k, 2), None))
                counts["split"] += 1
            else:
                sentences.append(lines[i].strip())
                truth[line] = lines[i].strip()
                links.append(Link((line, 1), (k, 1), None))
            if i in adds:
                other = rng.choice([j for j in range(n) if lines[j].strip() and not start <= j < end] or [i])
                links.append(Link((line + 1, 0), (len(sentences), 1), None))
                sentences.append(lines[other].strip())
                added.setdefault(line, []).append(lines[other].strip())
                counts["add"] += 1
        text, doc_spans, at = "", [], 0
        for s in sentences:
            doc_spans.append((at, at + len(s)))
            at += len(s) + 1
        text = " ".join(sentences)
        out.append(Perturbed(ids[start], start, end - start, text, doc_spans, links, counts, truth, added))
    return out


def line_coverage(d: DocumentAlignment, lines: int) -> List[Optional[Span]]:
    """For each line of the document: the characters of the output linked to it (the whole
    segment(s) of its link; None for an omission)."""
    cover: List[Optional[Span]] = [None] * lines
    for link in d.links:
        (i, a), (j, b) = link.lines, link.segments
        if a and b:
            for q in range(a):
                cover[i + q] = (d.spans[j][0], d.spans[j + b - 1][1])
    return cover


def link_accuracy(predicted: Sequence[DocumentAlignment], truth: Sequence[Perturbed]) -> float:
    """The fraction of source lines linked to exactly the output characters the truth links them to."""
    right = total = 0
    for p, t in zip(predicted, truth, strict=True):
        n = t.lines
        got, want = line_coverage(p, n), line_coverage(t.alignment(), n)
        right += sum(g == w for g, w in zip(got, want, strict=True))
        total += n
    return right / total if total else 1.0
