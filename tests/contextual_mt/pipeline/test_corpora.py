"""Readers of the pipeline's corpora: TED (Qi et al. 2018), IWSLT17, plain text."""

import os
import tarfile

import pytest

from contextual_mt.errors import InputError
from contextual_mt.pipeline.corpora import (
    SPLITS,
    base_language,
    moses_detokenize,
    read_iwslt,
    read_ted,
    read_text,
    ted_languages,
)

# ----------------------------------------------------------------------------- a tiny TED corpus
# rows: (talk_name, en, fr, de); Moses-tokenized as in the corpus
TED_ROWS = {
    "train": [
        (
            "talk_a",
            "it &apos;s a &quot; hello , world &quot; test .",
            "c&apos; est un test &quot; bonjour , le monde &quot; .",
            "x",
        ),
        ("talk_a", "the man is here , isn &apos;t he ?", "l&apos; homme est là , n&apos; est-ce pas ?", "x"),
        ("talk_a", "__NULL__", "une phrase sans source .", "x"),
        ("talk_a", "we &apos;re going ( now ) .", "nous partons ( maintenant ) .", "x"),
        ("talk_b", "one sentence .", "_ _ NULL _ _", "x"),
        ("talk_b", "fifty percent : 50 % .", "cinquante pour cent : 50 % .", "__NULL__"),
        ("talk_b", "l&apos; homme and the woman .", "l' homme et la femme .", "y"),
        ("talk_b", "a second line .", " __NULL__ ", "y"),
        ("talk_c", "short talk .", "exposé court .", "z"),
    ],
    "dev": [
        ("talk_d", "how are you ?", "comment allez-vous ?", "x"),
        ("talk_d", "fine , thanks .", "bien , merci .", "x"),
    ],
    "test": [
        ("talk_e", "goodbye .", "au revoir .", "x"),
        ("talk_e", "__NULL__", "__NULL__", "x"),
        ("talk_f", "see you &apos;s .", "à bientôt .", "x"),
    ],
}
HEADER = ("talk_name", "en", "fr", "de")


def write_ted(folder, rows=None, header=HEADER):
    rows = rows or TED_ROWS
    os.makedirs(folder, exist_ok=True)
    for split, name in (("train", "all_talks_train.tsv"), ("dev", "all_talks_dev.tsv"), ("test", "all_talks_test.tsv")):
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write("\t".join(header) + "\n")
            for row in rows[split]:
                f.write("\t".join(row) + "\n")
    return folder


def make_tarball(folder, path, prefix="ted_talks"):
    with tarfile.open(path, "w:gz") as tar:
        for name in sorted(os.listdir(folder)):
            tar.add(os.path.join(folder, name), arcname=f"{prefix}/{name}" if prefix else name)
    return path


@pytest.fixture
def ted(tmp_path):
    return write_ted(str(tmp_path / "ted_talks"))


def test_ted_drops_null_rows_and_detokenizes(ted):
    corpus = read_ted(ted, "fr")
    train = corpus["train"]
    assert train.dropped == 3 and corpus["valid"].dropped == 0 and corpus["test"].dropped == 1
    assert train.docids == ["talk_a"] * 3 + ["talk_b"] * 2 + ["talk_c"]
    assert train.src[0] == 'it\'s a "hello, world" test.'
    assert train.tgt[0] == 'c\'est un test "bonjour, le monde".'
    assert train.src[1] == "the man is here, isn't he?"
    assert train.tgt[1] == "l'homme est là, n'est-ce pas ?"  # French: space before '?' kept
    assert train.src[2] == "we're going (now)."  # the row after the dropped one keeps its place
    assert train.tgt[3] == "cinquante pour cent : 50 %."
    assert train.src[3] == "fifty percent: 50%."
    assert train.tgt[4] == "l'homme et la femme."
    assert train.documents == 3 and corpus["valid"].documents == 1 and corpus["test"].documents == 2
    assert corpus["valid"].src == ["how are you?", "fine, thanks."]
    for split in SPLITS:
        s = corpus[split]
        assert len(s.src) == len(s.tgt) == len(s.docids)


