"""Joins P-CXMI records with target annotations (CoNLL-U or stanza) and MuDA tags.

The three layers may tokenize differently (sentencepiece words, UD tokens, tagger tokens), so
they are matched on characters: the text with whitespace removed must be the same in every layer,
or the line is reported. The unit of analysis is the word: the annotation token when there is one
(else the tag token, else the reference's words split off their punctuation by sacremoses'
Moses tokenizer, so that "wurde," counts as "wurde" and ","). A unit's P-CXMI is the sum over the
subwords that start inside it: exact by the chain rule when boundaries agree, the usual case.
"""
from __future__ import annotations

import json
import math
import unicodedata
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from contextual_mt.errors import ContextualMTError
from muda.io import read_lines
from contextual_mt.analysis.pos_classes import pos_classes
from muda.annotation import Sentence


@dataclass
class Unit:
    form: str
    pcxmi: float
    upos: Optional[str] = None
    classes: List[str] = field(default_factory=list)
    tags: List[str] = field(default_factory=list)


@dataclass
class SentenceRecord:
    line: int
    doc: str
    sentence: int
    source: str
    reference: str
    context: Dict[str, int]
    sentence_pcxmi: float
    units: List[Unit]


def _norm(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def _spans(forms: Sequence[str]) -> List[Tuple[int, int]]:
    out, pos = [], 0
    for f in forms:
        n = len(_norm(f))
        out.append((pos, pos + n))
        pos += n
    return out


def _piece_text(piece: str) -> str:
    return piece.replace("▁", "")[:-2] if piece.endswith("@@") else piece.replace("▁", "")


_MOSES: Dict[str, object] = {}


def moses_words(words: Sequence[str], lang: str) -> List[str]:
    """``words`` (whitespace-split) with punctuation split off by the Moses tokenizer of ``lang``
    (sacremoses; unknown languages get its generic rules). A word whose tokens would not spell it
    exactly (Moses rewrites a few characters) is kept whole, so the join on characters holds."""
    from sacremoses import MosesTokenizer

    tok = _MOSES.get(lang)
    if tok is None:
        tok = _MOSES[lang] = MosesTokenizer(lang=lang)
    out = []
    for w in words:
        parts = tok.tokenize(w, escape=False)
        out.extend(parts if parts and "".join(parts) == w else [w])
    return out


def word_unit(annotations_name: Optional[str], tags_name: Optional[str], lang: Optional[str]) -> str:
    """What a report's word is, in words (report.md and report.json say it)."""
    if annotations_name:
        return f"tokens of {annotations_name}"
    if tags_name:
        return f"tokens of the MuDA tags {tags_name}"
    return f"words of the references, punctuation split off (Moses tokenizer, {lang or 'generic'} rules)"


def read_pcxmi(path: str) -> List[Dict]:
    """The records of ``contextual-mt cxmi``, checked: each sentence once, every value a finite
    number (a duplicated or damaged record would change every mean silently)."""
    records, seen = [], {}
    for lineno, line in enumerate(read_lines(path), start=1):
        try:
            r = json.loads(line)
            _ = (r["line"], r["doc"], r["tokens"], r["token_pcxmi"], r["words"])
            values = [r["sentence_pcxmi"], *r["token_pcxmi"]]
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ContextualMTError(f"{path}:{lineno}: not a P-CXMI record ({type(e).__name__}: {e})") from None
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
            bad = next(v for v in values if not (isinstance(v, (int, float)) and not isinstance(v, bool)
                                                 and math.isfinite(v)))
            raise ContextualMTError(f"{path}:{lineno}: a P-CXMI value is not a finite number ({bad!r})")
        if r["line"] in seen:
            raise ContextualMTError(f"{path}:{lineno}: sentence {r['line']} again (first on line {seen[r['line']]}); "
                                    "every sentence is one record")
        seen[r["line"]] = lineno
        records.append(r)
    if not records:
        raise ContextualMTError(f"{path}: no P-CXMI records")
    return records


def read_tags(path: str) -> List[List[Tuple[str, List[str]]]]:
    """MuDA tags, one list of (token, tags) per sentence in corpus order."""
    from muda.formats.tags import flat_sentences, read_tags as read_dump

    return flat_sentences(read_dump(path))


def _check_same_text(what: str, forms: Sequence[str], record: Dict, text: str) -> None:
    if _norm("".join(forms)) != text:
        raise ContextualMTError(
            f"{what}: tokens {' '.join(forms)!r} do not match the reference on line {record['line']} "
            f"({record['reference']!r})")


def join(records: Sequence[Dict], annotations: Optional[Sequence[Sentence]] = None,
         annotations_name: str = "annotations", tags: Optional[Sequence[List[Tuple[str, List[str]]]]] = None,
         tags_name: str = "tags", lang: Optional[str] = None) -> List[SentenceRecord]:
    """One SentenceRecord per P-CXMI record. ``annotations`` and ``tags`` are indexed by line - 1.
    Without either, the words are Moses-tokenized with ``lang``'s rules (None: generic)."""
    out = []
    for r in records:
        i = r["line"] - 1
        pieces, values = r["tokens"][:-1], r["token_pcxmi"][:-1]  # the last token is EOS
        piece_texts = [_piece_text(p) for p in pieces]
        piece_spans, text = _spans(piece_texts), _norm("".join(piece_texts))
        ann = tag = None
        if annotations is not None:
            if i >= len(annotations):
                raise ContextualMTError(f"{annotations_name}: has {len(annotations)} sentences; "
                                        f"no annotation for line {r['line']}")
            ann = annotations[i]
            _check_same_text(f"{annotations_name}: sentence {i + 1}", ann.forms, r, text)
        if tags is not None:
            if i >= len(tags):
                raise ContextualMTError(f"{tags_name}: has {len(tags)} sentences; no tags for line {r['line']}")
            tag = tags[i]
            _check_same_text(f"{tags_name}: sentence {i + 1}", [t for t, _ in tag], r, text)
        if ann is not None:
            forms = ann.forms
        elif tag is not None:
            forms = [t for t, _ in tag]
        else:
            forms = moses_words(r["words"], lang or "en")
        spans = _spans(forms)
        units = [Unit(f, 0.0) for f in forms]
        u = 0
        for (start, _), v in zip(piece_spans, values):
            while u + 1 < len(spans) and spans[u][1] <= start:
                u += 1
            if units:
                units[u].pcxmi += v
        if ann is not None:
            for unit, tok in zip(units, ann.tokens):
                unit.upos = tok.upos
                unit.classes = sorted({c for w in tok.words for c in pos_classes(w.upos, w.feats)},
                                      key=lambda c: (c.count("."), c))
        if tag is not None:
            tag_spans = _spans([t for t, _ in tag])
            for unit, (a, b) in zip(units, spans):
                found = {t for (c, d), (_, ts) in zip(tag_spans, tag) if c < b and a < d or (a == b == c)
                         for t in ts}
                unit.tags = sorted(found)
        for unit in units:
            unit.pcxmi = round(unit.pcxmi, 6)
        out.append(SentenceRecord(r["line"], r["doc"], r["sentence"], r["source"], r["reference"],
                                  r.get("context_sentences", {"source": 0, "target": 0}),
                                  r["sentence_pcxmi"], units))
    return out
