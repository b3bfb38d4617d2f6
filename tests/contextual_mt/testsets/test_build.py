"""testset build: contrastive groups from MuDA tags, on a hand-made French document set (every
variant differs from its reference in the tagged word and its agreement only) and on the demo
corpus; bad input."""

import json
import subprocess
import sys

import pytest

from contextual_mt.errors import InputError
from contextual_mt.testsets.build import BuildOptions, run_build
from muda.tagger import text_hash

# (form, lemma, upos, feats, head, deprel) per token
SENTENCES = [
    [
        ("Salut", "salut", "INTJ", "_", 0, "root"),
        ("Marie", "Marie", "PROPN", "_", 1, "flat"),
        (".", ".", "PUNCT", "_", 1, "punct"),
    ],
    [
        ("Tu", "tu", "PRON", "Number=Sing|Person=2|PronType=Prs", 2, "nsubj"),
        ("vois", "voir", "VERB", "Mood=Ind|Number=Sing|Person=2|Tense=Pres|VerbForm=Fin", 0, "root"),
        ("le", "le", "DET", "Definite=Def|Gender=Masc|Number=Sing|PronType=Art", 4, "det"),
        ("chat", "chat", "NOUN", "Gender=Masc|Number=Sing", 2, "obj"),
        (".", ".", "PUNCT", "_", 2, "punct"),
    ],
    [
        ("Vous", "vous", "PRON", "Number=Plur|Person=2|PronType=Prs", 2, "nsubj"),
        ("voyez", "voir", "VERB", "Mood=Ind|Number=Plur|Person=2|Tense=Pres|VerbForm=Fin", 0, "root"),
        ("la", "le", "DET", "Definite=Def|Gender=Fem|Number=Sing|PronType=Art", 4, "det"),
        ("maison", "maison", "NOUN", "Gender=Fem|Number=Sing", 2, "obj"),
        (".", ".", "PUNCT", "_", 2, "punct"),
    ],
    [
        ("Il", "il", "PRON", "Gender=Masc|Number=Sing|Person=3|PronType=Prs", 3, "nsubj"),
        ("est", "être", "AUX", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", 3, "cop"),
        ("content", "content", "ADJ", "Gender=Masc|Number=Sing", 0, "root"),
        (".", ".", "PUNCT", "_", 3, "punct"),
    ],
    [
        ("Elle", "il", "PRON", "Gender=Fem|Number=Sing|Person=3|PronType=Prs", 3, "nsubj"),
        ("est", "être", "AUX", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", 3, "cop"),
        ("contente", "content", "ADJ", "Gender=Fem|Number=Sing", 0, "root"),
        (".", ".", "PUNCT", "_", 3, "punct"),
    ],
    [
        ("Tu", "tu", "PRON", "Number=Sing|Person=2|PronType=Prs", 2, "nsubj"),
        ("manges", "manger", "VERB", "Mood=Ind|Number=Sing|Person=2|Tense=Pres|VerbForm=Fin", 0, "root"),
        (".", ".", "PUNCT", "_", 2, "punct"),
    ],
]
SOURCES = ["Hi Marie .", "You see the cat .", "You see the house .", "He is happy .", "She is happy .", "You eat ."]
# (sentence, token) -> phenomenon
TAGS = {(1, 0): "formality", (4, 0): "pronouns", (5, 0): "formality"}


def conllu(sentences):
    out = []
    for n, sent in enumerate(sentences):
        out.append(f"# sent_id = {n + 1}")
        for i, (form, lemma, upos, feats, head, rel) in enumerate(sent, start=1):
            out.append("\t".join([str(i), form, lemma, upos, "_", feats, str(head), rel, "_", "_"]))
        out.append("")
    return "\n".join(out) + "\n"


@pytest.fixture
def french(tmp_path):
    refs = [" ".join(t[0] for t in s) for s in SENTENCES]
    (tmp_path / "src.en").write_text("\n".join(SOURCES) + "\n")
    (tmp_path / "ref.fr").write_text("\n".join(refs) + "\n")
    (tmp_path / "docids").write_text("d\n" * len(refs))
    dump = [
        [
            [{"token": t[0], "tags": [TAGS[(s, j)]] if (s, j) in TAGS else []} for j, t in enumerate(sent)]
            for s, sent in enumerate(SENTENCES)
        ]
    ]
    (tmp_path / "ref.tags.json").write_text(json.dumps(dump, ensure_ascii=False))
    (tmp_path / "ref.tags.tgt.conllu").write_text(conllu(SENTENCES))
    (tmp_path / "ref.tags.summary.json").write_text(json.dumps({"tgt_sha256": text_hash(refs)}))
    return tmp_path


def build(d, **kw):
    return run_build(
        BuildOptions(
            str(d / "src.en"),
            str(d / "ref.fr"),
            str(d / "docids"),
            str(d / "ref.tags.json"),
            str(d / "out"),
            "fr",
            **kw,
        )
    )


def test_variants_change_the_tagged_word_and_its_agreement_only(french):
    summary = build(french)
    groups = [json.loads(x) for x in (french / "out" / "manifest.jsonl").read_text().splitlines()]
    refs = (french / "ref.fr").read_text().splitlines()
    assert [(g["line"], g["phenomenon"], g["word"]) for g in groups] == [
        (2, "formality", "Tu"),
        (5, "pronouns", "Elle"),
    ]
    assert [v["text"] for v in groups[0]["variants"]] == ["Vous voyez le chat ."]
    assert [v["text"] for v in groups[1]["variants"]] == ["Il est content ."]  # elles: no "sont contentes" seen
    for g in groups:
        ref = refs[g["line"] - 1].split()
        for v in g["variants"]:
            words = v["text"].split()
            assert v["text"] != refs[g["line"] - 1] and len(words) == len(ref)
            changed = {k for k, (a, b) in enumerate(zip(ref, words, strict=True)) if a != b}
            assert changed == {r[0] for r in v["replaced"]} and g["position"] in changed
    assert groups[0]["distance"] is None  # no earlier T word in the document
    # "Tu manges": the corpus never shows "mangez", so no variant (it could be wrong): counted
    assert summary["phenomena"]["formality"] == {
        "occurrences": 2,
        "groups": 1,
        "skipped: agreeing form not in the corpus": 1,
    }
    voita = json.loads((french / "out" / "voita.json").read_text())
    for entry, g in zip(voita, groups, strict=True):
        assert len(entry["dst"]) == 2 and entry["dst"][entry["true_ind"]].endswith(refs[g["line"] - 1])
        assert entry["src"].endswith(SOURCES[g["line"] - 1])
    assert len((french / "out" / "contrapro.text.fr").read_text().splitlines()) == 4  # 2 groups x 2 candidates
    # both formats read back by the contrastive evaluation, with the same candidates and context
    from contextual_mt.contrastive.formats.contrapro import ContraProFormat
    from contextual_mt.contrastive.formats.voita import VoitaFormat

    out = french / "out"
    contrapro = ContraProFormat().read(
        str(out / "contrapro.json"),
        [str(out / f"contrapro.{k}.{s}") for k in ("text", "context") for s in ("en", "fr")],
    )
    voita = VoitaFormat().read(str(out / "voita.json"), [])
    assert len(contrapro) == len(voita) == 2
    for a, b in zip(contrapro, voita, strict=True):
        assert a.candidates[a.correct] == b.candidates[b.correct]
        assert sorted(p.target for p in a.candidates) == sorted(p.target for p in b.candidates)
        assert a.categories["phenomenon"] == b.categories["phenomenon"]


def test_tags_of_another_text_are_refused(french):
    (french / "ref.tags.summary.json").write_text(json.dumps({"tgt_sha256": "0" * 64}))
    with pytest.raises(InputError, match="tags of another text"):
        build(french)
    assert not (french / "out" / "manifest.jsonl").exists()


def test_phenomena_muda_tag_skipped_are_said_not_tagged(french, caplog):
    """Tags by the spaCy backend (no English parse, no aligner): lexical cohesion skipped. Its missing
    groups read as "nothing to test"; now one warning and the summary say it was not tagged."""
    refs = (french / "ref.fr").read_text().splitlines()
    skipped = {"lexical_cohesion": ["source parse", "word alignments"], "ellipsis": ["ellipsis detection"]}
    (french / "ref.tags.summary.json").write_text(json.dumps({"tgt_sha256": text_hash(refs), "skipped": skipped}))
    with caplog.at_level("WARNING"):
        summary = build(french)
    # ellipsis has no test suite: not among the phenomena built
    assert summary["not_tagged"] == {"lexical_cohesion": ["source parse", "word alignments"]}
    assert json.loads((french / "out" / "summary.json").read_text())["not_tagged"] == summary["not_tagged"]
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "lexical_cohesion not tagged" in warnings[0] and "ref.tags.json" in warnings[0], (
        warnings
    )


def test_a_language_without_alternatives_or_muda_is_one_line(french):
    with pytest.raises(InputError, match="no alternatives for 'ja'"):
        BuildOptions(*(str(french / n) for n in ("src.en", "ref.fr", "docids", "ref.tags.json", "out")), "ja")
    with pytest.raises(Exception, match="xx"):  # not a MuDA language: muda's own one-line error
        BuildOptions(*(str(french / n) for n in ("src.en", "ref.fr", "docids", "ref.tags.json", "out")), "xx")
    assert not (french / "out").exists()


def test_the_demo_corpus(demo_corpus, tmp_path):
    data = demo_corpus(train_docs=20, valid_docs=2, test_docs=30, seed=5)
    tags = tmp_path / "test.tags.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "muda.cli",
            "tag",
            "--src",
            str(data / "test.en"),
            "--tgt",
            str(data / "test.fr"),
            "--docids",
            str(data / "test.docids"),
            "--tgt-lang",
            "fr",
            "--dump-tags",
            str(tags),
            "--src-conllu",
            str(data / "test.en.conllu"),
            "--tgt-conllu",
            str(data / "test.fr.conllu"),
            "--alignments",
            str(data / "test.align"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    summary = run_build(
        BuildOptions(
            str(data / "test.en"),
            str(data / "test.fr"),
            str(data / "test.docids"),
            str(tags),
            str(tmp_path / "out"),
            "fr",
            lexicon=(str(data / "train.fr.conllu"),),
        )
    )
    tagged = json.loads((tmp_path / "test.tags.summary.json").read_text())["tags"]
    assert summary["phenomena"]["pronouns"]["groups"] == tagged["pronouns"] > 0
    assert summary["phenomena"]["formality"]["groups"] == tagged["formality"] > 0
    refs = (data / "test.fr").read_text().splitlines()
    for line in (tmp_path / "out" / "manifest.jsonl").read_text().splitlines():
        g = json.loads(line)
        assert g["distance"] is not None and 1 <= g["distance"] <= 3  # the demo's cues are within 3 sentences
        assert all(v["text"] != refs[g["line"] - 1] for v in g["variants"])


def test_an_annotation_that_disagrees_with_the_word_list_is_skipped(french):
    sentences = [list(s) for s in SENTENCES]
    sentences[1][0] = ("Tu", "tu", "DET", "Definite=Def|Gender=Masc|Number=Sing|PronType=Art", 2, "nsubj")
    (french / "ref.tags.tgt.conllu").write_text(conllu(sentences))
    summary = build(french)
    assert summary["phenomena"]["formality"]["skipped: not a pronoun in the annotation"] == 1


def run_cli(*args):
    from tests.helpers import contextual_mt_cli

    return contextual_mt_cli("testset", "build", *args)


def test_cli_bad_input(french, tmp_path):
    base = [
        "--source",
        str(french / "src.en"),
        "--reference",
        str(french / "ref.fr"),
        "--docids",
        str(french / "docids"),
    ]
    out = tmp_path / "suite"
    proc = run_cli(*base, "--lang", "xx", "--output-dir", str(out), "--tags", str(french / "ref.tags.json"))
    assert proc.returncode == 1 and proc.stderr.count("error:") == 1 and "xx" in proc.stderr
    # an annotator whose pipeline is not installed: muda's one line, and no output folder left
    proc = run_cli(*base, "--lang", "de", "--output-dir", str(out), "--annotator", "spacy")
    assert proc.returncode == 1 and "de_core_news_sm" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()
    short = tmp_path / "short.fr"
    short.write_text("\n".join((french / "ref.fr").read_text().splitlines()[:-1]) + "\n")
    proc = run_cli(
        "--source",
        str(french / "src.en"),
        "--reference",
        str(short),
        "--docids",
        str(french / "docids"),
        "--lang",
        "fr",
        "--output-dir",
        str(out),
        "--tags",
        str(french / "ref.tags.json"),
    )
    assert proc.returncode == 1 and "short.fr" in proc.stderr and not (out / "manifest.jsonl").exists()


def test_every_alternatives_file_is_valid_and_names_muda_languages():
    from contextual_mt.testsets import alternatives
    from muda.languages import get_language

    assert set(alternatives.available()) >= {"fr", "de", "ru"}
    for lang in alternatives.available():
        table = alternatives.load(lang)
        language = get_language(lang)
        assert table.swaps and set(table.swaps) <= {"pronouns", "formality"}
        for word in table.get("formality", {}):  # only words MuDA can tag have alternatives
            assert language.formality.level(word) or language.formality.level(word.capitalize()), (lang, word)


def sentence(*tokens):
    from muda.formats.conllu import parse_conllu

    return parse_conllu(conllu([list(tokens)]).splitlines(), "test")[0]


def variants_of(sent, j, phenomenon, *corpus):
    from contextual_mt.testsets.alternatives import load
    from contextual_mt.testsets.lexicon import Lexicon
    from contextual_mt.testsets.variants import apply, closed_variants

    out = closed_variants(sent, j, phenomenon, load("fr"), Lexicon([sent, *corpus]))
    text = " ".join(t.form for t in sent.tokens)
    return [apply(text, sent, v.replaced) for v in out.variants], out.skipped


PRON = "Gender={}|Number={}|Person=3|PronType=Prs"


def test_agreement_rules_of_the_french_file():
    fem = ("elle", "il", "PRON", PRON.format("Fem", "Sing"), 3, "nsubj")
    # a participle with avoir does not agree (elle a mangé -> il a mangé, not "il a mangée")
    had = sentence(
        fem,
        ("a", "avoir", "AUX", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", 3, "aux"),
        ("mangé", "manger", "VERB", "Gender=Masc|Number=Sing|Tense=Past|VerbForm=Part", 0, "root"),
    )
    assert variants_of(had, 0, "pronouns")[0] == ["il a mangé"]
    # with être it does: only with the masculine form seen in the corpus
    went = sentence(
        fem,
        ("est", "être", "AUX", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", 3, "aux"),
        ("partie", "partir", "VERB", "Gender=Fem|Number=Sing|Tense=Past|VerbForm=Part", 0, "root"),
    )
    assert variants_of(went, 0, "pronouns") == ([], "agreeing form not in the corpus")
    seen = sentence(
        ("il", "il", "PRON", PRON.format("Masc", "Sing"), 3, "nsubj"),
        ("est", "être", "AUX", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", 3, "aux"),
        ("parti", "partir", "VERB", "Gender=Masc|Number=Sing|Tense=Past|VerbForm=Part", 0, "root"),
    )
    assert variants_of(went, 0, "pronouns", seen)[0] == ["il est parti"]
    # a stressed pronoun (avec elle) is not a subject: no "avec il"
    stressed = sentence(
        ("avec", "avec", "ADP", "_", 2, "case"), ("elle", "il", "PRON", PRON.format("Fem", "Sing"), 0, "root")
    )
    assert variants_of(stressed, 1, "pronouns") == ([], "no alternative for the word's role")
    # a plural "vous" (plural participle) has no "tu"
    plural = sentence(
        ("vous", "vous", "PRON", "Number=Plur|Person=2|PronType=Prs", 3, "nsubj"),
        ("êtes", "être", "AUX", "Mood=Ind|Number=Plur|Person=2|Tense=Pres|VerbForm=Fin", 3, "aux"),
        ("allés", "aller", "VERB", "Gender=Masc|Number=Plur|Tense=Past|VerbForm=Part", 0, "root"),
    )
    assert variants_of(plural, 0, "formality")[1] == "plural agreement: not a polite singular"
    # elision: "vous aime" -> "te aime" would be wrong ("t'aime"): skipped
    obj = sentence(
        ("je", "je", "PRON", "Number=Sing|Person=1|PronType=Prs", 3, "nsubj"),
        ("vous", "vous", "PRON", "Number=Plur|Person=2|PronType=Prs", 3, "obj"),
        ("aime", "aimer", "VERB", "Mood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin", 0, "root"),
    )
    assert variants_of(obj, 1, "formality") == ([], "elision before the next word")
    # a possessive before a vowel: votre amie -> ton amie (not "ta amie")
    friend = sentence(
        ("votre", "votre", "DET", "Number=Sing|Person=2|Poss=Yes|PronType=Prs", 2, "det"),
        ("amie", "ami", "NOUN", "Gender=Fem|Number=Sing", 0, "root"),
    )
    assert variants_of(friend, 0, "formality")[0] == ["ton amie"]
    # coordinated verbs follow the subject too: ils mangent et boivent (when both forms are seen)
    both = sentence(
        ("il", "il", "PRON", PRON.format("Masc", "Sing"), 2, "nsubj"),
        ("mange", "manger", "VERB", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", 0, "root"),
        ("et", "et", "CCONJ", "_", 4, "cc"),
        ("boit", "boire", "VERB", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", 2, "conj"),
    )
    forms = sentence(
        ("ils", "il", "PRON", PRON.format("Masc", "Plur"), 2, "nsubj"),
        ("mangent", "manger", "VERB", "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin", 0, "root"),
    )
    texts, _ = variants_of(both, 0, "pronouns", forms)
    assert "elle mange et boit" in texts and not any(t.startswith("ils mangent et boit") for t in texts)


def test_a_full_disk_leaves_no_folder(french, monkeypatch):
    """The suites are written together or not at all, and the folder the build made goes with
    them (an empty --output-dir was left behind)."""
    import errno
    import os

    import commandkit.outputs
    from commandkit.errors import WriteError

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(commandkit.outputs, "_write_text", disk_full)
    with pytest.raises(WriteError, match=r"cannot write .No space left on device"):
        build(french)
    assert not (french / "out").exists()


def test_the_reference_is_tagged_with_the_cache_dir_given(french, tmp_path, monkeypatch):
    """`testset build` without --tags runs `muda tag` in this process: --cache-dir is its
    annotation cache (testset build had none; the default ignored XDG_CACHE_HOME)."""
    import muda.commands

    seen = {}

    def tag(options):
        from commandkit.errors import InputError

        seen["cache_dir"] = options.annotators.cache_dir
        raise InputError("tagging failed")  # as a failed tagging (muda's API raises): nothing built

    monkeypatch.setattr(muda.commands, "run", tag)
    proc = run_cli(
        "--source",
        str(french / "src.en"),
        "--reference",
        str(french / "ref.fr"),
        "--docids",
        str(french / "docids"),
        "--lang",
        "fr",
        "--output-dir",
        str(tmp_path / "suite"),
        "--annotator",
        "spacy",
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert proc.returncode == 1 and seen == {"cache_dir": str(tmp_path / "cache")}
    assert not (tmp_path / "suite").exists()
