"""Text files given by the user, read alike: UTF-8, a byte-order mark dropped, bytes that are not
UTF-8 and NUL bytes refused naming the file and line; a file's content hash. A file this command
has written already (staged by ``outputs``) is read from its temporary.
"""

from __future__ import annotations

import codecs
import hashlib
import os
from typing import Iterable, Iterator, List, Tuple

from commandkit.errors import Code, InputError
from commandkit.outputs import readable_path


def check_input_file(path: str, what: str = "file") -> None:
    """An input path must be an existing file: one line naming it otherwise."""
    if not path:
        raise InputError(f"an empty path was given for the {what}", code=Code.OPTION_MISSING)
    real = readable_path(path)  # this command may have written it
    if os.path.isdir(real):
        raise InputError(f"{path}: is a directory, not a {what}", code=Code.IS_DIRECTORY)
    if not os.path.exists(real):
        raise InputError(f"{path}: {what} not found", code=Code.NOT_FOUND)


def decode_text(data: bytes, name: str, first_line: int = 1) -> str:
    """The one decoder of user text (files, and lines streamed from archives): UTF-8, a
    byte-order mark at the start of a file dropped (it would stick to the first document id or
    sentence), bytes that are not UTF-8 and NUL characters refused with ``name:LINE``.
    ``first_line``: the line number of ``data``'s first line (1: the start of the file)."""
    if first_line == 1 and data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    elif first_line == 1 and data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise InputError(f"{name}:1: not UTF-8 text (UTF-16: save it as UTF-8)", code=Code.NOT_UTF8)
    try:  # all of it at once: the offset of a bad byte is the data's, not a buffer's
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = first_line + data.count(b"\n", 0, e.start)
        raise InputError(f"{name}:{line}: not UTF-8 text ({e.reason})", code=Code.NOT_UTF8) from None
    nul = text.find("\0")
    if nul >= 0:
        line = first_line + text.count("\n", 0, nul)
        raise InputError(f"{name}:{line}: a NUL byte inside the line (is this a text file?)", code=Code.NOT_UTF8)
    return text


def decoded_lines(raw: Iterable[bytes], name: str) -> Iterator[Tuple[int, str]]:
    """(line number, line without its break) of byte lines, e.g. an archive member's, each
    through ``decode_text``."""
    for lineno, line in enumerate(raw, start=1):
        yield lineno, decode_text(line, name, lineno).rstrip("\r\n")


def read_text(path: str) -> str:
    """The text of a UTF-8 file given by the user (see ``decode_text``): what every line reader
    and JSON input reads through. Line breaks as in Python's text mode (CR LF and CR become LF)."""
    check_input_file(path)
    with open(readable_path(path), "rb") as f:
        text = decode_text(f.read(), path)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def read_lines(path: str) -> List[str]:
    """Lines of a UTF-8 text file, without line breaks (see ``read_text``)."""
    text = read_text(path)
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") or not text else lines


def file_sha256(path: str) -> str:
    """Content hash of a file, streamed (checkpoints can be large)."""
    h = hashlib.sha256()
    with open(readable_path(path), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
