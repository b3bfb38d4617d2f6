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
import os
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from commandkit.text import read_lines
from contextual_mt.analysis.pos_classes import pos_classes
from contextual_mt.errors import Code, InputError
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
    piece_units: List[int] = field(default_factory=list)  # each subword's unit (EOS excluded; -1: none)


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


_MOSES: Dict[str, Any] = {}  # sacremoses' tokenizers (untyped), by language


def moses_words(words: Sequence[str], lang: str) -> List[str]:
    """``words`` (whitespace-split) with punctuation split off by the Moses tokenizer of ``lang``
    (sacremoses; unknown languages get its generic rules). A word whose tokens would not spell it
    exactly (Moses rewrites a few characters) is kept whole, so the join on characters holds."""
    from sacremoses import MosesTokenizer

    tok = _MOSES.get(lang)
    if tok is None:
        tok = _MOSES[lang] = MosesTokenizer(lang=lang)
    out: List[str] = []
    for w in words:
        parts = tok.tokenize(w, escape=False)
        out.extend(parts if parts and "".join(parts) == w else [w])
    return out


def moses_has_rules(lang: str) -> bool:
    """Whether sacremoses' Moses tokenizer has rules of its own for ``lang`` (its nonbreaking
    prefixes, or the CJK character rules); any other code gets its English ones, silently."""
    from sacremoses.corpus import NonbreakingPrefixes

    return lang in NonbreakingPrefixes().available_langs or lang in ("ja", "ko", "zh", "cjk")


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
    records: List[Dict] = []
    seen: Dict[int, int] = {}
    for lineno, line in enumerate(read_lines(path), start=1):
        try:
            r = json.loads(line)
            _ = (r["line"], r["doc"], r["tokens"], r["token_pcxmi"], r["words"])
            values = [r["sentence_pcxmi"], *r["token_pcxmi"]]
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise InputError(
                f"{path}:{lineno}: not a P-CXMI record ({type(e).__name__}: {e})", code=Code.FORMAT
            ) from None
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
            bad = next(
                v for v in values if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))
            )
            raise InputError(f"{path}:{lineno}: a P-CXMI value is not a finite number ({bad!r})", code=Code.FORMAT)
        if r["line"] in seen:
            raise InputError(
                f"{path}:{lineno}: sentence {r['line']} again (first on line {seen[r['line']]}); "
                "every sentence is one record",
                code=Code.FORMAT,
            )
        seen[r["line"]] = lineno
        records.append(r)
    if not records:
        raise InputError(f"{path}: no P-CXMI records", code=Code.EMPTY)
    return records


def read_tags(path: str) -> List[List[Tuple[str, List[str]]]]:
    """MuDA tags, one list of (token, tags) per sentence in corpus order."""
    from muda.formats.tags import flat_sentences
    from muda.formats.tags import read_tags as read_dump

    return flat_sentences(read_dump(path))


def _check_same_text(what: str, forms: Sequence[str], record: Dict, text: str) -> None:
    if _norm("".join(forms)) != text:
        raise InputError(
            f"{what}: tokens {' '.join(forms)!r} do not match the reference on line {record['line']} "
            f"({record['reference']!r})",
            code=Code.MISMATCH,
        )


