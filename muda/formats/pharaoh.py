"""Word alignments in Pharaoh format (``0-0 1-2``): source token i aligned to target token j."""

from __future__ import annotations

from typing import List, Sequence, Set, Tuple

from commandkit.errors import Code, InputError
from commandkit.text import read_lines

Alignment = Set[Tuple[int, int]]


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()  # str.isdigit alone takes '²', which int() does not


def parse_pharaoh(line: str, where: str) -> Alignment:
    pairs = set()
    for item in line.split():
        i, sep, j = item.partition("-")
        if not sep or not _is_number(i) or not _is_number(j):
            raise InputError(f"{where}: {item!r} is not a Pharaoh pair like '3-4'", code=Code.FORMAT)
        pairs.add((int(i), int(j)))
    return pairs


def read_pharaoh(path: str) -> List[Alignment]:
    return [parse_pharaoh(line, f"{path}:{n}") for n, line in enumerate(read_lines(path), start=1)]


def check_alignment_ranges(
    alignments: Sequence[Alignment], src_lens: Sequence[int], tgt_lens: Sequence[int], path: str
) -> None:
    for n, (pairs, ls, lt) in enumerate(zip(alignments, src_lens, tgt_lens, strict=True), start=1):
        for i, j in sorted(pairs):
            if i >= ls or j >= lt:
                raise InputError(
                    f"{path}:{n}: alignment {i}-{j} out of range: the sentence pair has "
                    f"{ls} source and {lt} target tokens",
                    code=Code.FORMAT,
                )


def format_pharaoh(pairs: Alignment) -> str:
    return " ".join(f"{i}-{j}" for i, j in sorted(pairs))
