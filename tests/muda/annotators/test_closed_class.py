"""The closed-class correction of the spaCy backend (``correct_closed_class``) and the language
files' ``closed_class`` lists it reads (no spaCy needed)."""

import pytest

from commandkit.errors import InputError
from muda.annotation import Sentence, Token, Word
from muda.annotators.spacy_backend import correct_closed_class
from muda.languages import get_language, parse_language


def sentence(*words):
    """Tokens of (form, upos, feats); a tuple of such words is a multi-word token."""
    tokens = []
    for n, w in enumerate(words, start=1):
        if isinstance(w[0], tuple):
            tokens.append(Token("".join(x[0] for x in w), [Word(n, *x[:1], upos=x[1], feats=dict(x[2])) for x in w]))
        else:
            tokens.append(Token(w[0], [Word(n, w[0], lemma="le", upos=w[1], feats=dict(w[2]))]))
    return Sentence(tokens)


def test_listed_words_get_their_class_and_features():
    fr = get_language("fr")
    s = sentence(
        ("Tu", "DET", {"Definite": "Def", "Gender": "Masc", "PronType": "Art"}),
        ("vois", "VERB", {"Person": "2"}),
        ("tu", "PRON", {"Gender": "Masc", "Person": "3"}),
        ("Vous", "PRON", {"Number": "Plur", "Person": "2", "PronType": "Prs"}),
        (("d", "ADP", {}), ("il", "DET", {})),
    )
    assert correct_closed_class([s], fr) == 2
    tu, verb, tu2, vous, mwt = s.tokens
    # the wrong class: its features and lemma replaced
    assert (tu.words[0].upos, tu.words[0].lemma, tu.words[0].feats) == (
        "PRON",
        "tu",
        {"Number": "Sing", "Person": "2", "PronType": "Prs"},
    )
    # the right class: the listed features set, the others kept
    assert tu2.words[0].feats == {"Gender": "Masc", "Number": "Sing", "Person": "2", "PronType": "Prs"}
    assert tu2.words[0].lemma == "le" and verb.words[0].upos == "VERB"
    assert vous.words[0].feats == {"Number": "Plur", "Person": "2", "PronType": "Prs"}  # already right: unchanged
    assert [w.upos for w in mwt.words] == ["ADP", "DET"]  # a multi-word token is left alone
    assert correct_closed_class([s], get_language("de")) == 0  # German lists none


@pytest.mark.parametrize(
    "value, error",
    [
        ("tu", "expected a mapping of words"),
        ({"tu": "PRONOUN Person=2"}, "closed_class.tu: 'PRONOUN Person=2': expected 'UPOS FEATS'"),
        ({"tu": "PRON"}, "expected 'UPOS FEATS'"),
        ({"tu": "PRON Person"}, "feature 'Person': expected Name=Value"),
        ({"tu": "PRON Person=2|Person=3"}, "each name once"),
        ({"tu": "PRON _", "Tu": "PRON _"}, "'Tu' listed twice"),
        ({"tu toi": "PRON _"}, "is not a word"),
    ],
)
def test_invalid_closed_class_lists_are_errors_naming_the_file(value, error):
    with pytest.raises(InputError, match=error) as e:
        parse_language("xx", {"name": "X", "closed_class": value}, "xx.yaml")
    assert str(e.value).startswith("xx.yaml: closed_class")


def test_french_lists_its_subject_pronouns():
    listed = get_language("fr").closed_class
    assert set(listed) >= {"je", "tu", "il", "elle", "nous", "vous", "ils", "elles"}
    assert listed["tu"] == ("PRON", {"Number": "Sing", "Person": "2", "PronType": "Prs"})
    assert parse_language("xx", {"name": "X", "closed_class": {"on": "PRON _"}}, "x.yaml").closed_class == {
        "on": ("PRON", {})
    }
