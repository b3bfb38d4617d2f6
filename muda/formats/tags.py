"""The tags dump, in the original MuDA layout: documents -> sentences -> tokens ->
``{"token": ..., "tags": [...]}``."""
from __future__ import annotations

import json
from typing import Dict, List, Sequence, Tuple

from muda.errors import InputError
from muda.io import atomic_write_text, check_input_file, readable_path

TagDump = List[List[List[Dict]]]


def write_tags(path: str, dump: TagDump) -> None:
    atomic_write_text(path, json.dumps(dump, ensure_ascii=False) + "\n")


def read_tags(path: str) -> TagDump:
    check_input_file(path)
    try:
        with open(readable_path(path), encoding="utf-8") as f:
            docs = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not a JSON file ({e})") from None
    d = s = 0
    try:
        for d, doc in enumerate(docs):
            for s, sent in enumerate(doc):
                for tok in sent:
                    if not isinstance(tok["token"], str) or not all(isinstance(t, str) for t in tok["tags"]):
                        raise TypeError("token and tags must be strings")
    except (TypeError, KeyError) as e:
        raise InputError(f"{path}: document {d + 1}, sentence {s + 1}: not the MuDA tags layout "
                         f"(documents -> sentences -> {{\"token\", \"tags\"}}): {e}") from None
    return docs


def flat_sentences(dump: TagDump) -> List[List[Tuple[str, List[str]]]]:
    """One list of (token, tags) per sentence, in corpus order."""
    return [[(t["token"], list(t["tags"])) for t in sent] for doc in dump for sent in doc]


def tag_counts(dump: TagDump, phenomena: Sequence[str]) -> Dict[str, int]:
    counts = {p: 0 for p in phenomena}
    for doc in dump:
        for sent in doc:
            for tok in sent:
                for t in tok["tags"]:
                    counts[t] = counts.get(t, 0) + 1
    return counts
