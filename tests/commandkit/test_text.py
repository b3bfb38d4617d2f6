"""The one reader of user text: the line of a bad byte, lines streamed from an archive."""

import pytest

from commandkit.errors import InputError


def test_a_bad_byte_is_named_at_its_line_far_into_a_file(tmp_path):
    """The line of a byte that is not UTF-8 counts from the file's start (not from a read buffer)."""
    from commandkit.text import read_lines

    (tmp_path / "big").write_bytes(b"".join(b"line %d\n" % k for k in range(1, 5001)) + b"caf\xe9\n")
    with pytest.raises(InputError, match=r"big:5001: not UTF-8"):
        read_lines(str(tmp_path / "big"))


def test_lines_streamed_from_an_archive_follow_the_same_rules():
    from commandkit.text import decoded_lines

    assert list(decoded_lines([b"\xef\xbb\xbfa\r\n", b"\xef\xbb\xbfb\n"], "m.tsv")) == [(1, "a"), (2, "\ufeffb")]
    with pytest.raises(InputError, match=r"m.tsv:2: a NUL byte"):
        list(decoded_lines([b"a\n", b"b\x00\n"], "m.tsv"))
    with pytest.raises(InputError, match=r"m.tsv:2: not UTF-8"):
        list(decoded_lines([b"a\n", b"caf\xe9\n"], "m.tsv"))
