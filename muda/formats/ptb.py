"""Penn Treebank bracketed trees (.mrg files), read as the ellipsis classifier's training data:
the words of each tree, and whether it contains the ellipsis trace ``*?*``."""

from __future__ import annotations

import re
from typing import Iterator, Tuple

from commandkit.errors import Code, InputError
from commandkit.text import read_lines

_LEAF = re.compile(r"\(([^()\s]+)\s+([^()\s]+)\)")


def read_ptb_trees(path: str) -> Iterator[Tuple[str, bool, int]]:
    """(sentence text, has ellipsis, line number) for each top-level tree of a .mrg-style file."""
    text = "\n".join(read_lines(path))  # a missing file, a directory, non-UTF-8 bytes: one line naming it
    depth, start, line, start_line = 0, None, 1, 1
    for pos, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch == "(":
            if depth == 0:
                start, start_line = pos, line
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise InputError(f"{path}:{line}: unbalanced ')'", code=Code.FORMAT)
            if depth == 0 and start is not None:
                tree = text[start : pos + 1]
                words = [w for tag, w in _LEAF.findall(tree) if tag != "-NONE-"]
                if words:
                    yield " ".join(words), "*?*" in tree, start_line
                start = None
    if depth != 0:
        raise InputError(f"{path}:{start_line}: tree not closed", code=Code.FORMAT)
