"""contextual-mt add-symbols on a good dictionary: <brk> and <mask> appended after the other words
(their indices kept), and a second run changes nothing. Bad dictionaries are cases of the
bad-input matrix (tests/bad_input/add_symbols.py, ``addsym-*``)."""

from fairseq.data import Dictionary

from contextual_mt.cli import main


def test_add_symbols_keeps_indices(tmp_path, capsys):
    path = tmp_path / "dict.txt"
    path.write_text("hello 5\nworld 3\n")
    before = Dictionary.load(str(path))
    assert main(["add-symbols", str(path)]) == 0
    assert "added <brk> <mask>" in capsys.readouterr().out
    after = Dictionary.load(str(path))
    assert after.index("hello") == before.index("hello") and after.index("<brk>") == len(before)
    assert main(["add-symbols", str(path)]) == 0
    assert "already has" in capsys.readouterr().out


def test_a_failing_second_dictionary_leaves_the_first_unchanged_and_not_said_changed(tmp_path, capsys):
    """A multi-file command changes nothing unless all succeed, and says nothing was changed:
    "dict.txt: added <brk> <mask>" above the error read as the first dictionary changed."""
    path = tmp_path / "dict.txt"
    path.write_text("hello 5\nworld 3\n")
    assert main(["add-symbols", str(path), str(tmp_path / "missing.txt")]) == 1
    out, err = capsys.readouterr()
    assert path.read_text() == "hello 5\nworld 3\n"
    assert out == "" and err.splitlines()[-1].startswith("error:") and "missing.txt" in err
