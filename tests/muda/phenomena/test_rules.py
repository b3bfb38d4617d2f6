"""MuDA rules, phenomenon by phenomenon, on hand-written annotations: positives and near-misses."""

import pytest

from muda.annotators.ellipsis_rules import is_elliptical
from muda.languages import registry
from muda.settings import TaggerSettings
from muda.tagger import MudaTagger
from tests.muda.helpers import doc, filler, sentence


def tags(lang, d, phenomenon, **settings):
    out = MudaTagger(lang, [phenomenon], TaggerSettings(**settings)).tag_document(d)
    return [[t["token"] for t in sent if phenomenon in t["tags"]] for sent in out]


# --- formality -------------------------------------------------------------------------------
def test_fr_formality_needs_an_earlier_word_of_the_same_level():
    d = doc(
        [
            (
                filler("You are here ."),
                sentence(("Tu", "PRON"), ("es", "AUX"), ("là", "ADV"), (".", "PUNCT")),
                {(0, 0)},
                0,
            ),
            (filler("You come ."), sentence(("Tu", "PRON"), ("viens", "VERB"), (".", "PUNCT")), {(0, 0)}, 0),
            (filler("Your house ."), sentence(("Votre", "DET"), ("maison", "NOUN"), (".", "PUNCT")), set(), 0),
            (filler("Your car ."), sentence(("Ta", "DET"), ("voiture", "NOUN"), (".", "PUNCT")), set(), 0),
        ]
    )
    # first T word: nothing before it; "Votre" (V) follows only T words: near-miss
    assert tags("fr", d, "formality") == [[], ["Tu"], [], ["Ta"]]


def test_fr_formality_same_sentence_is_not_previous_unless_configured():
    d = doc([(filler("You and you"), sentence(("Tu", "PRON"), ("et", "CCONJ"), ("toi", "PRON")), set(), 0)])
    assert tags("fr", d, "formality") == [[]]
    assert tags("fr", d, "formality", same_sentence_counts=True) == [["toi"]]


def test_de_formal_sie_is_case_sensitive_and_sentence_initial_needs_features():
    d = doc(
        [
            (
                filler("Do you have time ?"),
                sentence(("Haben", "AUX"), ("Sie", "PRON"), ("Zeit", "NOUN"), ("?", "PUNCT")),
                set(),
                0,
            ),
            (
                filler("You are nice ."),
                sentence(("Sie", "PRON", "Person=2|Polite=Form"), ("sind", "AUX"), ("nett", "ADJ")),
                set(),
                0,
            ),
            (
                filler("They are nice ."),
                sentence(("Sie", "PRON", "Person=3|Number=Plur"), ("sind", "AUX"), ("nett", "ADJ")),
                set(),
                0,
            ),
            (
                filler("she comes and you"),
                sentence(("sie", "PRON"), ("kommt", "VERB"), ("und", "CCONJ"), ("Sie", "PRON")),
                set(),
                0,
            ),
        ]
    )
    assert tags("de", d, "formality") == [[], ["Sie"], [], ["Sie"]]


def test_es_subject_drop_verbs_carry_formality():
    you_eat = sentence(
        ("You", "PRON", "Person=2", 2, "nsubj"), ("eat", "VERB", None, 0, "root"), (".", "PUNCT", None, 2, "punct")
    )
    he_eats = sentence(
        ("He", "PRON", "Person=3", 2, "nsubj"), ("eats", "VERB", None, 0, "root"), (".", "PUNCT", None, 2, "punct")
    )
    d = doc(
        [
            (
                filler("You eat bread ."),
                sentence(("Tú", "PRON"), ("comes", "VERB", "Person=2|Number=Sing"), ("pan", "NOUN")),
                {(0, 0), (1, 1)},
                0,
            ),
            (you_eat, sentence(("Comes", "VERB", "Person=2|Number=Sing"), (".", "PUNCT")), {(1, 0), (2, 1)}, 0),
            (he_eats, sentence(("Come", "VERB", "Person=3|Number=Sing"), (".", "PUNCT")), {(1, 0), (2, 1)}, 0),
            (you_eat, sentence(("Come", "VERB", "Person=3|Number=Sing"), (".", "PUNCT")), {(1, 0), (2, 1)}, 0),
        ]
    )
    # 3rd person with a "you" subject is V, but no V word came before it: near-miss
    assert tags("es", d, "formality") == [[], ["Comes"], [], []]
    # French is not pro-drop: the same verbs are never formality words there
    assert tags("fr", d, "formality") == [[], [], [], []]


