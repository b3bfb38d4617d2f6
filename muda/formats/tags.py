"""The tags dump, in the original MuDA layout: documents -> sentences -> tokens ->
``{"token": ..., "tags": [...]}``."""

from __future__ import annotations

import json
from typing import Dict, List, Sequence, Tuple

from commandkit.errors import Code, InputError
from commandkit.outputs import atomic_write_text
from commandkit.text import check_input_file, read_text

TagDump = List[List[List[Dict]]]


def write_tags(path: str, dump: TagDump) -> None:
    atomic_write_text(path, json.dumps(dump, ensure_ascii=False) + "\n")


def read_tags(path: str) -> TagDump:
    check_input_file(path, "tags file")
    text = read_text(path)
    try:
        docs = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not a JSON file ({e})", code=Code.FORMAT) from None
    _check_layout(docs, path)
    return docs


_LAYOUT = 'the MuDA tags layout: documents -> sentences -> {"token": "...", "tags": ["...", ...]}'


def _check_layout(docs: object, path: str) -> None:
    """Every level of the dump, so that a string where a list belongs (read letter by letter)
    is an error naming its place, not a silent wrong count."""
    if not isinstance(docs, list):
        raise InputError(f"{path}: not {_LAYOUT} (the top level is {_kind(docs)})", code=Code.FORMAT)
    for d, doc in enumerate(docs, start=1):
        if not isinstance(doc, list):
            raise InputError(
                f"{path}: document {d} is {_kind(doc)}, not a list of sentences ({_LAYOUT})", code=Code.FORMAT
            )
        for s, sent in enumerate(doc, start=1):
            if not isinstance(sent, list):
                raise InputError(
                    f"{path}: document {d}, sentence {s} is {_kind(sent)}, not a list of tokens ({_LAYOUT})",
                    code=Code.FORMAT,
                )
            for t, tok in enumerate(sent, start=1):
                if not _is_token(tok):
                    raise InputError(
                        f"{path}: document {d}, sentence {s}, token {t}: {json.dumps(tok)[:60]} is "
                        f"not a token of {_LAYOUT}",
                        code=Code.FORMAT,
                    )


def _kind(value: object) -> str:
    """What a JSON value is, in JSON's words."""
    for t, name in (
        (bool, "true/false"),
        (dict, "an object"),
        (list, "a list"),
        (str, "a string"),
        ((int, float), "a number"),
    ):
        if isinstance(value, t):
            return name
    return "null"


def _is_token(tok: object) -> bool:
    return (
        isinstance(tok, dict)
        and isinstance(tok.get("token"), str)
        and isinstance(tok.get("tags"), list)
        and all(isinstance(t, str) for t in tok["tags"])
    )


def flat_sentences(dump: TagDump) -> List[List[Tuple[str, List[str]]]]:
    """One list of (token, tags) per sentence, in corpus order."""
    return [[(t["token"], list(t["tags"])) for t in sent] for doc in dump for sent in doc]


def tag_counts(dump: TagDump, phenomena: Sequence[str]) -> Dict[str, int]:
    counts = dict.fromkeys(phenomena, 0)
    for doc in dump:
        for sent in doc:
            for tok in sent:
                for t in tok["tags"]:
                    counts[t] = counts.get(t, 0) + 1
    return counts
