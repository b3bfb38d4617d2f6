"""Bad input: one clear message naming the file, non-zero exit, no checkpoint written."""
import shutil

import pytest

from tests.helpers import BIN, run, train


def assert_clean_failure(proc, *needles, save_dir=None):
    assert proc.returncode != 0
    err = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert err[-1].startswith("error: "), err[-3:]
    for needle in needles:
        assert needle in err[-1], err[-1]
    if save_dir is not None:
        assert not list(save_dir.glob("*.pt"))


@pytest.fixture
def broken_bin(data_bin, tmp_path):
    dest = tmp_path / "bin"
    shutil.copytree(data_bin, dest)
    return dest


def test_docids_line_count_mismatch(broken_bin, tmp_path):
    ids = broken_bin / "valid.en-fr.docids"
    ids.write_text("\n".join(ids.read_text().splitlines()[:-1]) + "\n")
    proc = train(broken_bin, tmp_path / "ck", epochs=1, check=False)
    assert_clean_failure(proc, str(ids), "lines", save_dir=tmp_path / "ck")


def test_src_tgt_count_mismatch(broken_bin, tmp_path):
    for ext in ("bin", "idx"):
        shutil.copy(broken_bin / f"test.en-fr.fr.{ext}", broken_bin / f"valid.en-fr.fr.{ext}")
    proc = train(broken_bin, tmp_path / "ck", epochs=1, check=False)
    assert_clean_failure(proc, "valid.en-fr.en.bin", "valid.en-fr.fr.bin", save_dir=tmp_path / "ck")


def test_empty_docids(broken_bin, tmp_path):
    (broken_bin / "train.en-fr.docids").write_text("")
    proc = train(broken_bin, tmp_path / "ck", epochs=1, check=False)
    assert_clean_failure(proc, "train.en-fr.docids", "empty", save_dir=tmp_path / "ck")


def test_negative_context_size(data_bin, tmp_path):
    proc = train(data_bin, tmp_path / "ck", "--source-context-size", "-1", epochs=1, check=False)
    assert_clean_failure(proc, "--source-context-size", save_dir=tmp_path / "ck")


@pytest.mark.parametrize("symbol", ["<brk>", "<mask>"])
def test_dictionary_without_context_symbols(broken_bin, tmp_path, symbol):
    path = broken_bin / "dict.fr.txt"
    path.write_text("".join(l + "\n" for l in path.read_text().splitlines() if not l.startswith(symbol)))
    proc = train(broken_bin, tmp_path / "ck", epochs=1, check=False)
    assert_clean_failure(proc, str(path), symbol, "contextual-mt add-symbols", save_dir=tmp_path / "ck")


def test_add_symbols_keeps_indices(tmp_path):
    from fairseq.data import Dictionary

    path = tmp_path / "dict.txt"
    path.write_text("hello 5\nworld 3\n")
    before = Dictionary.load(str(path))
    proc = run([str(BIN / "contextual-mt"), "add-symbols", str(path)])
    assert "added <brk> <mask>" in proc.stdout
    after = Dictionary.load(str(path))
    assert after.index("hello") == before.index("hello") and after.index("<brk>") == len(before)
    assert "already has" in run([str(BIN / "contextual-mt"), "add-symbols", str(path)]).stdout
    bad = tmp_path / "bad.txt"
    bad.write_text("hello 5\nnocount\n")
    proc = run([str(BIN / "contextual-mt"), "add-symbols", str(bad)], check=False)
    assert proc.returncode == 1 and f"{bad}:2" in proc.stderr


def test_missing_dictionary_for_the_language(data_bin, tmp_path):
    proc = train(data_bin, tmp_path / "ck", "-s", "de", "-t", "fr", epochs=1, check=False)
    assert_clean_failure(proc, f"{data_bin / 'dict.de.txt'}: dictionary not found (for -s de)",
                         save_dir=tmp_path / "ck")
    proc = train(tmp_path / "nowhere", tmp_path / "ck", epochs=1, check=False)
    assert_clean_failure(proc, f"{tmp_path / 'nowhere'}: data directory not found", save_dir=tmp_path / "ck")


def test_add_symbols_on_a_directory_or_latin1_file(tmp_path):
    latin = tmp_path / "dict.xx.txt"
    latin.write_bytes("hello 5\nnaïve 3\n".encode("latin-1"))
    proc = run([str(BIN / "contextual-mt"), "add-symbols", str(latin)], check=False)
    assert_clean_failure(proc, f"{latin}:2: not UTF-8 text")
    assert proc.returncode == 1 and latin.read_bytes() == "hello 5\nnaïve 3\n".encode("latin-1")
    folder = tmp_path / "dict.yy.txt"
    folder.mkdir()
    proc = run([str(BIN / "contextual-mt"), "add-symbols", str(folder)], check=False)
    assert_clean_failure(proc, f"{folder}: is a directory")
    assert proc.returncode == 1 and not list(folder.iterdir())