def test_ja_honorifics_and_zh_ru_pronouns():
    ja = doc(
        [
            (filler("It is a book ."), sentence(("本", "NOUN"), ("です", "AUX"), ("。", "PUNCT")), set(), 0),
            (filler("I go ."), sentence(("行き", "VERB"), ("ます", "AUX"), ("。", "PUNCT")), set(), 0),
            (filler("It is so ."), sentence(("そう", "ADV"), ("だ", "AUX"), ("。", "PUNCT")), set(), 0),
        ]
    )
    assert tags("ja", ja, "formality") == [[], ["ます"], []]
    zh = doc(
        [
            *[
                (filler("you"), sentence(("您", "PRON"), ("好", "ADJ"))),
                (filler("you"), sentence(("您", "PRON"), ("请", "VERB"))),
            ][:0],
            (filler("you"), sentence(("您", "PRON"), ("好", "ADJ")), set(), 0),
            (filler("you"), sentence(("你", "PRON")), set(), 0),
            (filler("you"), sentence(("您", "PRON"), ("请", "VERB")), set(), 0),
        ]
    )
    assert tags("zh", zh, "formality") == [[], [], ["您"]]
    ru = doc(
        [
            (filler("you"), sentence(("Вы", "PRON"), ("здесь", "ADV")), set(), 0),
            (filler("your"), sentence(("ваш", "DET"), ("дом", "NOUN")), set(), 0),
        ]
    )
    assert tags("ru", ru, "formality") == [[], ["ваш"]]


# --- pronouns --------------------------------------------------------------------------------
def house_doc(tgt_pronoun="Elle", same_sentence=False, upos="PRON"):
    s1 = sentence(
        ("I", "PRON"),
        ("see", "VERB"),
        ("the", "DET", None, 4, "det", "Entity=(e1-object"),
        ("house", "NOUN", None, 2, "obj", "Entity=e1)"),
    )
    if same_sentence:
        s2 = sentence(
            ("The", "DET", None, 2, "det", "Entity=(e2-object"),
            ("house", "NOUN", None, 0, "root", "Entity=e2)"),
            ("and", "CCONJ"),
            ("it", "PRON", None, 2, "conj", "Entity=(e2-object)"),
        )
        return doc(
            [
                (s1, filler("Je vois la maison"), {(0, 0)}, 0),
                (s2, sentence(("La", "DET"), ("maison", "NOUN"), ("et", "CCONJ"), (tgt_pronoun, upos)), {(3, 3)}, 0),
            ]
        )
    s2 = sentence(("It", "PRON", None, 2, "nsubj", "Entity=(e1-object)"), ("is", "AUX"), ("big", "ADJ"))
    return doc(
        [
            (s1, filler("Je vois la maison"), {(0, 0)}, 0),
            (s2, sentence((tgt_pronoun, upos), ("est", "AUX"), ("grande", "ADJ")), {(0, 0), (2, 2)}, 0),
        ]
    )


def test_fr_pronoun_with_antecedent_in_an_earlier_sentence():
    assert tags("fr", house_doc(), "pronouns") == [[], ["Elle"]]


@pytest.mark.parametrize("kwargs", [{"same_sentence": True}, {"tgt_pronoun": "Ce"}, {"upos": "DET"}])
def test_fr_pronoun_near_misses(kwargs):
    assert tags("fr", house_doc(**kwargs), "pronouns") == [[], []]


