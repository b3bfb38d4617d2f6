"""The MuDA tags dump and the docids beside it are read through the one reader of user text."""

import pytest

from commandkit.documents import read_docids
from commandkit.errors import InputError


def test_the_reader_drops_a_bom_and_refuses_nul_bytes(tmp_path):
    """A byte-order mark (Windows editors write one) stuck to the first id: line 1 became a
    document of its own. Only the file's first bytes are a BOM; elsewhere U+FEFF is text."""
    from commandkit.text import read_lines
    from muda.formats.tags import read_tags

    (tmp_path / "ids").write_bytes(b"\xef\xbb\xbftalk 1\r\ntalk 1\ntalk 2\n")
    assert read_docids(str(tmp_path / "ids")) == ["talk 1", "talk 1", "talk 2"]
    (tmp_path / "mid").write_bytes("a\n\ufeffb\n".encode())
    assert read_lines(str(tmp_path / "mid")) == ["a", "\ufeffb"]
    (tmp_path / "t.json").write_bytes(b'\xef\xbb\xbf[[[{"token": "il", "tags": ["pronouns"]}]]]\n')
    assert read_tags(str(tmp_path / "t.json")) == [[[{"token": "il", "tags": ["pronouns"]}]]]
    (tmp_path / "nul").write_bytes(b"one\ntwo\nth\x00ree\n")
    with pytest.raises(InputError, match=r"nul:3: a NUL byte"):
        read_lines(str(tmp_path / "nul"))
    (tmp_path / "utf16").write_bytes("talk 1\n".encode("utf-16"))
    with pytest.raises(InputError, match=r"utf16:1: not UTF-8 text \(UTF-16: save it as UTF-8\)"):
        read_lines(str(tmp_path / "utf16"))