def test_ted_without_detokenization_keeps_moses_text(ted):
    corpus = read_ted(ted, "fr", detokenize=False)
    assert corpus["train"].src[0] == "it &apos;s a &quot; hello , world &quot; test ."


def test_ted_tarball_equals_folder(ted, tmp_path):
    folder = read_ted(ted, "fr")
    for prefix in ("ted_talks", ""):
        tar = make_tarball(ted, str(tmp_path / f"ted{prefix}.tar.gz"), prefix)
        from_tar = read_ted(tar, "fr")
        for split in SPLITS:
            assert from_tar[split] == folder[split]
    assert ted_languages(tar) == ["de", "en", "fr"] == ted_languages(ted)


def test_ted_folder_may_hold_the_unpacked_folder(ted, tmp_path):
    assert read_ted(str(tmp_path), "fr")["train"].src == read_ted(ted, "fr")["train"].src


def test_ted_detokenization_pool_equals_one_process(ted, monkeypatch):
    import contextual_mt.pipeline.corpora as corpora

    monkeypatch.setattr(corpora, "DETOKENIZE_CHUNK", 2)  # many chunks, two processes
    seen = []
    pooled = read_ted(ted, "fr", workers=2, progress=seen.append)
    assert sum(seen) == sum(2 * len(pooled[s]) for s in SPLITS)
    single = read_ted(ted, "fr", workers=1)
    assert all(pooled[s] == single[s] for s in SPLITS)


def test_ted_language_with_region_uses_base_language(tmp_path):
    rows = {split: [(t, en, fr, "x") for t, en, fr, _ in r] for split, r in TED_ROWS.items()}
    folder = write_ted(str(tmp_path / "t"), rows, header=("talk_name", "en", "pt-br", "zh-cn"))
    corpus = read_ted(folder, "pt-br")
    assert corpus["train"].tgt[1] == "l' homme est là, n' est-ce pas?"  # not French rules
    assert base_language("pt-br") == "pt" and base_language("zh-cn") == "zh"
    langs = moses_detokenize({"train": corpus["train"]}, "zh-cn")
    assert langs == {"en": "en", "zh-cn": "zh"}


def test_ted_interleaved_talk_rows_are_grouped(tmp_path):
    rows = dict(
        TED_ROWS, train=[("a", "one .", "un .", "x"), ("b", "two .", "deux .", "x"), ("a", "three .", "trois .", "x")]
    )
    corpus = read_ted(write_ted(str(tmp_path / "t"), rows), "fr")
    assert corpus["train"].docids == ["a", "a", "b"]
    assert corpus["train"].src == ["one.", "three.", "two."]


def test_ted_line_breaks_inside_a_cell_become_spaces(tmp_path):
    rows = dict(TED_ROWS, dev=[("talk_d", "two\rlines .", "deux\u2028lignes .", "x")])
    corpus = read_ted(write_ted(str(tmp_path / "t"), rows), "fr")
    assert corpus["valid"].src == ["two lines."] and corpus["valid"].tgt == ["deux lignes."]


def one_line(excinfo):
    message = str(excinfo.value)
    assert "\n" not in message
    return message