def test_pronoun_without_any_antecedent_is_not_tagged():
    s = sentence(("It", "PRON"), ("rains", "VERB"))
    d = doc(
        [
            (filler("Hello ."), filler("Bonjour ."), set(), 0),
            (s, sentence(("Il", "PRON"), ("pleut", "VERB")), {(0, 0)}, 0),
        ]
    )
    assert tags("fr", d, "pronouns") == [[], []]


def test_de_es_pronoun_lists():
    d = house_doc(tgt_pronoun="Sie")
    assert tags("de", d, "pronouns") == [[], ["Sie"]]
    assert tags("es", house_doc(tgt_pronoun="Ella"), "pronouns") == [[], ["Ella"]]
    assert tags("es", house_doc(tgt_pronoun="Sie"), "pronouns") == [[], []]


# --- verb form -------------------------------------------------------------------------------
def verb_doc(t1, t2, upos="VERB"):
    return doc(
        [
            (
                filler("He was eating ."),
                sentence(("Il", "PRON"), ("mangeait", upos, f"Tense={t1}"), (".", "PUNCT")),
                set(),
                0,
            ),
            (
                filler("He was sleeping ."),
                sentence(("Il", "PRON"), ("dormait", upos, f"Tense={t2}"), (".", "PUNCT")),
                set(),
                0,
            ),
        ]
    )


def test_fr_verb_form_ambiguous_tense_seen_before():
    assert tags("fr", verb_doc("Imp", "Imp"), "verb_form") == [[], ["dormait"]]
    assert tags("fr", verb_doc("Imp", "Past"), "verb_form") == [[], []]  # a different tense
    assert tags("fr", verb_doc("Pres", "Pres"), "verb_form") == [[], []]  # not ambiguous in French
    assert tags("fr", verb_doc("Imp", "Imp", upos="NOUN"), "verb_form") == [[], []]
    assert tags("ru", verb_doc("Past", "Past"), "verb_form") == [[], ["dormait"]]
    assert tags("es", verb_doc("Fut", "Fut"), "verb_form") == [[], ["dormait"]]


def test_no_tag_where_the_phenomenon_does_not_apply():
    # Table 6 zeros: no verb form for zh/de/ja, no formality for ar/he, no pronouns for ru/zh
    for lang in ("zh", "de", "ja", "ar", "ko"):
        assert tags(lang, verb_doc("Past", "Past"), "verb_form") == [[], []]
    assert "formality" not in MudaTagger("ar").phenomena and "formality" not in MudaTagger("he").phenomena
    assert "pronouns" not in MudaTagger("ru").phenomena and "verb_form" not in MudaTagger("zh").phenomena


# --- lexical cohesion ------------------------------------------------------------------------
def test_lexical_cohesion_after_three_earlier_occurrences():
    pair = (
        sentence(("The", "DET"), ("house", "NOUN")),
        sentence(("La", "DET"), ("maison", "NOUN")),
        {(0, 0), (1, 1)},
        0,
    )
    other = (
        sentence(("The", "DET"), ("house", "NOUN")),
        sentence(("Le", "DET"), ("domicile", "NOUN")),
        {(0, 0), (1, 1)},
        0,
    )
    d = doc([pair, pair, other, pair, pair])
    assert tags("fr", d, "lexical_cohesion") == [[], [], [], [], ["maison"]]
    assert tags("fr", d, "lexical_cohesion", lexical_min_count=2) == [[], [], [], ["maison"], ["maison"]]
    # in one sentence three times: the current sentence does not count
    triple = (
        sentence(("house", "NOUN"), ("house", "NOUN"), ("house", "NOUN")),
        sentence(("maison", "NOUN"), ("maison", "NOUN"), ("maison", "NOUN")),
        {(0, 0), (1, 1), (2, 2)},
        0,
    )
    assert tags("zh", doc([triple, pair]), "lexical_cohesion") == [[], ["maison"]]
    assert tags("zh", doc([pair, triple]), "lexical_cohesion") == [[], []]


