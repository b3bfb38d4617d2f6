"""The context symbols, defined once: ``<brk>`` closes each context sentence, ``<mask>``
replaces source tokens under CoWord dropout. ``add_context_symbols`` appends them to a fairseq
dictionary file; appending keeps every existing index, so binarized data stays valid.
"""
from __future__ import annotations

from typing import List, Sequence

from contextual_mt.errors import ContextualMTError
from muda.io import atomic_write_lines, check_input_file, read_lines

BRK = "<brk>"
MASK = "<mask>"
CONTEXT_SYMBOLS = (BRK, MASK)


def add_context_symbols(path: str, symbols: Sequence[str] = CONTEXT_SYMBOLS) -> List[str]:
    """Append the missing ``symbols`` to the dictionary at ``path``; return those added."""
    check_input_file(path, "dictionary")
    lines = read_lines(path)
    present = set()
    for lineno, line in enumerate(lines, start=1):
        fields = line.rstrip().split(" ")
        if len(fields) < 2:
            raise ContextualMTError(f"{path}:{lineno}: expected '<symbol> <count>', got {line!r}")
        present.add(fields[0])
    added = [s for s in symbols if s not in present]
    if added:  # inside `outputs(...)` (the CLI): written when every dictionary has been checked
        atomic_write_lines(path, [*lines, *(f"{s} 1" for s in added)])
    return added
