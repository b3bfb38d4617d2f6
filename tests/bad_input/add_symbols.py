"""Bad-input cases: contextual-mt add-symbols."""

from __future__ import annotations

import os
from typing import Callable, List

from tests.bad_input.core import DIRECTORY, FORMAT, NOT_FOUND, UTF8, Ctx, Fragment, add, at_line, do

GOOD_DICT = "hello 5\nworld 3\n"


def add_symbols_command(c: Ctx) -> None:
    c.command = "contextual-mt"
    good = c.write("dict.good.txt", GOOD_DICT)
    c.argv = ["add-symbols", good]
    c.unchanged = [good]


def dicts(c, second: str):
    c.argv.append(second)
    if os.path.isfile(second):
        c.unchanged.append(second)


def only(c, path):
    c.argv = ["add-symbols", path]
    c.unchanged = [path] if os.path.isfile(path) else []


def addsym_only(make_path: Callable[[Ctx], str], *fragments: Callable[[str], Fragment]):
    """A mutation: add-symbols on the one file ``make_path(c)``; the error must hold each
    ``fragment(path)``."""

    def mutate(c: Ctx) -> List[Fragment]:
        path = make_path(c)
        only(c, path)
        return [fragment(path) for fragment in fragments]

    return mutate


add("addsym-missing", add_symbols_command, do(lambda c: only(c, c.missing("nothere.txt")), "nothere.txt", NOT_FOUND))
add(
    "addsym-directory",
    add_symbols_command,
    addsym_only(
        lambda c: c.mkdir("dictdir"), lambda p: "dictdir", lambda p: DIRECTORY, lambda p: f"{p}: is a directory"
    ),
)
add(
    "addsym-latin1",
    add_symbols_command,
    addsym_only(
        lambda c: c.write("latin1.txt", b"hello 5\ncaf\xe9 3\n"),
        lambda p: "latin1.txt",
        lambda p: UTF8,
        lambda p: at_line("latin1.txt", 2),
        lambda p: f"{p}:2: not UTF-8 text",
    ),
)
add(
    "addsym-line-without-count",
    add_symbols_command,
    addsym_only(
        lambda c: c.write("nocount.txt", "hello 5\nnocount\n"),
        lambda p: at_line("nocount.txt", 2),
        lambda p: f"{p}:2",
        lambda p: FORMAT,
    ),
)
add(
    "addsym-count-not-a-number",
    add_symbols_command,
    do(lambda c: only(c, c.write("badcount.txt", "hello 5\nworld many\n")), at_line("badcount.txt", 2), FORMAT),
)
add(
    "addsym-duplicate-symbol",
    add_symbols_command,
    do(lambda c: only(c, c.write("dup.txt", "hello 5\nworld 3\nhello 2\n")), at_line("dup.txt", 3), FORMAT),
)
add(
    "addsym-blank-line",
    add_symbols_command,
    do(lambda c: only(c, c.write("blank.txt", "hello 5\n\nworld 3\n")), at_line("blank.txt", 2), FORMAT),
)
add(
    "addsym-second-file-bad-line",
    add_symbols_command,
    do(lambda c: dicts(c, c.write("second.txt", "hello 5\nnocount\n")), at_line("second.txt", 2), FORMAT),
)
add(
    "addsym-second-file-missing",
    add_symbols_command,
    do(lambda c: dicts(c, c.missing("second_missing.txt")), "second_missing.txt", NOT_FOUND),
)
add(
    "addsym-second-file-directory",
    add_symbols_command,
    do(lambda c: dicts(c, c.mkdir("second_dir")), "second_dir", DIRECTORY),
)
add(
    "addsym-second-file-latin1",
    add_symbols_command,
    do(lambda c: dicts(c, c.write("second_latin1.txt", b"caf\xe9 3\n")), "second_latin1.txt", UTF8),
)
add(
    "addsym-second-file-count-not-a-number",
    add_symbols_command,
    do(lambda c: dicts(c, c.write("second_count.txt", "hello five\n")), at_line("second_count.txt", 1), FORMAT),
)