def join(
    records: Sequence[Dict],
    annotations: Optional[Sequence[Sentence]] = None,
    annotations_name: str = "annotations",
    tags: Optional[Sequence[List[Tuple[str, List[str]]]]] = None,
    tags_name: str = "tags",
    lang: Optional[str] = None,
) -> List[SentenceRecord]:
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
                raise InputError(
                    f"{annotations_name}: has {len(annotations)} sentences; no annotation for line {r['line']}",
                    code=Code.LINE_COUNT,
                )
            ann = annotations[i]
            _check_same_text(f"{annotations_name}: sentence {i + 1}", ann.forms, r, text)
        if tags is not None:
            if i >= len(tags):
                raise InputError(
                    f"{tags_name}: has {len(tags)} sentences; no tags for line {r['line']}", code=Code.LINE_COUNT
                )
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
        u, piece_units = 0, []
        for (start, _), v in zip(piece_spans, values, strict=True):
            while u + 1 < len(spans) and spans[u][1] <= start:
                u += 1
            if units:
                units[u].pcxmi += v
            piece_units.append(u if units else -1)
        if ann is not None:
            for unit, tok in zip(units, ann.tokens, strict=True):
                unit.upos = tok.upos
                unit.classes = sorted(
                    {c for w in tok.words for c in pos_classes(w.upos, w.feats)}, key=lambda c: (c.count("."), c)
                )
        if tag is not None:
            tag_spans = _spans([t for t, _ in tag])
            for unit, (a, b) in zip(units, spans, strict=True):
                found = {
                    t
                    for (c, d), (_, ts) in zip(tag_spans, tag, strict=True)
                    if (c < b and a < d) or (a == b == c)
                    for t in ts
                }
                unit.tags = sorted(found)
        for unit in units:
            unit.pcxmi = round(unit.pcxmi, 6)
        out.append(
            SentenceRecord(
                r["line"],
                r["doc"],
                r["sentence"],
                r["source"],
                r["reference"],
                r.get("context_sentences", {"source": 0, "target": 0}),
                r["sentence_pcxmi"],
                units,
                piece_units,
            )
        )
    return out


# --- the records of `contextual-mt attribute` (CTI-selected tokens and their context cues) ---

