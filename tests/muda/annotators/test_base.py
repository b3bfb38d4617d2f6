"""Every annotator implements the ``Annotator`` protocol, and a step it cannot do is one
InputError that names the pre-computed file supplying it."""

import pytest

from commandkit.errors import InputError
from muda.annotators.base import Annotator
from muda.annotators.lexicon import LexiconAnnotator
from muda.annotators.models import AnnotatorOptions, ModelAnnotators
from muda.formats.conllu import format_conllu
from tests.muda.helpers import sentence

STEPS = ("source", "target", "align", "ellipsis")


@pytest.fixture
def lexicon(tmp_path):
    src = [sentence(("I", "PRON", None, 2, "nsubj"), ("do", "AUX", None, 0, "root"), (".", "PUNCT", None, 2, "punct"))]
    tgt = [sentence(("Je", "PRON"), ("fais", "VERB"), (".", "PUNCT"))]
    (tmp_path / "src.conllu").write_text(format_conllu(src))
    (tmp_path / "tgt.conllu").write_text(format_conllu(tgt))
    (tmp_path / "align").write_text("0-0 1-1 2-2\n")
    return LexiconAnnotator(str(tmp_path / "src.conllu"), str(tmp_path / "tgt.conllu"), str(tmp_path / "align"))


def test_every_annotator_satisfies_the_protocol(lexicon, tmp_path):
    models = ModelAnnotators(AnnotatorOptions(cache_dir=str(tmp_path / "cache")))
    for annotator in (models, lexicon):
        assert isinstance(annotator, Annotator)
        assert all(callable(getattr(annotator, step)) for step in STEPS)
        assert annotator.has_ellipsis_model is False
    assert ModelAnnotators(AnnotatorOptions(ellipsis_model="x", cache_dir=str(tmp_path / "c"))).has_ellipsis_model
    assert not isinstance(object(), Annotator)


def test_lexicon_annotator_cannot_do_the_source_and_says_what_to_pass(lexicon):
    with pytest.raises(InputError, match=r"--lexicon annotator cannot annotate the English source.*--src-conllu"):
        lexicon.source(["I do ."], ["d1"])
    [tgt] = lexicon.target(["Je fais ."], "fr")
    assert tgt.forms == ["Je", "fais", "."] and tgt.tokens[1].words[0].upos == "VERB"
    assert lexicon.align([["I", "do", "."]], [tgt.forms]) == [{(0, 0), (1, 1), (2, 2)}]


def test_without_a_model_ellipsis_is_the_rule_based_detector(lexicon, tmp_path):
    i_dont = sentence(
        ("I", "PRON", None, 2, "nsubj"), ("do", "AUX", None, 0, "root"), ("n't", "PART", None, 2, "advmod")
    )
    i_eat = sentence(("I", "PRON", None, 2, "nsubj"), ("eat", "VERB", None, 0, "root"))
    models = ModelAnnotators(AnnotatorOptions(cache_dir=str(tmp_path / "cache")))
    for annotator in (lexicon, models):
        assert annotator.ellipsis([i_dont, i_eat], ["I do n't", "I eat"]) == [True, False]
