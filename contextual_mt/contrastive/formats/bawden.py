"""Bawden et al. (2018): the EN-FR anaphora and lexical-choice sets (DiscEvalMT).

``anaphora.json``: entries with ``src`` (previous, current) and ``trg``, a list of blocks each
holding a ``correct`` (or ``semi-correct``) and an ``incorrect`` (previous, current) translation
and a ``type`` (m.sg, f.pl, ...). ``lexical-choice.json``: entries with a ``type`` (repet,
disambig) and ``examples``, each with ``src`` and ``trg`` holding ``correct``/``incorrect``.
Every block is one contrastive pair, one previous sentence of context on each side; the text
files written by the authors' ``json2rawtext.py`` (``*.current.{en,fr}``, ``*.prev.{en,fr}``)
list the correct candidate then the incorrect one, pair after pair, entries in the numeric order
of their keys; ``scripts/evaluate.py`` reads one score per line in that order and counts a pair
right when the correct translation's score is strictly lower. It also counts the entries whose
pairs are all right ("blocks"); so does the summary here. ``--context-files`` may give those four files (e.g.
after your own preprocessing): their text is then scored, on the JSON's structure.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from commandkit.text import read_lines
from contextual_mt.contrastive.sets import Group, files_by_role, load_json, register_format
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.interface import ContextPair

TEXT_ROLES = ("prev.en", "current.en", "prev.fr", "current.fr")
# where, categories, candidates, entry key
Block = Tuple[str, Dict[str, str], List[Tuple[Tuple[str, str], Tuple[str, str]]], str]


def _number(path: str, key: str) -> int:
    try:
        return int(key)
    except ValueError:
        raise InputError(
            f"{path}: entry key {key!r} is not a number (the scorer orders entries by it)", code=Code.FORMAT
        ) from None


def _load_json(path: str) -> Dict:
    return load_json(path, dict, "a Bawden et al. test set (expected a JSON object of numbered entries)")


def _two(path: str, key: str, what: str, value) -> Tuple[str, str]:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(s, str) for s in value)):
        raise InputError(
            f"{path}: entry {key}: {what} must be a list of two sentences (previous, current)", code=Code.FORMAT
        )
    return value[0], value[1]


def _blocks(path: str, data: Dict) -> List[Block]:
    blocks: List[Block] = []
    # the scorer reads the entries in the numeric order of their keys
    for key, entry in sorted(data.items(), key=lambda kv: _number(path, kv[0])):
        if not isinstance(entry, dict):
            raise InputError(f"{path}: entry {key}: not an object", code=Code.FORMAT)
        if "examples" in entry:  # lexical choice
            examples = entry["examples"]
            items = [
                (ex.get("src"), ex.get("trg"), entry.get("type")) if isinstance(ex, dict) else (None, None, None)
                for ex in (examples if isinstance(examples, list) else [])
            ]
        elif "trg" in entry:  # anaphora
            trg = entry["trg"]
            items = [
                (entry.get("src"), t, t.get("type") if isinstance(t, dict) else None)
                for t in (trg if isinstance(trg, list) else [])
            ]
        else:
            raise InputError(
                f"{path}: entry {key}: has neither 'trg' (anaphora) nor 'examples' (lexical choice)", code=Code.FORMAT
            )
        if not items:
            raise InputError(f"{path}: entry {key}: no examples", code=Code.EMPTY)
        for n, (src, trg, kind) in enumerate(items):
            where = f"{path}: entry {key}, example {n}"
            if not isinstance(trg, dict):
                raise InputError(f"{where}: 'trg' must be an object with 'correct' and 'incorrect'", code=Code.FORMAT)
            good = "correct" if "correct" in trg else "semi-correct" if "semi-correct" in trg else None
            if good is None or "incorrect" not in trg:
                raise InputError(
                    f"{where}: needs a 'correct' (or 'semi-correct') and an 'incorrect' translation", code=Code.FORMAT
                )
            source = _two(path, key, "src", src)
            candidates = [
                (source, _two(path, key, good, trg[good])),
                (source, _two(path, key, "incorrect", trg["incorrect"])),
            ]
            categories = {"type": str(kind) if kind is not None else "?"}
            if good == "semi-correct":
                categories["correct translation"] = "semi-correct"
            elif "examples" not in entry:
                categories["correct translation"] = "correct"
            blocks.append((where, categories, candidates, key))
    return blocks


def _text_files(files: Sequence[str], n_lines: int) -> Dict[str, List[str]]:
    """The four json2rawtext files, each with ``n_lines`` lines."""
    texts = {}
    for role, path in files_by_role(files, TEXT_ROLES, "json2rawtext.py").items():
        lines = read_lines(path)
        if len(lines) != n_lines:
            raise InputError(
                f"{path}: has {len(lines)} lines, but the test set has {n_lines} candidates", code=Code.LINE_COUNT
            )
        texts[role] = lines
    return texts


@register_format
class BawdenFormat:
    name = "bawden"
    source_lang, target_lang = "en", "fr"
    tokenized = False
    rule = "beats_all"  # per pair: the correct translation's score is strictly lower

    def scorer(self, path: str, scores: str) -> str:
        kind = "lexical_choice" if "examples" in next(iter(_load_json(path).values()), {}) else "anaphora"
        return f"python3 scripts/evaluate.py {path} {kind} {scores}"

    def read(self, path: str, context_files: Sequence[str]) -> List[Group]:
        blocks = _blocks(path, _load_json(path))
        texts = _text_files(context_files, 2 * len(blocks)) if context_files else None
        groups, line = [], 0
        for where, categories, candidates, key in blocks:
            pairs = []
            for (src_prev, src_cur), (tgt_prev, tgt_cur) in candidates:
                if texts is not None:
                    src_prev, src_cur = texts["prev.en"][line], texts["current.en"][line]
                    tgt_prev, tgt_cur = texts["prev.fr"][line], texts["current.fr"][line]
                pairs.append(ContextPair(src_cur, tgt_cur, (src_prev,), (tgt_prev,)))
                line += 1
            groups.append(Group(pairs, 0, categories, where, block=key))
        return groups
