"""Language data files: every shipped file validates; broken files are errors naming the file."""

import pytest

from commandkit.errors import InputError
from muda.languages import get_language, load_language_file, registry
from muda.phenomena import applicable, phenomenon_names
from muda.tagger import MudaTagger


def test_fourteen_languages_and_ted_aliases():
    assert sorted(registry()) == ["ar", "de", "es", "fr", "he", "it", "ja", "ko", "nl", "pt", "ro", "ru", "tr", "zh"]
    assert get_language("pt-br").code == "pt" and get_language("zh_CN").code == "zh" and get_language("FR").code == "fr"
    # Table 6's zeros
    assert applicable(registry()["he"]) == ["lexical_cohesion", "verb_form", "ellipsis"]
    assert "on" in registry()["fr"].pronouns["we"]  # a YAML boolean trap, quoted in the file


@pytest.mark.parametrize(
    "text, error",
    [
        ("name: X\nformality:\n  T: [a]\n  V: [a]\n", "words in both T and V: a"),
        ("name: X\nverb_forms: [Past, Aorist]\n", "Aorist is not a UD Tense"),
        ("name: X\npronouns:\n  it: []\n", "pronouns.it: expected a non-empty list"),
        ("name: X\npronouns:\n  we: [nous, on]\n", "pronouns.we: expected a non-empty list"),
        ("name: X\nformality: {T: [a], V: [b], polite: true}\n", "unknown key\\(s\\) polite"),
        ("nom: X\n", "unknown key\\(s\\) nom"),
        ("name: [unclosed\n", "xx.yaml:\\d+: not valid YAML"),
    ],
)
def test_invalid_language_files(tmp_path, text, error):
    path = tmp_path / "xx.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=error) as e:
        load_language_file(str(path))
    assert "xx.yaml" in str(e.value)


def test_a_new_language_is_only_a_data_file(tmp_path):
    (tmp_path / "ca.yaml").write_text("name: Catalan\nformality:\n  T: [tu]\n  V: [vostè]\n  subject_drop: true\n")
    lang = get_language("ca", directory=str(tmp_path))
    assert applicable(lang) == ["lexical_cohesion", "formality", "ellipsis"] and lang.formality.level("Vostè") == "V"


def test_phenomena_selection():
    assert MudaTagger("fr", ["pronouns", "ellipsis"]).phenomena == ["pronouns", "ellipsis"]
    assert MudaTagger("zh", ["verb_form", "formality"]).phenomena == ["formality"]  # verb form does not apply
    with pytest.raises(InputError, match="unknown phenomenon 'tense'"):
        MudaTagger("fr", ["tense"])


def test_the_phenomena_are_registered_in_canonical_order():
    """The order of registration is the order of tags in every output and of ``--phenomena``'s
    choices (muda/phenomena/__init__.py imports the modules in it; sorting those imports broke it)."""
    canonical = ["lexical_cohesion", "formality", "pronouns", "verb_form", "ellipsis"]
    assert phenomenon_names() == canonical
    assert applicable(get_language("fr")) == [p for p in canonical if p in applicable(get_language("fr"))]
    assert MudaTagger("fr").phenomena == [p for p in canonical if p in MudaTagger("fr").phenomena]