def test_ted_errors(ted, tmp_path):
    with pytest.raises(InputError) as e:
        read_ted(ted, "xx")
    assert "no 'xx' column" in one_line(e) and "de en fr" in one_line(e)
    assert "all_talks_train.tsv" in one_line(e)

    bad = write_ted(str(tmp_path / "nodoc"), header=("talk", "en", "fr", "de"))
    with pytest.raises(InputError, match=r"all_talks_train\.tsv:1: no 'talk_name' column"):
        read_ted(bad, "fr")

    rows = dict(TED_ROWS, dev=[("talk_d", "a .", "b .", "x"), ("talk_d", "only two fields")])
    with pytest.raises(InputError, match=r"all_talks_dev\.tsv:3: 2 tab-separated fields, the header has 4"):
        read_ted(write_ted(str(tmp_path / "fields"), rows), "fr")

    rows = dict(TED_ROWS, test=[("talk_a", "x .", "y .", "z")])
    with pytest.raises(InputError) as e:
        read_ted(write_ted(str(tmp_path / "twice"), rows), "fr")
    assert "talk 'talk_a' is also in" in one_line(e) and "all_talks_train.tsv" in one_line(e)

    rows = dict(TED_ROWS, dev=[("talk_d", "__NULL__", "a .", "x"), ("talk_d", "b .", "_ _ NULL _ _", "x")])
    with pytest.raises(InputError) as e:
        read_ted(write_ted(str(tmp_path / "empty"), rows), "fr")
    assert "all_talks_dev.tsv: no row with both 'en' and 'fr' text (2 rows dropped" in one_line(e)

    with pytest.raises(InputError, match=r"ted_talks\.tar\.gz or its folder.* not found"):
        read_ted(str(tmp_path / "missing.tar.gz"), "fr")
    os.makedirs(tmp_path / "emptydir")
    with pytest.raises(InputError, match=r"emptydir: no all_talks_train\.tsv, all_talks_dev\.tsv"):
        read_ted(str(tmp_path / "emptydir"), "fr")
    os.remove(os.path.join(ted, "all_talks_test.tsv"))
    with pytest.raises(InputError, match=r"ted_talks: no all_talks_test\.tsv"):
        read_ted(ted, "fr")


def test_ted_tarball_errors(ted, tmp_path):
    partial = str(tmp_path / "partial.tar.gz")
    with tarfile.open(partial, "w:gz") as tar:
        tar.add(os.path.join(ted, "all_talks_train.tsv"), arcname="ted_talks/all_talks_train.tsv")
        tar.add(os.path.join(ted, "all_talks_dev.tsv"), arcname="ted_talks/all_talks_dev.tsv")
    with pytest.raises(InputError) as e:
        read_ted(partial, "fr")
    assert "partial.tar.gz: the archive has no all_talks_test.tsv" in one_line(e)
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tar archive at all" * 20)
    with pytest.raises(InputError) as e:
        read_ted(str(junk), "fr")
    assert "junk.tar.gz" in one_line(e)
    rows = dict(TED_ROWS, test=[("talk_e", "a .")])
    tar = make_tarball(write_ted(str(tmp_path / "badrow"), rows), str(tmp_path / "badrow.tar.gz"))
    with pytest.raises(InputError) as e:
        read_ted(tar, "fr")
    assert "badrow.tar.gz:ted_talks/all_talks_test.tsv:2: 2 tab-separated fields" in one_line(e)


# ----------------------------------------------------------------------------- a tiny IWSLT17 folder
def train_tags(side, docs, markup=True):
    out = []
    for docid, lines in docs:
        if markup:
            out.append(f'<doc docid="{docid}" genre="lectures">')
        out += [
            f"<url>http://www.ted.com/talks/{docid}</url>",
            "<keywords>talks, science</keywords>",
            f"<speaker>Speaker {docid}</speaker>",
            f"<talkid>{docid}</talkid>",
            f"<title>Title {docid} ({side})</title>",
            "<description>TED Talk Subtitles and Transcript: about things</description>",
            '<reviewer href="x">R</reviewer>',
            '<translator href="y">T</translator>',
        ]
        out += lines
        if markup:
            out.append("</doc>")
    return "\n".join(out) + "\n"


def xml_set(side, setname, docs):
    body = []
    for docid, lines in docs:
        body.append(f'<doc docid="{docid}" genre="lectures">')
        body += [
            f"<url>http://www.ted.com/talks/{docid}</url>",
            f"<talkid>{docid}</talkid>",
            f"<title>{setname} {docid}</title>",
        ]
        body += [f'<seg id="{i}"> {line} </seg>' for i, line in enumerate(lines, start=1)]
        body.append("</doc>")
    kind = "srcset" if side == "en" else "refset"
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<mteval>\n'
        f'<{kind} setid="iwslt2017-{setname}" srclang="english" trglang="french">\n'
        + "\n".join(body)
        + f"\n</{kind}>\n</mteval>\n"
    )


