"""The context symbols, defined once: ``<brk>`` closes each context sentence, ``<mask>``
replaces source tokens under CoWord dropout. ``add_context_symbols`` appends them to a fairseq
dictionary file; appending keeps every existing index, so binarized data stays valid.
"""
from __future__ import annotations

import os
from typing import List, Sequence

from contextual_mt.errors import ContextualMTError

BRK = "<brk>"
MASK = "<mask>"
CONTEXT_SYMBOLS = (BRK, MASK)


def add_context_symbols(path: str, symbols: Sequence[str] = CONTEXT_SYMBOLS) -> List[str]:
    """Append the missing ``symbols`` to the dictionary at ``path``; return those added."""
    if not os.path.exists(path):
        raise ContextualMTError(f"{path}: dictionary not found")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    present = set()
    for lineno, line in enumerate(lines, start=1):
        fields = line.rstrip().split(" ")
        if len(fields) < 2:
            raise ContextualMTError(f"{path}:{lineno}: expected '<symbol> <count>', got {line!r}")
        present.add(fields[0])
    added = [s for s in symbols if s not in present]
    if added:
        tmp = f"{path}.tmp.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("".join(f"{line}\n" for line in lines))
            f.write("".join(f"{s} 1\n" for s in added))
        os.replace(tmp, path)
    return added
