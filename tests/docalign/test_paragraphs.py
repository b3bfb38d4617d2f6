"""docalign on paragraph lines (WMT24's lines hold up to 15 sentences): a link takes as many
segments as its lines' pivots have sentences, and lines that run on into each other (a headline,
a post without a full stop: the output's segmenter cannot split them either) one link, cut apart."""

from __future__ import annotations

import random

from docalign import dp
from docalign.align import AlignOptions, align_documents, line_sentences
from docalign.links import DocumentAlignment, cut_into, resolve
from docalign.segmenter import Segmenter
from tests.docalign.test_align import corpus, joined, noisy


def paragraphs(sizes, seed: int = 0):
    """Lines of ``sizes`` sentences each (one document), and another system's translation of them."""
    sentences, _ = corpus(10, seed)
    # a word changed in some (a sentence's last keeps its full stop: the pivot has as many sentences)
    other = [o if o.endswith(".") else o + "." for o in noisy(sentences, seed + 1)]
    lines, pivots, at = [], [], 0
    for size in sizes:
        lines.append(" ".join(sentences[at : at + size]))
        pivots.append(" ".join(other[at : at + size]))
        at += size
    return lines, pivots


def test_paragraph_lines_of_four_and_five_sentences_get_all_of_theirs():
    lines, pivots = paragraphs([1, 5, 2, 4, 1, 5, 3, 1, 4])
    ids = ["d"] * len(lines)
    a = align_documents(joined(lines, ids), pivots, ids, AlignOptions(language="fr"))
    assert a.hypotheses == lines
    assert [link.kind for link in a.documents[0].links] == [
        "1-1",
        "1-5",
        "1-2",
        "1-4",
        "1-1",
        "1-5",
        "1-3",
        "1-1",
        "1-4",
    ]
    assert a.statistics["links"]["1-5"] == 2 and a.statistics["splits"] == 6 and a.statistics["merges"] == 0


def test_many_documents_of_paragraphs_are_aligned_as_they_were_written():
    rng = random.Random(3)
    lines, pivots, ids = [], [], []
    for d in range(12):
        doc_lines, doc_pivots = paragraphs([rng.randint(1, 6) for _ in range(rng.randint(2, 9))], seed=d)
        lines += doc_lines
        pivots += doc_pivots
        ids += [f"doc{d}"] * len(doc_lines)
    a = align_documents(joined(lines, ids), pivots, ids, AlignOptions(language="fr"))
    assert a.hypotheses == lines


def test_lines_without_a_sentence_end_are_one_link_cut_apart():
    pivots = [
        "Le peintre expose ses paysages dans une nouvelle galerie",  # a headline
        "Le tableau de 2022 montre des gens dans la piscine. Il sera exposé dès le 13 janvier.",
        "c'était hier",  # posts without a full stop
        "hé hé, il faut trouver plus de bière",
        "embauche-moi",
        "Je ne suis pas ta mère.",
    ]
    truth = [
        "Un peintre montre ses paysages dans la nouvelle galerie",
        "Le tableau de 2022 montre des personnes dans la piscine. Il sera visible dès le 13 janvier.",
        "c'était hier",
        "hé hé il faut trouver davantage de bière",
        "embauchez-moi",
        "Je ne suis pas ta mère.",
    ]
    ids = ["d"] * len(pivots)
    options = AlignOptions(language="fr")
    lines = line_sentences(pivots, Segmenter(options.segmenter, options.language))
    assert list(lines.counts) == [1, 2, 1, 1, 1, 1]
    assert list(lines.runs_on) == [True, False, True, True, True, False]
    a = align_documents(joined(truth, ids), pivots, ids, options)
    assert a.hypotheses == truth
    assert [link.kind for link in a.documents[0].links] == ["2-2", "4-1"]


def test_a_pivot_without_punctuation_counts_the_sentences_of_the_line_texts():
    """``--pivot none``: the gloss has no punctuation; the source's sentences are counted."""
    lines, sources = paragraphs([1, 4, 2, 5, 1])
    pivots = [" ".join(w.strip(".,").lower() for w in p.split()) for p in sources]  # a gloss: words only
    ids = ["d"] * len(lines)
    options = AlignOptions(language="fr")
    counted = align_documents(joined(lines, ids), pivots, ids, options, line_texts=sources)
    assert counted.hypotheses == lines
    assert [link.kind for link in counted.documents[0].links] == ["1-1", "1-4", "1-2", "1-5", "1-1"]


def test_the_links_a_paragraph_line_may_take():
    assert dp.segment_counts(1, 1) == [1, 2]  # a sentence: 1-1, a split 1-2
    assert dp.segment_counts(2, 2) == [1, 2]  # two sentences: 2-1, 2-2, as before
    assert dp.segment_counts(1, 5) == [1, 2, 3, 4, 5, 6]
    assert dp.segment_counts(1, 10) == [1, 2, 5, 6, 7, 8, 9, 10, 11]
    lines = dp.LineSentences([3, 1, 1, 2], [False, True, True, False])
    assert dp.link_shape(lines, 0, 2) == (4, False)  # a merge the output made
    assert dp.link_shape(lines, 1, 3) == (2, True)  # three lines that run on: 1 + 1 + 2 - 2
    assert dp.link_shape(lines, 0, 3) is None  # more than two lines, not all running on
    weights = dp.Weights()
    assert dp.fixed_cost(1, 3, 3, False, weights) == 0.0
    assert dp.fixed_cost(1, 4, 3, False, weights) == weights.split_merge
    assert dp.fixed_cost(2, 4, 4, False, weights) == weights.two_two
    assert dp.fixed_cost(3, 2, 2, True, weights) == 0.0


