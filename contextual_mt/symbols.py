"""The context symbols, defined once: ``<brk>`` closes each context sentence, ``<mask>``
replaces source tokens under CoWord dropout. ``add_context_symbols`` appends them to a fairseq
dictionary file; appending keeps every existing index, so binarized data stays valid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from commandkit.options import option
from commandkit.outputs import atomic_write_lines
from commandkit.text import check_input_file, read_lines
from contextual_mt.errors import Code, ContextualMTError

BRK = "<brk>"
MASK = "<mask>"
CONTEXT_SYMBOLS = (BRK, MASK)
# fairseq's own: the special symbols every dictionary starts with (not written in its file), and
# the filler it pads a dictionary it builds with (madeupword0000, madeupword0001, ...)
FAIRSEQ_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")
FILLER = "madeupword"


@dataclass
class AddSymbolsOptions:
    """``contextual-mt add-symbols``: the fairseq dictionaries the context symbols are appended to."""

    dicts: List[str] = option(
        positional=True, nargs="+", default=[], help="dict.*.txt files written by fairseq-preprocess"
    )


def add_context_symbols(path: str, symbols: Sequence[str] = CONTEXT_SYMBOLS) -> List[str]:
    """Append the missing ``symbols`` to the dictionary at ``path``; return those added."""
    check_input_file(path, "dictionary")
    lines = read_lines(path)
    present = set()
    for lineno, line in enumerate(lines, start=1):
        word, count, overwrite = _dictionary_entry(line)
        if word is None or not count.isdigit():
            raise ContextualMTError(f"{path}:{lineno}: expected '<symbol> <count>', got {line!r}", code=Code.FORMAT)
        if word in present and not overwrite:
            raise ContextualMTError(
                f"{path}:{lineno}: symbol {word!r} appears twice; fairseq cannot load this dictionary", code=Code.FORMAT
            )
        present.add(word)
    added = [s for s in symbols if s not in present]
    if added:  # inside `outputs(...)` (the CLI): written when every dictionary has been checked
        atomic_write_lines(path, [*lines, *(f"{s} 1" for s in added)])
    return added


def _dictionary_entry(line: str) -> Tuple[Optional[str], str, bool]:
    """A dictionary line as fairseq reads it: the word is everything before the last space (it
    may contain spaces), then the count, then an optional '#fairseq:overwrite' flag."""
    parts = line.rstrip().rsplit(" ", 1)
    if len(parts) < 2:
        return None, "", False
    word, count = parts
    overwrite = count == "#fairseq:overwrite"
    if overwrite:
        parts = word.rsplit(" ", 1)
        if len(parts) < 2:
            return None, "", False
        word, count = parts
    return word, count, overwrite
