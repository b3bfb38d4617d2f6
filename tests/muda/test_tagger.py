"""muda tag on files: pre-computed annotations, round trip, bad input, blank lines, the cache,
and the model annotators with small models the tests build."""

import json
import subprocess
from pathlib import Path

import pytest

from commandkit.errors import InputError
from muda.annotators.models import AnnotatorOptions, ModelAnnotators
from muda.formats.conllu import format_conllu, read_conllu
from muda.formats.tags import read_tags
from muda.tagger import TagOptions, annotation_paths, tag_files
from tests.muda.helpers import MUDA_SCRIPT


@pytest.fixture(scope="module")
def corpus(demo_corpus):
    return demo_corpus(train_docs=2, valid_docs=2, test_docs=40, seed=11)


def files(d, split="test"):
    return {
        "src": str(d / f"{split}.en"),
        "tgt": str(d / f"{split}.fr"),
        "docids": str(d / f"{split}.docids"),
        "src_conllu": str(d / f"{split}.en.conllu"),
        "tgt_conllu": str(d / f"{split}.fr.conllu"),
        "alignments": str(d / f"{split}.align"),
    }


def muda(*args):
    return subprocess.run([str(MUDA_SCRIPT), *args], capture_output=True, text=True)


def cli_args(f, out, lang="fr"):
    return [
        "tag",
        "--src",
        f["src"],
        "--tgt",
        f["tgt"],
        "--docids",
        f["docids"],
        "--tgt-lang",
        lang,
        "--dump-tags",
        str(out),
        "--src-conllu",
        f["src_conllu"],
        "--tgt-conllu",
        f["tgt_conllu"],
        "--alignments",
        f["alignments"],
    ]


def test_tag_demo_corpus_finds_the_planted_pronouns(corpus, tmp_path):
    out = tmp_path / "tags.json"
    proc = muda(*cli_args(files(corpus), out))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr  # all pre-computed: nothing to warn about
    dump = read_tags(str(out))
    planted = [json.loads(text) for text in (corpus / "test.planted.jsonl").read_text().splitlines()]
    flat = [s for d in dump for s in d]
    assert len(flat) == len((corpus / "test.fr").read_text().splitlines())
    tagged = {(n + 1, j) for n, s in enumerate(flat) for j, t in enumerate(s) if "pronouns" in t["tags"]}
    # every planted pronoun has its antecedent in the previous sentence: all of them, and only them
    assert tagged == {(p["line"], p["index"]) for p in planted if p["phenomenon"] == "pronouns"}
    assert "pronouns" in proc.stdout and str(out) in proc.stdout


def test_round_trip_and_stored_annotations_reproduce_the_tags(corpus, tmp_path):
    f = files(corpus)
    first = tag_files(
        TagOptions(
            f["src"],
            f["tgt"],
            f["docids"],
            "fr",
            str(tmp_path / "a.json"),
            src_conllu=f["src_conllu"],
            tgt_conllu=f["tgt_conllu"],
            alignments=f["alignments"],
        ),
        progress=False,
    )
    dump = read_tags(str(tmp_path / "a.json"))
    assert json.loads((tmp_path / "a.json").read_text()) == dump
    assert all(set(tok) == {"token", "tags"} for d in dump for s in d for tok in s)
    stored = annotation_paths(str(tmp_path / "a.json"))
    again = tag_files(
        TagOptions(
            f["src"],
            f["tgt"],
            f["docids"],
            "fr",
            str(tmp_path / "b.json"),
            src_conllu=stored["src_conllu"],
            tgt_conllu=stored["tgt_conllu"],
            alignments=stored["alignments"],
        ),
        progress=False,
    )
    assert read_tags(str(tmp_path / "b.json")) == dump and again["tags"] == first["tags"]
    assert set(first["seconds"]) >= {"annotations", "alignment", "tagging"}
    # in place (the side files of the output are the inputs): they are left as they were, byte
    # for byte, even with what our writer would not keep (a comment)
    with open(stored["tgt_conllu"], "a", encoding="utf-8") as handle:
        handle.write("# a note of the user's\n")
    before = {k: Path(stored[k]).read_bytes() for k in ("src_conllu", "tgt_conllu", "alignments")}
    tag_files(
        TagOptions(
            f["src"],
            f["tgt"],
            f["docids"],
            "fr",
            str(tmp_path / "a.json"),
            src_conllu=stored["src_conllu"],
            tgt_conllu=stored["tgt_conllu"],
            alignments=stored["alignments"],
        ),
        progress=False,
    )
    assert {k: Path(stored[k]).read_bytes() for k in before} == before
    assert read_tags(str(tmp_path / "a.json")) == dump


def bad(corpus, tmp_path, **changes):
    f = files(corpus)
    for key, (name, text) in changes.items():
        p = tmp_path / name
        p.write_text(text)
        f[key] = str(p)
    return f