_SIDES = ("source", "target")


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_index(v: object, n: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n


def _parse_attribution(text: str, where: str) -> Dict:
    try:
        a = json.loads(text)
        _ = (a["line"], a["doc"], a["tokens"], a["selected"], a["context"], a["cues"])
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise InputError(
            f"{where}: not an attribution record of `contextual-mt attribute` ({type(e).__name__}: {e})",
            code=Code.FORMAT,
        ) from None
    return a


def _check_attribution_shape(a: Dict, where: str) -> None:
    """Indices in range, so that the viewer and the tables never index outside a record."""
    n = len(a["tokens"])
    if not isinstance(a["selected"], list) or not all(_is_index(t, n) for t in a["selected"]):
        raise InputError(f"{where}: a selected token index is not in 0..{n - 1} ({a['selected']!r})", code=Code.FORMAT)
    lengths = {}
    for c in a["context"]:
        if not (
            isinstance(c, dict)
            and c.get("side") in _SIDES
            and isinstance(c.get("sentence"), int)
            and isinstance(c.get("tokens"), list)
            and all(isinstance(t, str) for t in c["tokens"])
        ):
            raise InputError(f"{where}: a context sentence is not {{side, sentence, tokens}} ({c!r})", code=Code.FORMAT)
        lengths[c["side"], c["sentence"]] = len(c["tokens"])
    selected = set(a["selected"])
    for cue in a["cues"]:
        ok = (
            isinstance(cue, dict)
            and cue.get("target") in selected
            and _is_number(cue.get("score"))
            and _is_index(cue.get("position"), lengths.get((cue.get("side"), cue.get("sentence")), 0))
        )
        if not ok:
            raise InputError(
                f"{where}: a cue points outside the selected tokens or the context, or has no finite score ({cue!r})",
                code=Code.FORMAT,
            )


def _first_difference(a: Sequence[str], b: Sequence[str]) -> str:
    # up to the shorter: the first difference may be the end of one of them
    i = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    at = lambda t: repr(t[i]) if i < len(t) else "the end"  # noqa: E731
    return f"token {i}: {at(a)} here, {at(b)} in the P-CXMI records"


def _check_same_sentence(a: Dict, p: Dict, where: str, pcxmi_name: str) -> None:
    """An attribution record must be of the P-CXMI record's sentence: same document, same reference,
    same subword pieces (the selected indices and the word grouping depend on them)."""
    if a["doc"] != p["doc"]:
        raise InputError(
            f"{where}: sentence {a['line']} is in document {a['doc']!r} here, in "
            f"{p['doc']!r} in {pcxmi_name}: not the same documents",
            code=Code.MISMATCH,
        )
    if "target" in a and a["target"] != p["reference"]:
        raise InputError(
            f"{where}: the target of sentence {a['line']} ({a['target']!r}) is not its reference "
            f"in {pcxmi_name} ({p['reference']!r}); the report is about the references: "
            "attribute them with `contextual-mt attribute --reference`",
            code=Code.MISMATCH,
        )
    if a["tokens"] != p["tokens"]:
        raise InputError(
            f"{where}: the target tokens of sentence {a['line']} differ from {pcxmi_name} "
            f"({_first_difference(a['tokens'], p['tokens'])}); attribute with the model "
            "(and sentencepiece model) that scored P-CXMI",
            code=Code.MISMATCH,
        )


def _check_scored_references(path: str) -> None:
    """An attribution of --hypotheses has the model's translations as target context: its cues are
    not about the references the report shows, even where a hypothesis equals its reference."""
    from contextual_mt.analysis.cxmi_summary import read_summary
    from contextual_mt.scored_corpus import summary_path

    meta = summary_path(path)
    if os.path.exists(meta) and read_summary(meta).get("scored", "reference") != "reference":
        raise InputError(
            f"{meta}: the attribution is of the model's hypotheses "
            f"({read_summary(meta).get('target_file')}); the report is about the references: "
            "attribute them with `contextual-mt attribute --reference`",
            code=Code.MISMATCH,
        )


def read_attribution(path: str, records: Sequence[Dict], pcxmi_name: str = "the P-CXMI records") -> Dict[int, Dict]:
    """The records of ``contextual-mt attribute``, by line, checked against the P-CXMI ``records``:
    the same sentences (each once), documents and target tokens. The first mismatch is an error
    naming this file and its line."""
    _check_scored_references(path)
    by_line = {r["line"]: r for r in records}
    out: Dict[int, Dict] = {}
    lineno = 0
    for lineno, text in enumerate(read_lines(path), start=1):
        where = f"{path}:{lineno}"
        a = _parse_attribution(text, where)
        if a["line"] in out:
            raise InputError(f"{where}: sentence {a['line']} again; every sentence is one record", code=Code.FORMAT)
        p = by_line.get(a["line"])
        if p is None:
            raise InputError(
                f"{where}: sentence {a['line']} has no record in {pcxmi_name} "
                f"({len(records)} sentences): not the same lines",
                code=Code.MISMATCH,
            )
        _check_same_sentence(a, p, where, pcxmi_name)
        _check_attribution_shape(a, where)
        out[a["line"]] = a
    missing = sorted(set(by_line) - set(out))
    if missing:
        raise InputError(
            f"{path}:{lineno + 1}: ends after {len(out)} records, {pcxmi_name} has "
            f"{len(records)}: no attribution of sentence {missing[0]}"
            + (f" and {len(missing) - 1} more" if len(missing) > 1 else "")
            + "; attribute the same lines (and shard) as P-CXMI",
            code=Code.MISMATCH,
        )
    return out


def context_words(a: Dict) -> List[Tuple[str, int, List[Tuple[str, List[int]]]]]:
    """An attribution record's context sentences as (side, -k, words), words grouped from the
    pieces by ``split_words``, each with its piece positions."""
    from contextual_mt.analysis.pcxmi_scorer import split_words

    return [(c["side"], c["sentence"], split_words(c["tokens"])) for c in a["context"]]


def cue_words(a: Dict) -> Dict[Tuple[int, int, int], float]:
    """{(selected piece, context sentence index, context word index): score}: the cues of a record
    by context word; a word cited through several of its pieces keeps the highest score."""
    sentences = context_words(a)
    index = {(side, k): i for i, (side, k, _) in enumerate(sentences)}
    word_of = [{p: w for w, (_, ps) in enumerate(words) for p in ps} for _, _, words in sentences]
    out: Dict[Tuple[int, int, int], float] = {}
    for cue in a["cues"]:
        c = index[cue["side"], cue["sentence"]]
        key = (cue["target"], c, word_of[c][cue["position"]])
        out[key] = max(out.get(key, -math.inf), float(cue["score"]))
    return out
