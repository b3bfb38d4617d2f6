"""docalign's own sentence rules (``docalign.segmenter.rules``, ``--segmenter rules``): each rule, and where
they differ from spaCy's sentencizer on purpose (dialogue dashes, ellipses, quotes, titles)."""

from __future__ import annotations

import pytest

from docalign.segmenter import Segmenter
from docalign.segmenter.rules import SentenceRules

CASES = [
    # (language, text, sentences)
    ("fr", "M. Dupont est là. Il part.", ["M. Dupont est là.", "Il part."]),
    ("fr", "Salut Paul , mon ami . Tu vois le gâteau .", ["Salut Paul , mon ami .", "Tu vois le gâteau ."]),
    ("fr", "« Tu viens ? » demanda-t-il. Non !", ["« Tu viens ? » demanda-t-il.", "Non !"]),
    ("fr", "Il a dit : « Non ! » Puis il est parti.", ["Il a dit : « Non ! »", "Puis il est parti."]),
    ("fr", "Il part. « Bonjour », dit-elle.", ["Il part.", "« Bonjour », dit-elle."]),
    ("fr", "Il est… comment dire… fatigué. Oui.", ["Il est… comment dire… fatigué.", "Oui."]),
    ("fr", "Je ne sais pas... Peut-être demain.", ["Je ne sais pas...", "Peut-être demain."]),
    ("fr", "Des pommes, des poires, etc. et des prunes.", ["Des pommes, des poires, etc. et des prunes."]),
    ("fr", "Des pommes, des poires, etc. Puis des prunes.", ["Des pommes, des poires, etc.", "Puis des prunes."]),
    ("fr", "Né en 52 av. J.-C. à Rome. Mort jeune.", ["Né en 52 av. J.-C. à Rome.", "Mort jeune."]),
    ("en", "Dr. Watson met J. K. Rowling in the U.S. last year.", ["Dr. Watson met J. K. Rowling in the U.S. last year."]),  # noqa: E501
    ("en", "See p. 5 and fig. 3. Then stop.", ["See p. 5 and fig. 3.", "Then stop."]),
    ("en", "The price is 3.5 dollars. It rose.", ["The price is 3.5 dollars.", "It rose."]),
    ("en", '- Are you sure? - Yes. "Fine," he said.', ["- Are you sure?", "- Yes.", '"Fine," he said.']),
    ("en", 'He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
    ("en", "(He left.) She stayed.", ["(He left.)", "She stayed."]),
    ("de", "Am 3. Oktober kam Hr. Meyer, bzw. Frau Meyer. Dann ging er.",
     ["Am 3. Oktober kam Hr. Meyer, bzw. Frau Meyer.", "Dann ging er."]),
    ("de", "Ihr Land braucht Sie, Mr. Cage. Gut.", ["Ihr Land braucht Sie, Mr. Cage.", "Gut."]),
    ("es", "¿Vienes? ¡Claro! La Sra. García llega.", ["¿Vienes?", "¡Claro!", "La Sra. García llega."]),
    # fullwidth ! and ? (\uff01, \uff1f), no space between sentences
    ("zh", "这是第一句话。这是第二句话\uff01“这是第三句话\uff1f”最后一句。",
     ["这是第一句话。", "这是第二句话\uff01", "“这是第三句话\uff1f”", "最后一句。"]),
    ("hi", "यह पहला वाक्य है। यह दूसरा है।", ["यह पहला वाक्य है।", "यह दूसरा है।"]),
    ("ar", "هل أنت هنا؟ نعم.", ["هل أنت هنا؟", "نعم."]),
    ("xx", "No mark at the end", ["No mark at the end"]),
    ("xx", "  . ", ["."]),
]  # fmt: skip


@pytest.mark.parametrize(("language", "text", "sentences"), CASES)
def test_the_rules_split_where_a_sentence_ends(language, text, sentences):
    spans = SentenceRules(language).split_line(text)
    assert [text[a:b] for a, b in spans] == sentences


def test_a_language_without_a_list_keeps_only_the_rules_that_need_none():
    """French abbreviations are not English ones: "env." ends a sentence in English text."""
    text = "Il y a env. trois cents personnes."
    assert len(SentenceRules("fr").split_line(text)) == 1
    assert len(SentenceRules("en").split_line(text)) == 2
    assert SentenceRules("pt-BR").code == "pt" and SentenceRules("xx").abbreviations.other == frozenset()


def test_the_segmenter_keeps_offsets_into_the_document_across_line_breaks():
    text = "Un. Deux.\r\nTrois\rQuatre.\n\n  Cinq ?  "
    spans = Segmenter("rules", "fr").split([text, ""])
    assert [text[a:b] for a, b in spans[0]] == ["Un.", "Deux.", "Trois", "Quatre.", "Cinq ?"]
    assert spans[1] == []


def test_a_document_written_as_one_very_long_line_is_split_by_the_rules():
    """No length limit (spaCy's is nlp.max_length, a million characters)."""
    text = " ".join(f"Le chat {k} dort." for k in range(80_000))
    assert len(text) > 1_000_000
    assert len(Segmenter("rules", "fr").split([text])[0]) == 80_000