@pytest.mark.parametrize(
    "case, expect",
    [
        ("tgt_short", "test.fr: has {n1} lines but .*test.en has {n}"),
        ("docids_short", "ids: has {n1} lines but"),
        ("unknown_lang", "unknown target language 'xx'"),
        ("align_range", r"al:2: alignment 0-99 out of range"),
        ("align_bad", r"al:1: 'x-1' is not a Pharaoh pair"),
        ("conllu_count", r"c.conllu: has {n1} sentences but .*test.en has {n} lines"),
        ("conllu_text", r"c.conllu: sentence 1 .* does not match .*test.en:1"),
    ],
)
def test_bad_input_is_one_error_naming_the_file_and_nothing_is_written(corpus, tmp_path, case, expect):
    src = (corpus / "test.en").read_text().splitlines()
    n = len(src)
    lang = "fr"
    if case == "tgt_short":
        f = bad(corpus, tmp_path, tgt=("test.fr", "\n".join((corpus / "test.fr").read_text().splitlines()[:-1]) + "\n"))
    elif case == "docids_short":
        f = bad(
            corpus, tmp_path, docids=("ids", "\n".join((corpus / "test.docids").read_text().splitlines()[:-1]) + "\n")
        )
    elif case == "unknown_lang":
        f, lang = files(corpus), "xx"
    elif case in ("align_range", "align_bad"):
        lines = (corpus / "test.align").read_text().splitlines()
        if case == "align_range":
            lines[1] = "0-99"
        else:
            lines[0] = "x-1"
        f = bad(corpus, tmp_path, alignments=("al", "\n".join(lines) + "\n"))
    else:
        sents = read_conllu(str(corpus / "test.en.conllu"))
        if case == "conllu_count":
            sents = sents[:-1]
        else:
            sents[0].tokens[0].form = sents[0].tokens[0].words[0].form = "Zzz"
        f = bad(corpus, tmp_path, src_conllu=("c.conllu", format_conllu(sents)))
    out = tmp_path / "out.json"
    proc = muda(*cli_args(f, out, lang))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ")
    import re

    assert re.search(expect.format(n=n, n1=n - 1), last), last
    assert not list(tmp_path.glob("out*"))


def test_blank_lines_are_empty_sentences_and_do_not_shift_alignments(corpus, tmp_path):
    f = files(corpus)
    keys = ("src", "tgt", "docids", "alignments")
    lines = {k: Path(f[k]).read_text().splitlines()[:12] for k in keys}
    src_c, tgt_c = read_conllu(f["src_conllu"])[:12], read_conllu(f["tgt_conllu"])[:12]
    plain = tag_files(
        TagOptions(
            *_write(tmp_path / "a", lines, src_c, tgt_c), "fr", str(tmp_path / "a.json"), **_conllu_args(tmp_path / "a")
        ),
        progress=False,
    )
    # a blank line inside the first document, on both sides
    from muda.annotation import Sentence

    k = 3
    blank = {key: [*v[:k], "" if key != "docids" else v[k - 1], *v[k:]] for key, v in lines.items()}
    _write(
        tmp_path / "b",
        blank,
        [*src_c[:k], Sentence([], text=""), *src_c[k:]],
        [*tgt_c[:k], Sentence([], text=""), *tgt_c[k:]],
    )
    tag_files(
        TagOptions(*_paths(tmp_path / "b"), "fr", str(tmp_path / "b.json"), **_conllu_args(tmp_path / "b")),
        progress=False,
    )
    a = [s for d in read_tags(str(tmp_path / "a.json")) for s in d]
    b = [s for d in read_tags(str(tmp_path / "b.json")) for s in d]
    assert b[k] == [] and b[:k] + b[k + 1 :] == a
    assert plain["sentences"] == 12


def _paths(d):
    return str(d) + ".en", str(d) + ".fr", str(d) + ".docids"


def _conllu_args(d):
    return {"src_conllu": str(d) + ".en.conllu", "tgt_conllu": str(d) + ".fr.conllu", "alignments": str(d) + ".align"}


def _write(d, lines, src_c, tgt_c):
    for key, ext in (("src", ".en"), ("tgt", ".fr"), ("docids", ".docids"), ("alignments", ".align")):
        Path(str(d) + ext).write_text("\n".join(lines[key]) + "\n")
    Path(str(d) + ".en.conllu").write_text(format_conllu(src_c))
    Path(str(d) + ".fr.conllu").write_text(format_conllu(tgt_c))
    return _paths(d)