# --- ellipsis --------------------------------------------------------------------------------
def test_english_ellipsis_detector():
    i_dont = sentence(
        ("I", "PRON", None, 2, "nsubj"),
        ("do", "AUX", None, 0, "root"),
        ("n't", "PART", None, 2, "advmod"),
        (".", "PUNCT", None, 2, "punct"),
    )
    so_can_i = sentence(
        ("So", "ADV", None, 2, "advmod"), ("can", "AUX", None, 0, "root"), ("I", "PRON", None, 2, "nsubj")
    )
    took_two = sentence(
        ("I", "PRON", None, 2, "nsubj"), ("took", "VERB", None, 0, "root"), ("two", "NUM", None, 2, "obj")
    )
    want_to = sentence(
        ("I", "PRON", None, 2, "nsubj"), ("want", "VERB", None, 0, "root"), ("to", "PART", None, 2, "xcomp")
    )
    i_do_it = sentence(("I", "PRON", None, 2, "nsubj"), ("do", "AUX", None, 3, "aux"), ("eat", "VERB", None, 0, "root"))
    two_cats = sentence(
        ("I", "PRON", None, 2, "nsubj"),
        ("took", "VERB", None, 0, "root"),
        ("two", "NUM", None, 4, "nummod"),
        ("cats", "NOUN", None, 2, "obj"),
    )
    it_is_good = sentence(
        ("It", "PRON", None, 3, "nsubj"), ("is", "AUX", None, 3, "cop"), ("good", "ADJ", None, 0, "root")
    )
    for s in (i_dont, so_can_i, took_two, want_to):
        assert is_elliptical(s), s.forms
    for s in (i_do_it, two_cats, it_is_good):
        assert not is_elliptical(s), s.forms


def test_ellipsis_tags_unaligned_words_seen_before():
    s1 = (
        filler("I eat apples ."),
        sentence(
            ("Je", "PRON"), ("mange", "VERB", None, None, None, None, "manger"), ("des", "DET"), ("pommes", "NOUN")
        ),
        {(0, 0), (1, 1), (2, 3)},
        0,
    )
    s2 = (
        filler("So do I ."),
        sentence(
            ("Moi", "PRON"), ("aussi", "ADV"), ("je", "PRON"), ("mange", "VERB", None, None, None, None, "manger")
        ),
        {(2, 0)},
        1,
    )
    assert tags("fr", doc([s1, s2]), "ellipsis") == [[], ["je", "mange"]]
    not_elliptical = (s2[0], s2[1], s2[2], 0)
    assert tags("fr", doc([s1, not_elliptical]), "ellipsis") == [[], []]
    aligned = (s2[0], s2[1], {(2, 0), (1, 3), (0, 2)}, 1)
    assert tags("fr", doc([s1, aligned]), "ellipsis") == [[], []]


# --- every language ----------------------------------------------------------------------------
@pytest.mark.parametrize("code", sorted(registry()))
def test_every_language_loads_and_tags(code):
    lang = registry()[code]
    tagger = MudaTagger(code)
    assert set(tagger.phenomena) <= {"lexical_cohesion", "formality", "pronouns", "verb_form", "ellipsis"}
    pair = (sentence(("The", "DET"), ("house", "NOUN")), sentence(("x", "DET"), ("casa", "NOUN")), {(0, 0), (1, 1)}, 0)
    pairs = [pair] * 4
    if lang.formality:
        word = sorted(lang.formality.T)[0]
        pairs = [(filler("you"), sentence((word, "PRON")), set(), 0)] * 2 + pairs
    out = tagger.tag_document(doc(pairs))
    flat = [t for s in out for tok in s for t in tok["tags"]]
    assert flat.count("lexical_cohesion") == 1
    assert flat.count("formality") == (1 if lang.formality else 0)