IWSLT_TRAIN = {
    "en": [("1", ["Hello there.", "It's a test & more."]), ("2", ["Second talk.", "", "<i>Third</i> line."])],
    "fr": [("1", ["Bonjour.", "C'est un test & plus."]), ("2", ["Deuxième exposé.", "vide", "<i>Troisième</i>."])],
}
IWSLT_SETS = {
    name: {
        "en": [(f"{n}0", [f"{name} one &amp; &quot;two&quot;", "It&apos;s done."])],
        "fr": [(f"{n}0", [f"{name} un &amp; &quot;deux&quot;", "C&apos;est fini."])],
    }
    for n, name in enumerate(["dev2010", "tst2010", "tst2013", "tst2014", "tst2015"], start=1)
}


def write_iwslt(folder, lang="fr", train=None, sets=None, markup=True):
    os.makedirs(folder, exist_ok=True)
    train = train or IWSLT_TRAIN
    for side in ("en", lang):
        with open(os.path.join(folder, f"train.tags.en-{lang}.{side}"), "w", encoding="utf-8") as f:
            f.write(train_tags(side, train["en" if side == "en" else "fr"], markup))
        for name, docs in (sets or IWSLT_SETS).items():
            with open(os.path.join(folder, f"IWSLT17.TED.{name}.en-{lang}.{side}.xml"), "w", encoding="utf-8") as f:
                f.write(xml_set(side, name, docs["en" if side == "en" else "fr"]))
    return folder


def test_iwslt_defaults(tmp_path):
    corpus = read_iwslt(write_iwslt(str(tmp_path / "en-fr")), "fr")
    train = corpus["train"]
    assert train.src == ["Hello there.", "It's a test & more.", "Second talk.", "<i>Third</i> line."]
    assert train.tgt[-1] == "<i>Troisième</i>."  # inline markup is text, not a metadata line
    assert train.tgt[1] == "C'est un test & plus."  # train.tags text is used as it is
    assert train.docids == ["1", "1", "2", "2"] and train.dropped == 1  # blank line on one side
    assert corpus["valid"].src == ['dev2010 one & "two"', "It's done."]  # xml unescaped
    assert corpus["valid"].docids == ["10", "10"]
    assert corpus["test"].tgt == ['tst2015 un & "deux"', "C'est fini."]
    assert corpus["test"].docids == ["50", "50"]


def test_iwslt_several_sets_and_newest_test(tmp_path):
    folder = write_iwslt(str(tmp_path / "en-fr"))
    corpus = read_iwslt(folder, "fr", dev="dev2010,tst2010", test="tst2014,tst2015")
    assert corpus["valid"].docids == ["dev2010:10", "dev2010:10", "tst2010:20", "tst2010:20"]
    assert corpus["test"].docids == ["tst2014:40", "tst2014:40", "tst2015:50", "tst2015:50"]
    sets = {k: v for k, v in IWSLT_SETS.items() if k != "tst2015"}
    corpus = read_iwslt(write_iwslt(str(tmp_path / "no2015"), sets=sets), "fr")
    assert corpus["test"].docids == ["40", "40"]  # the newest tst set


def test_iwslt_without_doc_markup_uses_talkid(tmp_path):
    corpus = read_iwslt(write_iwslt(str(tmp_path / "en-fr"), markup=False), "fr")
    assert corpus["train"].docids == ["1", "1", "2", "2"]


