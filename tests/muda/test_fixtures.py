"""The MuDA rules on hand-written CoNLL-U fixtures (tests/fixtures/muda), through `tag_files`:
one document per language with positives and near-misses (see the comments of each case)."""

from pathlib import Path

import pytest

from muda.formats.conllu import read_conllu
from muda.formats.tags import read_tags
from muda.tagger import TagOptions, tag_files

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "muda"


def expected(path):
    out = []
    for line in path.read_text().splitlines():
        tags = {}
        if line.strip() != "-":
            for item in line.split():
                i, _, names = item.partition(":")
                tags[int(i)] = names.split(",")
        out.append(tags)
    return out


@pytest.mark.parametrize("lang", ["fr", "de", "es", "ja", "ru", "zh"])
def test_hand_written_fixture(lang, tmp_path):
    src, tgt = FIXTURES / f"{lang}.src.conllu", FIXTURES / f"{lang}.tgt.conllu"
    for conllu, name in ((src, "src.txt"), (tgt, "tgt.txt")):
        (tmp_path / name).write_text("".join(" ".join(s.forms) + "\n" for s in read_conllu(str(conllu))))
    tag_files(
        TagOptions(
            str(tmp_path / "src.txt"),
            str(tmp_path / "tgt.txt"),
            str(FIXTURES / f"{lang}.docids"),
            lang,
            str(tmp_path / "tags.json"),
            src_conllu=str(src),
            tgt_conllu=str(tgt),
            alignments=str(FIXTURES / f"{lang}.align"),
        )
    )
    got = [
        {j: t["tags"] for j, t in enumerate(s) if t["tags"]} for d in read_tags(str(tmp_path / "tags.json")) for s in d
    ]
    assert got == expected(FIXTURES / f"{lang}.expected")