class CountingAnnotator:
    """Stands in for stanza/awesome-align: answers from gold annotations and counts calls."""

    def __init__(self, sentences, mentions=None):
        self.sentences, self.mentions, self.calls = sentences, mentions, 0

    def annotate(self, lines):
        self.calls += 1
        return [self.sentences[i] for i in range(len(lines))]

    def annotate_documents(self, documents):
        self.calls += 1
        out, i = [], 0
        from muda.formats.coref import corefud_mentions

        for doc in documents:
            sents = self.sentences[i : i + len(doc)]
            i += len(doc)
            mentions = corefud_mentions(sents)
            for s in sents:  # the annotator returns plain sentences; coreference separately
                for w in s.words:
                    w.misc.pop("Entity", None)
            out.append((sents, mentions))
        return out

    def align(self, src, tgt):
        self.calls += 1
        return self.mentions[: len(src)]


def test_model_annotators_are_cached_on_the_second_run(corpus, tmp_path):
    f = files(corpus)
    from muda.formats.pharaoh import read_pharaoh

    gold = tag_files(
        TagOptions(
            f["src"],
            f["tgt"],
            f["docids"],
            "fr",
            str(tmp_path / "gold.json"),
            src_conllu=f["src_conllu"],
            tgt_conllu=f["tgt_conllu"],
            alignments=f["alignments"],
        ),
        progress=False,
    )
    runs = []
    for attempt in range(2):
        src = CountingAnnotator(read_conllu(f["src_conllu"]))
        tgt = CountingAnnotator(read_conllu(f["tgt_conllu"]))
        aligner = CountingAnnotator(None, read_pharaoh(f["alignments"]))
        ann = ModelAnnotators(
            AnnotatorOptions(cache_dir=str(tmp_path / "cache")),
            source_annotator=src,
            target_annotators={"fr": tgt},
            aligner=aligner,
        )
        s = tag_files(
            TagOptions(f["src"], f["tgt"], f["docids"], "fr", str(tmp_path / f"m{attempt}.json")),
            annotators=ann,
            progress=False,
        )
        runs.append((src.calls, tgt.calls, aligner.calls, ann.cache.hits, ann.cache.misses, s["tags"]))
    assert runs[0][:5] == (1, 1, 1, 0, 3)
    assert runs[1][:5] == (0, 0, 0, 3, 0)  # all three annotations from the cache
    # coreference went through the cache as CorefUD and still finds every pronoun
    assert runs[0][5] == runs[1][5] == gold["tags"]
    # a different hypothesis file re-annotates the target side only
    hyp = tmp_path / "hyp.fr"
    hyp.write_text((corpus / "test.fr").read_text().replace("maison", "demeure"))
    from muda.formats.conllu import parse_conllu

    hyp_sents = parse_conllu((corpus / "test.fr.conllu").read_text().replace("\tmaison\t", "\tdemeure\t").splitlines())
    src, tgt = CountingAnnotator(read_conllu(f["src_conllu"])), CountingAnnotator(hyp_sents)
    aligner = CountingAnnotator(None, read_pharaoh(f["alignments"]))
    ann = ModelAnnotators(
        AnnotatorOptions(cache_dir=str(tmp_path / "cache")),
        source_annotator=src,
        target_annotators={"fr": tgt},
        aligner=aligner,
    )
    tag_files(
        TagOptions(f["src"], str(hyp), f["docids"], "fr", str(tmp_path / "h.json")), annotators=ann, progress=False
    )
    assert (src.calls, tgt.calls) == (0, 1)


def test_no_annotations_and_no_models_is_a_clear_error(corpus, tmp_path):
    f = files(corpus)
    with pytest.raises(InputError, match="no pre-computed annotations"):
        tag_files(TagOptions(f["src"], f["tgt"], f["docids"], "fr", str(tmp_path / "x.json")))


def test_an_unwritable_cache_is_a_warning_not_an_error(corpus, tmp_path, caplog):
    """The cache only saves time: a --cache-dir that cannot be written (under a file) must not
    stop the command after all the annotation work, nor change its result."""
    f = files(corpus)
    from muda.formats.pharaoh import read_pharaoh

    (tmp_path / "file").write_text("")
    ann = ModelAnnotators(
        AnnotatorOptions(cache_dir=str(tmp_path / "file" / "cache")),
        source_annotator=CountingAnnotator(read_conllu(f["src_conllu"])),
        target_annotators={"fr": CountingAnnotator(read_conllu(f["tgt_conllu"]))},
        aligner=CountingAnnotator(None, read_pharaoh(f["alignments"])),
    )
    with caplog.at_level("WARNING", logger="muda"):
        got = tag_files(
            TagOptions(f["src"], f["tgt"], f["docids"], "fr", str(tmp_path / "m.json")), annotators=ann, progress=False
        )
    gold = tag_files(
        TagOptions(
            f["src"],
            f["tgt"],
            f["docids"],
            "fr",
            str(tmp_path / "gold.json"),
            src_conllu=f["src_conllu"],
            tgt_conllu=f["tgt_conllu"],
            alignments=f["alignments"],
        ),
        progress=False,
    )
    assert got["tags"] == gold["tags"]
    assert sum("cannot be written" in r.getMessage() for r in caplog.records) == 1  # said once