def test_a_merge_is_cut_where_the_word_edits_say_the_sentence_end_only_breaking_ties():
    """A 2-1 link with word noise: the output's sentence ends a word before where its first line
    ends; the cut is where the word edits against the two pivots are fewest (mwerSegmenter's
    measure), not at the sentence end (which saves the fewest edits but one); an output sentence's
    end only decides between cuts of equal edits."""
    pivots = ["Der Hund bellt laut", "Die Katze schläft auf dem Sofa."]
    text = "Der Hund bellte. Laut die Katze schlief auf dem Sofa."
    end = text.index(" Laut")
    assert cut_into(text, pivots, [end]) == ["Der Hund bellte. Laut", "die Katze schlief auf dem Sofa."]
    segments = Segmenter("rules", "de").split([text])[0]
    d = DocumentAlignment("d", 0, text, segments, [dp.Link((0, 2), (0, 2), 0.5)])
    resolve(d, pivots, 2, [0, 1])
    assert d.hypotheses == ["Der Hund bellte. Laut", "die Katze schlief auf dem Sofa."]
    # "Heute" is one insertion at either side of the sentence end: a tie, to the sentence end
    text = "Der Hund bellt. Heute die Katze schläft."
    pivots = ["Der Hund bellt.", "Die Katze schläft."]
    end = text.index(" Heute")
    assert cut_into(text, pivots, [end]) == ["Der Hund bellt.", "Heute die Katze schläft."]
    assert cut_into(text, [*pivots, "Das Haus ist rot."], [end])[:2] == ["Der Hund bellt.", "Heute die Katze schläft."]


def test_short_lines_that_ran_on_into_a_neighbours_sentence_get_their_words_not_an_omission():
    """A WMT24 post of short lines without full stops (the references have them): the output's
    segmenter makes one sentence of three lines, the links 2-1 and two omissions; the omitted
    lines' words are in the link's text, so the text is cut among all four lines by word edits."""
    pivots = [
        "Ich habe einen Purzelbaum geschlagen und mein Floß zerstört.",
        "Ich habe mich mit meinem eigenen Bumerang getötet.",
        "Ich hasse Lava.",
        "Langsam langweilt mich der Schlamm auch.",
    ]
    text = (
        "Habe einen Purzelbaum gemacht und mein Floß zertrümmert Habe mich mit meinem eigenen Bumerang "
        "umgebracht Ich hasse Lava Ich fange an, den Schlamm auch zu langweilen."
    )
    a = align_documents([text], pivots, ["d"] * 4, AlignOptions(language="de"))
    assert a.hypotheses[:2] == [
        "Habe einen Purzelbaum gemacht und mein Floß zertrümmert",
        "Habe mich mit meinem eigenen Bumerang umgebracht",
    ]
    assert a.hypotheses[2].startswith("Ich hasse Lava") and a.hypotheses[3].endswith("auch zu langweilen.")
    assert " ".join(a.hypotheses) == text  # every word once
    assert a.statistics["omissions"] == 0 and [r["link"] for r in a.records()] == ["4-1"] * 4


def test_an_omitted_line_whose_words_are_not_in_the_neighbours_text_stays_omitted():
    """The same post with its third line dropped by the system: nothing in the text is a
    translation of it (a word or two in common by chance is not), so it stays an omission."""
    pivots = [
        "Ich habe einen Purzelbaum geschlagen und mein Floß zerstört.",
        "Ich habe mich mit meinem eigenen Bumerang getötet.",
        "Die Brücke über den Fluss wurde im Winter gesperrt.",
    ]
    text = "Habe einen Purzelbaum gemacht und mein Floß zertrümmert Habe mich mit meinem eigenen Bumerang umgebracht"
    a = align_documents([text], pivots, ["d"] * 3, AlignOptions(language="de"))
    assert a.hypotheses == [
        "Habe einen Purzelbaum gemacht und mein Floß zertrümmert",
        "Habe mich mit meinem eigenen Bumerang umgebracht",
        "",
    ]
    assert a.statistics["omissions"] == 1


def test_a_gloss_pivots_merge_is_cut_at_the_outputs_sentence_end_where_word_edits_differ_by_one():
    """With ``--pivot none`` the pivots are glosses (no punctuation, words translated one by one):
    word edits against them are weak evidence, and a merge is cut at the output's own sentence end
    where a cut elsewhere saves a single word edit (``Weights.sentence_end`` of the gloss's
    weights); with a reference the word edits decide, the sentence end only breaking ties."""
    from dataclasses import replace

    from docalign.lexical.gloss import WEIGHTS

    pivots = ["der hund bellen laut", "die katze schlafen auf dem sofa"]
    text = "Der Hund bellte. Laut die Katze schlief auf dem Sofa."
    segments = Segmenter("rules", "de").split([text])[0]
    assert len(segments) == 2

    def cut_with(weights: dp.Weights):
        d = DocumentAlignment("d", 0, text, segments, [dp.Link((0, 2), (0, 2), 0.5)])
        resolve(d, pivots, 2, [0, 1], weights.sentence_end)
        return d.hypotheses

    # "Laut" matches the first gloss: the word edits say one word later, by one edit
    assert cut_with(dp.Weights()) == ["Der Hund bellte. Laut", "die Katze schlief auf dem Sofa."]
    assert cut_with(replace(dp.Weights(), **WEIGHTS)) == ["Der Hund bellte.", "Laut die Katze schlief auf dem Sofa."]
    # two edits fewer elsewhere ("Laut" then also fills a word the first gloss has) outweigh it
    pivots = ["der hund bellen sehr laut", "die katze schlafen auf dem sofa"]
    assert cut_with(replace(dp.Weights(), **WEIGHTS)) == ["Der Hund bellte. Laut", "die Katze schlief auf dem Sofa."]