def test_iwslt_errors(tmp_path):
    folder = write_iwslt(str(tmp_path / "en-fr"))
    with pytest.raises(InputError) as e:
        read_iwslt(folder, "fr", test="tst2099")
    assert "--iwslt-test: no tst2099 set" in one_line(e)
    assert "(sets: dev2010, tst2010, tst2013, tst2014, tst2015)" in one_line(e)
    with pytest.raises(InputError, match="both name tst2014"):
        read_iwslt(folder, "fr", dev="tst2014", test="tst2014")
    with pytest.raises(InputError, match=r"no train\.tags\.en-de\.en"):
        read_iwslt(folder, "de")

    train = {"en": IWSLT_TRAIN["en"], "fr": [IWSLT_TRAIN["fr"][0], ("3", ["a", "b", "c"])]}
    with pytest.raises(InputError) as e:
        read_iwslt(write_iwslt(str(tmp_path / "docs"), train=train), "fr")
    assert "train.tags.en-fr.fr: document 2 is '3'" in one_line(e) and "'2'" in one_line(e)

    train = {"en": IWSLT_TRAIN["en"], "fr": [IWSLT_TRAIN["fr"][0], ("2", ["a", "b"])]}
    with pytest.raises(InputError) as e:
        read_iwslt(write_iwslt(str(tmp_path / "lines"), train=train), "fr")
    assert "train.tags.en-fr.fr: document '2'" in one_line(e) and "has 2 lines but 3 in" in one_line(e)

    sets = dict(IWSLT_SETS, dev2010={"en": [("10", ["a", "b"])], "fr": [("10", ["a"])]})
    with pytest.raises(InputError) as e:
        read_iwslt(write_iwslt(str(tmp_path / "xml"), sets=sets), "fr")
    assert "IWSLT17.TED.dev2010.en-fr.fr.xml: document '10'" in one_line(e)

    os.remove(os.path.join(folder, "IWSLT17.TED.tst2013.en-fr.fr.xml"))
    with pytest.raises(InputError, match="no fr side for tst2013"):
        read_iwslt(folder, "fr")
    with pytest.raises(InputError, match="IWSLT folder not found"):
        read_iwslt(str(tmp_path / "nope"), "fr")


# ----------------------------------------------------------------------------- plain text
def write_text(folder, lang="fr"):
    os.makedirs(folder, exist_ok=True)
    for split in SPLITS:
        ids = [f"{split}-d1"] * 2  # a document is in one split only
        for ext, lines in (("en", ["Hello.", "World."]), (lang, ["Bonjour.", "Monde."]), ("docids", ids)):
            with open(os.path.join(folder, f"{split}.{ext}"), "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
    return folder


def test_text(tmp_path):
    folder = write_text(str(tmp_path / "text"))
    corpus = read_text(folder, "fr")
    assert corpus["test"].src == ["Hello.", "World."] and corpus["test"].docids == ["test-d1", "test-d1"]
    with open(os.path.join(folder, "valid.fr"), "a", encoding="utf-8") as f:
        f.write("extra\n")
    with pytest.raises(InputError) as e:
        read_text(folder, "fr")
    assert "valid.fr: has 3 lines but" in one_line(e) and "valid.en has 2" in one_line(e)
    folder = write_text(str(tmp_path / "blank"))
    with open(os.path.join(folder, "train.docids"), "w", encoding="utf-8") as f:
        f.write("d1\n \n")
    with pytest.raises(InputError, match=r"train\.docids:2: empty document id"):
        read_text(folder, "fr")
    with pytest.raises(InputError, match=r"other/train\.de: file not found"):
        read_text(write_text(str(tmp_path / "other")), "de")


def test_a_document_in_two_splits_is_refused_in_every_format(tmp_path):
    """One rule for TED (test_ted_errors), IWSLT and text: a document id is in one split only."""
    folder = write_text(str(tmp_path / "text"))
    with open(os.path.join(folder, "test.docids"), "w", encoding="utf-8") as f:
        f.write("test-d1\ntrain-d1\n")
    with pytest.raises(InputError) as e:
        read_text(folder, "fr")
    assert "test.docids:2: document 'train-d1' is also in" in one_line(e) and "train.docids" in one_line(e)
    assert "one split only" in one_line(e)

    sets = dict(IWSLT_SETS, tst2015={side: [("2", rows)] for side, rows in (("en", ["a", "b"]), ("fr", ["c", "d"]))})
    with pytest.raises(InputError) as e:
        read_iwslt(write_iwslt(str(tmp_path / "iwslt"), sets=sets), "fr")
    assert "IWSLT17.TED.tst2015.en-fr.en.xml: talk '2' is also in" in one_line(e) and "train.tags" in one_line(e)
    # several sets prefix their ids with the set name: the talk ids themselves are compared
    with pytest.raises(InputError, match="talk '2' is also in"):
        read_iwslt(write_iwslt(str(tmp_path / "iwslt2"), sets=sets), "fr", test="tst2014,tst2015")
