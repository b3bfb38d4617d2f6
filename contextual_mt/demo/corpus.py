"""A deterministic EN->FR document corpus with planted context-dependent phenomena.

Every document opens with a greeting that fixes T-V formality. Three phenomena are planted,
each resolvable only from earlier sentences of the document (within 3 sentences):

- pronouns: "It is red ." -> "Il/Elle est rouge ." by the gender of the noun of the
  previous sentence (adjectives are gender-invariant, so nothing else gives it away);
- formality: "You like the car ." -> "Tu aimes / Vous aimez la voiture ." as set by the
  greeting ("Hi Tom , my friend ." / "Hello , Mr. Smith .") or the previous "you" sentence;
- lexical_choice: "This bank is old ." -> "Cette banque / rive est vieille" by an earlier
  sentence that disambiguates the noun ("... my money in the bank" / "... bank of the river").

Everything else translates from the sentence alone. Gold annotations are written beside the
text: CoNLL-U (UPOS, FEATS, LEMMA, HEAD, DEPREL; source coreference as CorefUD ``Entity`` in
MISC), Pharaoh alignments, and the planted target tokens.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from commandkit.options import check_required, option
from commandkit.outputs import atomic_write_lines, atomic_write_text
from contextual_mt.errors import given

PHENOMENA = ("pronouns", "formality", "lexical_choice")
WINDOW = 3  # planted tokens are resolvable from at most this many previous sentences
# the demo corpus's documents per split and its seed: `demo-data`'s defaults, and the demo's
TRAIN_DOCS, VALID_DOCS, TEST_DOCS, SEED = 3000, 150, 300, 13
PLANTED_SET = "test.contrastive.json"  # the planted contrastive set, in the corpus folder (Voita format)


@dataclass
class Token:
    form: str
    lemma: str
    upos: str
    head: int  # 1-based; 0 = root
    deprel: str
    feats: str = "_"
    misc: str = "_"


@dataclass
class Planted:
    index: int  # 0-based target token index
    phenomenon: str
    gold: str
    alternative: str
    # index of an earlier token of the same sentence that already fixes this one (verb agreement):
    # given the target prefix, such a token needs no context, so P-CXMI should not flag it
    agrees_with: Optional[int] = None


@dataclass
class Pair:
    src: List[Token]
    tgt: List[Token]
    align: List[Tuple[int, int]]
    planted: List[Planted] = field(default_factory=list)
    kind: str = ""
    noun: Optional[str] = None  # the object noun, a pronoun's possible antecedent
    mention: Optional[Tuple[int, int]] = None  # source span of that noun phrase (inclusive)
    pronoun_at: Optional[int] = None  # source index of an anaphoric "it"


# ------------------------------------------------------------------ vocabulary
NOUNS: Dict[str, Tuple[str, str]] = {  # english -> (french, gender)
    "book": ("livre", "Masc"),
    "pen": ("stylo", "Masc"),
    "bike": ("vélo", "Masc"),
    "train": ("train", "Masc"),
    "cake": ("gâteau", "Masc"),
    "garden": ("jardin", "Masc"),
    "desk": ("bureau", "Masc"),
    "phone": ("téléphone", "Masc"),
    "car": ("voiture", "Fem"),
    "house": ("maison", "Fem"),
    "table": ("table", "Fem"),
    "chair": ("chaise", "Fem"),
    "lamp": ("lampe", "Fem"),
    "window": ("fenêtre", "Fem"),
    "door": ("porte", "Fem"),
    "watch": ("montre", "Fem"),
}
ADJECTIVES = {  # gender-invariant in French
    "red": "rouge",
    "yellow": "jaune",
    "useful": "utile",
    "modern": "moderne",
    "famous": "célèbre",
    "fast": "rapide",
    "practical": "pratique",
    "comfortable": "confortable",
    "fragile": "fragile",
    "solid": "solide",
    "magnificent": "magnifique",
    "simple": "simple",
}
# english verb -> (lemma, tu form, vous form); antecedent sentences use the first person
YOU_VERBS = {
    "like": ("aimer", "aimes", "aimez"),
    "see": ("voir", "vois", "voyez"),
    "want": ("vouloir", "veux", "voulez"),
    "have": ("avoir", "as", "avez"),
    "buy": ("acheter", "achètes", "achetez"),
}
SUBJECT_VERBS = [  # (en subject, en verb, fr subject, fr verb, fr lemma, person, number)
    ("I", "see", "Je", "vois", "voir", "1", "Sing"),
    ("We", "like", "Nous", "aimons", "aimer", "1", "Plur"),
    ("They", "sell", "Ils", "vendent", "vendre", "3", "Plur"),
    ("I", "want", "Je", "veux", "vouloir", "1", "Sing"),
]
FORMAL_NAMES = ["Smith", "Martin", "Dupont", "Jones", "Brown", "Garcia", "Moreau", "Wilson"]
INFORMAL_NAMES = ["Tom", "Anna", "Paul", "Lisa", "Max", "Julie", "Leo", "Emma"]
# ambiguous noun -> sense -> (french, cue sentence builder key)
AMBIGUOUS = {"bank": ("banque", "rive"), "plant": ("plante", "usine"), "bat": ("chauve-souris", "batte")}


def _det(gender: str) -> Token:
    form = "le" if gender == "Masc" else "la"
    return Token(form, "le", "DET", 4, "det", f"Definite=Def|Gender={gender}|Number=Sing|PronType=Art")


# ------------------------------------------------------------------ sentence templates
def greeting(rng: random.Random, formal: bool) -> Pair:
    if formal:
        name = rng.choice(FORMAL_NAMES)
        src = [
            Token("Hello", "hello", "INTJ", 0, "root"),
            Token(",", ",", "PUNCT", 1, "punct"),
            Token("Mr.", "Mr.", "PROPN", 4, "compound", "Number=Sing"),
            Token(name, name, "PROPN", 1, "vocative", "Number=Sing"),
            Token(".", ".", "PUNCT", 1, "punct"),
        ]
        tgt = [
            Token("Bonjour", "bonjour", "INTJ", 0, "root"),
            Token(",", ",", "PUNCT", 1, "punct"),
            Token("monsieur", "monsieur", "NOUN", 1, "vocative", "Gender=Masc|Number=Sing"),
            Token(name, name, "PROPN", 3, "flat:name"),
            Token(".", ".", "PUNCT", 1, "punct"),
        ]
        return Pair(src, tgt, [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)], kind="greeting_formal")
    name = rng.choice(INFORMAL_NAMES)
    src = [
        Token("Hi", "hi", "INTJ", 0, "root"),
        Token(name, name, "PROPN", 1, "vocative", "Number=Sing"),
        Token(",", ",", "PUNCT", 5, "punct"),
        Token("my", "my", "PRON", 5, "nmod:poss", "Number=Sing|Person=1|Poss=Yes|PronType=Prs"),
        Token("friend", "friend", "NOUN", 2, "appos", "Number=Sing"),
        Token(".", ".", "PUNCT", 1, "punct"),
    ]
    tgt = [
        Token("Salut", "salut", "INTJ", 0, "root"),
        Token(name, name, "PROPN", 1, "vocative"),
        Token(",", ",", "PUNCT", 5, "punct"),
        Token("mon", "mon", "DET", 5, "det", "Gender=Masc|Number=Sing|Poss=Yes|PronType=Prs"),
        Token("ami", "ami", "NOUN", 2, "appos", "Gender=Masc|Number=Sing"),
        Token(".", ".", "PUNCT", 1, "punct"),
    ]
    return Pair(src, tgt, [(i, i) for i in range(6)], kind="greeting_informal")


def _svo(
    subject: Tuple[str, str, str],
    verb: Tuple[str, str],
    fr_subject: Tuple[str, str],
    fr_verb: Tuple[str, str, str],
    noun: str,
) -> Tuple[List[Token], List[Token]]:
    """'SUBJ VERB the NOUN .' and its French, with gold annotation.
    subject = (form, lemma, FEATS); verb = (form, lemma); fr_subject = (form, FEATS);
    fr_verb = (form, lemma, FEATS)."""
    fr, gender = NOUNS[noun]
    src = [
        Token(subject[0], subject[1], "PRON", 2, "nsubj", subject[2]),
        Token(verb[0], verb[1], "VERB", 0, "root", "Mood=Ind|Tense=Pres|VerbForm=Fin"),
        Token("the", "the", "DET", 4, "det", "Definite=Def|PronType=Art"),
        Token(noun, noun, "NOUN", 2, "obj", "Number=Sing"),
        Token(".", ".", "PUNCT", 2, "punct"),
    ]
    tgt = [
        Token(fr_subject[0], fr_subject[0].lower(), "PRON", 2, "nsubj", fr_subject[1]),
        Token(fr_verb[0], fr_verb[1], "VERB", 0, "root", fr_verb[2]),
        _det(gender),
        Token(fr, fr, "NOUN", 2, "obj", f"Gender={gender}|Number=Sing"),
        Token(".", ".", "PUNCT", 2, "punct"),
    ]
    return src, tgt


def antecedent(rng: random.Random) -> Pair:
    noun = rng.choice(sorted(NOUNS))
    s_en, v_en, s_fr, v_fr, lemma, person, number = rng.choice(SUBJECT_VERBS)
    src, tgt = _svo(
        (s_en, s_en if s_en == "I" else s_en.lower(), f"Case=Nom|Number={number}|Person={person}|PronType=Prs"),
        (v_en, v_en),
        (s_fr, f"Number={number}|Person={person}|PronType=Prs"),
        (v_fr, lemma, f"Mood=Ind|Number={number}|Person={person}|Tense=Pres|VerbForm=Fin"),
        noun,
    )
    return Pair(src, tgt, [(i, i) for i in range(5)], kind="antecedent", noun=noun, mention=(2, 3))


def you_sentence(rng: random.Random, formal: bool) -> Pair:
    noun = rng.choice(sorted(NOUNS))
    verb = rng.choice(sorted(YOU_VERBS))
    lemma, tu_form, vous_form = YOU_VERBS[verb]
    pron, alt_pron = ("Vous", "Tu") if formal else ("Tu", "Vous")
    form, alt_form = (vous_form, tu_form) if formal else (tu_form, vous_form)
    number = "Plur" if formal else "Sing"
    polite = "|Polite=Form" if formal else ""
    src, tgt = _svo(
        ("You", "you", "Case=Nom|Person=2|PronType=Prs"),
        (verb, verb),
        (pron, f"Number={number}|Person=2{polite}|PronType=Prs"),
        (form, lemma, f"Mood=Ind|Number={number}|Person=2|Tense=Pres|VerbForm=Fin"),
        noun,
    )
    planted = [Planted(0, "formality", pron, alt_pron), Planted(1, "formality", form, alt_form, agrees_with=0)]
    return Pair(src, tgt, [(i, i) for i in range(5)], planted, kind="you", noun=noun, mention=(2, 3))


def pronoun_sentence(rng: random.Random, antecedent_noun: str) -> Pair:
    gender = NOUNS[antecedent_noun][1]
    pron, alt = ("Il", "Elle") if gender == "Masc" else ("Elle", "Il")
    adj = rng.choice(sorted(ADJECTIVES))
    verb_en, verb_fr, lemma = rng.choice([("is", "est", "être"), ("looks", "semble", "sembler")])
    src = [
        Token("It", "it", "PRON", 3, "nsubj", "Case=Nom|Gender=Neut|Number=Sing|Person=3|PronType=Prs"),
        Token(
            verb_en,
            "be" if verb_en == "is" else "look",
            "AUX" if verb_en == "is" else "VERB",
            3,
            "cop" if verb_en == "is" else "xcomp",
            "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin",
        ),
        Token(adj, adj, "ADJ", 0, "root", "Degree=Pos"),
        Token(".", ".", "PUNCT", 3, "punct"),
    ]
    tgt = [
        Token(pron, pron.lower(), "PRON", 3, "nsubj", f"Gender={gender}|Number=Sing|Person=3|PronType=Prs"),
        Token(
            verb_fr,
            lemma,
            "AUX" if verb_fr == "est" else "VERB",
            3,
            "cop" if verb_fr == "est" else "xcomp",
            "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin",
        ),
        Token(ADJECTIVES[adj], ADJECTIVES[adj], "ADJ", 0, "root", "Number=Sing"),
        Token(".", ".", "PUNCT", 3, "punct"),
    ]
    return Pair(
        src, tgt, [(0, 0), (1, 1), (2, 2), (3, 3)], [Planted(0, "pronouns", pron, alt)], kind="pronoun", pronoun_at=0
    )


def _cue(noun: str, sense: int) -> Pair:
    """A sentence whose own words disambiguate ``noun``."""
    if noun == "bank" and sense == 0:
        src = [
            Token("I", "I", "PRON", 2, "nsubj", "Case=Nom|Number=Sing|Person=1|PronType=Prs"),
            Token("keep", "keep", "VERB", 0, "root", "Mood=Ind|Tense=Pres|VerbForm=Fin"),
            Token("my", "my", "PRON", 4, "nmod:poss", "Number=Sing|Person=1|Poss=Yes|PronType=Prs"),
            Token("money", "money", "NOUN", 2, "obj", "Number=Sing"),
            Token("in", "in", "ADP", 7, "case"),
            Token("the", "the", "DET", 7, "det", "Definite=Def|PronType=Art"),
            Token("bank", "bank", "NOUN", 2, "obl", "Number=Sing"),
            Token(".", ".", "PUNCT", 2, "punct"),
        ]
        tgt = [
            Token("Je", "je", "PRON", 2, "nsubj", "Number=Sing|Person=1|PronType=Prs"),
            Token("garde", "garder", "VERB", 0, "root", "Mood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin"),
            Token("mon", "mon", "DET", 4, "det", "Gender=Masc|Number=Sing|Poss=Yes|PronType=Prs"),
            Token("argent", "argent", "NOUN", 2, "obj", "Gender=Masc|Number=Sing"),
            Token("dans", "dans", "ADP", 7, "case"),
            Token("la", "le", "DET", 7, "det", "Definite=Def|Gender=Fem|Number=Sing|PronType=Art"),
            Token("banque", "banque", "NOUN", 2, "obl", "Gender=Fem|Number=Sing"),
            Token(".", ".", "PUNCT", 2, "punct"),
        ]
        return Pair(src, tgt, [(i, i) for i in range(8)], kind="cue", mention=(5, 6))
    if noun == "bank":
        src = [
            Token("We", "we", "PRON", 2, "nsubj", "Case=Nom|Number=Plur|Person=1|PronType=Prs"),
            Token("sit", "sit", "VERB", 0, "root", "Mood=Ind|Tense=Pres|VerbForm=Fin"),
            Token("on", "on", "ADP", 5, "case"),
            Token("the", "the", "DET", 5, "det", "Definite=Def|PronType=Art"),
            Token("bank", "bank", "NOUN", 2, "obl", "Number=Sing"),
            Token("of", "of", "ADP", 8, "case"),
            Token("the", "the", "DET", 8, "det", "Definite=Def|PronType=Art"),
            Token("river", "river", "NOUN", 5, "nmod", "Number=Sing"),
            Token(".", ".", "PUNCT", 2, "punct"),
        ]
        tgt = [
            Token("Nous", "nous", "PRON", 3, "nsubj", "Number=Plur|Person=1|PronType=Prs"),
            Token("sommes", "être", "AUX", 3, "cop", "Mood=Ind|Number=Plur|Person=1|Tense=Pres|VerbForm=Fin"),
            Token("assis", "assis", "ADJ", 0, "root", "Gender=Masc|Number=Plur"),
            Token("sur", "sur", "ADP", 6, "case"),
            Token("la", "le", "DET", 6, "det", "Definite=Def|Gender=Fem|Number=Sing|PronType=Art"),
            Token("rive", "rive", "NOUN", 3, "obl", "Gender=Fem|Number=Sing"),
            Token("du", "de", "ADP", 8, "case", "Definite=Def|Gender=Masc|Number=Sing|PronType=Art"),
            Token("fleuve", "fleuve", "NOUN", 6, "nmod", "Gender=Masc|Number=Sing"),
            Token(".", ".", "PUNCT", 3, "punct"),
        ]
        align = [(0, 0), (1, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 6), (7, 7), (8, 8)]
        return Pair(src, tgt, align, kind="cue", mention=(3, 4))
    fr_noun = AMBIGUOUS[noun][sense]
    fin3 = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
    src = [
        Token("This", "this", "DET", 2, "det", "Number=Sing|PronType=Dem"),
        Token(noun, noun, "NOUN", 3, "nsubj", "Number=Sing"),
    ]
    tgt = [
        Token("Cette", "ce", "DET", 2, "det", "Gender=Fem|Number=Sing|PronType=Dem"),
        Token(fr_noun, fr_noun, "NOUN", 3, "nsubj", "Gender=Fem|Number=Sing"),
    ]
    fem_def = "Definite=Def|Gender=Fem|Number=Sing|PronType=Art"
    if (noun, sense) == ("plant", 0):  # This plant has green leaves . / Cette plante a des feuilles vertes .
        src += [
            Token("has", "have", "VERB", 0, "root", fin3),
            Token("green", "green", "ADJ", 5, "amod", "Degree=Pos"),
            Token("leaves", "leaf", "NOUN", 3, "obj", "Number=Plur"),
        ]
        tgt += [
            Token("a", "avoir", "VERB", 0, "root", fin3),
            Token("des", "un", "DET", 5, "det", "Definite=Ind|Number=Plur|PronType=Art"),
            Token("feuilles", "feuille", "NOUN", 3, "obj", "Gender=Fem|Number=Plur"),
            Token("vertes", "vert", "ADJ", 5, "amod", "Gender=Fem|Number=Plur"),
        ]
        align = [(0, 0), (1, 1), (2, 2), (3, 5), (4, 3), (4, 4), (5, 6)]
    elif (noun, sense) == ("plant", 1):  # This plant makes cars . / Cette usine fabrique des voitures .
        src += [Token("makes", "make", "VERB", 0, "root", fin3), Token("cars", "car", "NOUN", 3, "obj", "Number=Plur")]
        tgt += [
            Token("fabrique", "fabriquer", "VERB", 0, "root", fin3),
            Token("des", "un", "DET", 5, "det", "Definite=Ind|Number=Plur|PronType=Art"),
            Token("voitures", "voiture", "NOUN", 3, "obj", "Gender=Fem|Number=Plur"),
        ]
        align = [(0, 0), (1, 1), (2, 2), (3, 3), (3, 4), (4, 5)]
    elif (noun, sense) == ("bat", 0):  # This bat flies at night . / Cette chauve-souris vole la nuit .
        src += [
            Token("flies", "fly", "VERB", 0, "root", fin3),
            Token("at", "at", "ADP", 5, "case"),
            Token("night", "night", "NOUN", 3, "obl", "Number=Sing"),
        ]
        tgt += [
            Token("vole", "voler", "VERB", 0, "root", fin3),
            Token("la", "le", "DET", 5, "det", fem_def),
            Token("nuit", "nuit", "NOUN", 3, "obl:mod", "Gender=Fem|Number=Sing"),
        ]
        align = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]
    else:  # This bat hits the ball . / Cette batte frappe la balle .
        src += [
            Token("hits", "hit", "VERB", 0, "root", fin3),
            Token("the", "the", "DET", 5, "det", "Definite=Def|PronType=Art"),
            Token("ball", "ball", "NOUN", 3, "obj", "Number=Sing"),
        ]
        tgt += [
            Token("frappe", "frapper", "VERB", 0, "root", fin3),
            Token("la", "le", "DET", 5, "det", fem_def),
            Token("balle", "balle", "NOUN", 3, "obj", "Gender=Fem|Number=Sing"),
        ]
        align = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]
    src.append(Token(".", ".", "PUNCT", 3, "punct"))
    tgt.append(Token(".", ".", "PUNCT", 3, "punct"))
    return Pair(src, tgt, align, kind="cue", mention=(0, 1))


def lexical_sentence(rng: random.Random, noun: str, sense: int) -> Pair:
    adj = rng.choice(sorted(ADJECTIVES))
    fr, alt = AMBIGUOUS[noun][sense], AMBIGUOUS[noun][1 - sense]
    src = [
        Token("This", "this", "DET", 2, "det", "Number=Sing|PronType=Dem"),
        Token(noun, noun, "NOUN", 4, "nsubj", "Number=Sing"),
        Token("is", "be", "AUX", 4, "cop", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"),
        Token(adj, adj, "ADJ", 0, "root", "Degree=Pos"),
        Token(".", ".", "PUNCT", 4, "punct"),
    ]
    tgt = [
        Token("Cette", "ce", "DET", 2, "det", "Gender=Fem|Number=Sing|PronType=Dem"),
        Token(fr, fr, "NOUN", 4, "nsubj", "Gender=Fem|Number=Sing"),
        Token("est", "être", "AUX", 4, "cop", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"),
        Token(ADJECTIVES[adj], ADJECTIVES[adj], "ADJ", 0, "root", "Number=Sing"),
        Token(".", ".", "PUNCT", 4, "punct"),
    ]
    return Pair(
        src, tgt, [(i, i) for i in range(5)], [Planted(1, "lexical_choice", fr, alt)], kind="lexical", mention=(0, 1)
    )


PRESENT_INDICATIVE = "Mood=Ind|Tense=Pres|VerbForm=Fin"  # a finite verb's features


def _fillers() -> List[Tuple[List[Token], List[Token], List[Tuple[int, int]]]]:
    """Context-free sentences that put distance between cues and planted tokens."""
    p3s = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
    return [
        (
            [
                Token("We", "we", "PRON", 2, "nsubj", "Case=Nom|Number=Plur|Person=1|PronType=Prs"),
                Token("eat", "eat", "VERB", 0, "root", PRESENT_INDICATIVE),
                Token("at", "at", "ADP", 4, "case"),
                Token("noon", "noon", "NOUN", 2, "obl", "Number=Sing"),
                Token(".", ".", "PUNCT", 2, "punct"),
            ],
            [
                Token("Nous", "nous", "PRON", 2, "nsubj", "Number=Plur|Person=1|PronType=Prs"),
                Token("mangeons", "manger", "VERB", 0, "root", "Mood=Ind|Number=Plur|Person=1|Tense=Pres|VerbForm=Fin"),
                Token("à", "à", "ADP", 4, "case"),
                Token("midi", "midi", "NOUN", 2, "obl:mod", "Gender=Masc|Number=Sing"),
                Token(".", ".", "PUNCT", 2, "punct"),
            ],
            [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)],
        ),
        (
            [
                Token("The", "the", "DET", 2, "det", "Definite=Def|PronType=Art"),
                Token("train", "train", "NOUN", 3, "nsubj", "Number=Sing"),
                Token("leaves", "leave", "VERB", 0, "root", p3s),
                Token("at", "at", "ADP", 5, "case"),
                Token("six", "six", "NUM", 3, "obl", "NumType=Card"),
                Token(".", ".", "PUNCT", 3, "punct"),
            ],
            [
                Token("Le", "le", "DET", 2, "det", "Definite=Def|Gender=Masc|Number=Sing|PronType=Art"),
                Token("train", "train", "NOUN", 3, "nsubj", "Gender=Masc|Number=Sing"),
                Token("part", "partir", "VERB", 0, "root", p3s),
                Token("à", "à", "ADP", 6, "case"),
                Token("six", "six", "NUM", 6, "nummod", "NumType=Card"),
                Token("heures", "heure", "NOUN", 3, "obl:mod", "Gender=Fem|Number=Plur"),
                Token(".", ".", "PUNCT", 3, "punct"),
            ],
            [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (4, 5), (5, 6)],
        ),
        (
            [
                Token("My", "my", "PRON", 2, "nmod:poss", "Number=Sing|Person=1|Poss=Yes|PronType=Prs"),
                Token("sister", "sister", "NOUN", 3, "nsubj", "Number=Sing"),
                Token("reads", "read", "VERB", 0, "root", p3s),
                Token("a", "a", "DET", 5, "det", "Definite=Ind|PronType=Art"),
                Token("lot", "lot", "NOUN", 3, "obl:npmod", "Number=Sing"),
                Token(".", ".", "PUNCT", 3, "punct"),
            ],
            [
                Token("Ma", "mon", "DET", 2, "det", "Gender=Fem|Number=Sing|Poss=Yes|PronType=Prs"),
                Token("sœur", "sœur", "NOUN", 3, "nsubj", "Gender=Fem|Number=Sing"),
                Token("lit", "lire", "VERB", 0, "root", p3s),
                Token("beaucoup", "beaucoup", "ADV", 3, "advmod"),
                Token(".", ".", "PUNCT", 3, "punct"),
            ],
            [(0, 0), (1, 1), (2, 2), (3, 3), (4, 3), (5, 4)],
        ),
        (
            [
                Token("They", "they", "PRON", 2, "nsubj", "Case=Nom|Number=Plur|Person=3|PronType=Prs"),
                Token("work", "work", "VERB", 0, "root", PRESENT_INDICATIVE),
                Token("today", "today", "NOUN", 2, "obl:tmod", "Number=Sing"),
                Token(".", ".", "PUNCT", 2, "punct"),
            ],
            [
                Token("Ils", "il", "PRON", 2, "nsubj", "Gender=Masc|Number=Plur|Person=3|PronType=Prs"),
                Token(
                    "travaillent",
                    "travailler",
                    "VERB",
                    0,
                    "root",
                    "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin",
                ),
                Token("aujourd'hui", "aujourd'hui", "ADV", 2, "advmod"),
                Token(".", ".", "PUNCT", 2, "punct"),
            ],
            [(0, 0), (1, 1), (2, 2), (3, 3)],
        ),
    ]


FILLERS = _fillers()


def filler(rng: random.Random) -> Pair:
    src, tgt, align = rng.choice(FILLERS)
    return Pair(list(src), list(tgt), list(align), kind="filler")


# ------------------------------------------------------------------ documents
def make_document(rng: random.Random) -> List[Pair]:
    """A greeting, then 2-6 sentences of episodes, each planted token within WINDOW."""
    formal = rng.random() < 0.5
    doc = [greeting(rng, formal)]
    anchor = 0  # last sentence that shows the formality level
    target_len = 1 + rng.randint(2, 6)
    while len(doc) < target_len:
        choices = ["pronoun", "lexical", "filler"]
        if len(doc) - anchor < WINDOW:  # the you-sentence will sit within WINDOW of the anchor
            choices += ["you", "you"]
        kind = rng.choice(choices)
        if kind == "pronoun":
            ante = antecedent(rng) if rng.random() < 0.7 or len(doc) - anchor >= WINDOW else you_sentence(rng, formal)
            if ante.kind == "you":
                anchor = len(doc)
            doc += [ante, pronoun_sentence(rng, given(ante.noun, "the antecedent's noun"))]
        elif kind == "you":
            anchor = len(doc)
            doc.append(you_sentence(rng, formal))
        elif kind == "lexical":
            noun = rng.choice(sorted(AMBIGUOUS))
            sense = rng.randint(0, 1)
            doc.append(_cue(noun, sense))
            if rng.random() < 0.3:
                doc.append(filler(rng))
            doc.append(lexical_sentence(rng, noun, sense))
        else:
            doc.append(filler(rng))
    return doc


def _coref(doc: List[Pair]) -> List[Dict[int, str]]:
    """CorefUD Entity MISC values per source token: antecedent noun phrase + its pronoun,
    and an ambiguous noun's cue mention + its later mention."""
    marks: List[Dict[int, str]] = [{} for _ in doc]
    next_id = 1

    def mark(sent: int, span: Optional[Tuple[int, int]], eid: int, etype: str) -> None:
        start, end = given(span, f"sentence {sent}: the mention's span")
        if start == end:
            marks[sent][start] = f"(e{eid}-{etype})"
        else:
            marks[sent][start] = f"(e{eid}-{etype}"
            marks[sent][end] = f"e{eid})"

    for i, pair in enumerate(doc):
        if pair.kind == "pronoun":
            mark(i - 1, doc[i - 1].mention, next_id, "object")
            at = given(pair.pronoun_at, f"sentence {i}: the pronoun's index")
            mark(i, (at, at), next_id, "object")
            next_id += 1
        elif pair.kind == "lexical":
            cue = max(j for j in range(i) if doc[j].kind == "cue")
            mark(cue, doc[cue].mention, next_id, "object")
            mark(i, pair.mention, next_id, "object")
            next_id += 1
    return marks


def _conllu(tokens: List[Token], sent_id: str, doc_id: Optional[str], misc: Dict[int, str]) -> str:
    lines = []
    if doc_id is not None:
        lines.append(f"# newdoc id = {doc_id}")
    lines.append(f"# sent_id = {sent_id}")
    lines.append(f"# text = {' '.join(t.form for t in tokens)}")
    for i, t in enumerate(tokens):
        m = f"Entity={misc[i]}" if i in misc else "_"
        lines.append("\t".join([str(i + 1), t.form, t.lemma, t.upos, "_", t.feats, str(t.head), t.deprel, "_", m]))
    return "\n".join(lines) + "\n\n"


def generate_split(n_docs: int, seed: int, prefix: str) -> List[List[Pair]]:
    rng = random.Random(seed)
    return [make_document(rng) for _ in range(n_docs)]


def _planted_tags(pair: Pair) -> List[Dict]:
    """Planted tokens as MuDA-style tags; a token fixed by an earlier one in its sentence gets
    '<phenomenon>-agreement', since it needs no context once that token is known."""
    tags: List[Dict] = [{"token": t.form, "tags": []} for t in pair.tgt]
    for p in pair.planted:
        tags[p.index]["tags"].append(p.phenomenon + ("-agreement" if p.agrees_with is not None else ""))
    return tags


def write_split(out_dir: str, split: str, docs: List[List[Pair]]) -> Dict[str, int]:
    """Write text, docids, CoNLL-U, alignments and planted tokens for one split."""
    src_lines, tgt_lines, ids, aligns, planted, src_conllu, tgt_conllu = [], [], [], [], [], [], []
    counts = dict.fromkeys(PHENOMENA, 0)
    line = 0
    tags: List[
        List[List[Dict[str, Any]]]
    ] = []  # MuDA dump layout: documents -> sentences -> tokens -> {"token", "tags"}
    for d, doc in enumerate(docs):
        doc_id = f"{split}-{d:05d}"
        marks = _coref(doc)
        tags.append([])
        for s, pair in enumerate(doc):
            tags[-1].append(_planted_tags(pair))
            src_lines.append(" ".join(t.form for t in pair.src))
            tgt_lines.append(" ".join(t.form for t in pair.tgt))
            ids.append(doc_id)
            aligns.append(" ".join(f"{i}-{j}" for i, j in pair.align))
            first = doc_id if s == 0 else None
            src_conllu.append(_conllu(pair.src, f"{doc_id}-{s}", first, marks[s]))
            tgt_conllu.append(_conllu(pair.tgt, f"{doc_id}-{s}", first, {}))
            for p in pair.planted:
                planted.append(
                    json.dumps(
                        {
                            "line": line + 1,
                            "doc": doc_id,
                            "sentence": s,
                            "index": p.index,
                            "phenomenon": p.phenomenon,
                            "gold": p.gold,
                            "alternative": p.alternative,
                            "agrees_with": p.agrees_with,
                        },
                        ensure_ascii=False,
                    )
                )
                counts[p.phenomenon] += 1
            line += 1
    base = os.path.join(out_dir, split)
    atomic_write_lines(f"{base}.en", src_lines)
    atomic_write_lines(f"{base}.fr", tgt_lines)
    atomic_write_lines(f"{base}.docids", ids)
    atomic_write_lines(f"{base}.align", aligns)
    atomic_write_lines(f"{base}.planted.jsonl", planted)
    atomic_write_text(f"{base}.tags.json", json.dumps(tags, ensure_ascii=False) + "\n")
    atomic_write_text(f"{base}.en.conllu", "".join(src_conllu))
    atomic_write_text(f"{base}.fr.conllu", "".join(tgt_conllu))
    return {"sentences": len(src_lines), "documents": len(docs), **counts}


@dataclass
class DemoDataOptions:
    """``contextual-mt demo-data``: the demo corpus (``generate_demo_data``) in ``output``, its
    planted contrastive set and, with ``ted``, the corpus in the TED talks release's layout
    (``write_demo_data``)."""

    output: str = option(required=True, help="directory")
    train_docs: int = option(default=TRAIN_DOCS)
    valid_docs: int = option(default=VALID_DOCS)
    test_docs: int = option(default=TEST_DOCS)
    seed: int = option(default=SEED)
    ted: bool = option(
        action="store_true",
        default=False,
        help="also write OUTPUT/ted_talks.tar.gz: the corpus in "
        "the layout of the multilingual TED talks release, for `make all LANG=fr TED=...`",
    )

    def __post_init__(self) -> None:
        from contextual_mt.errors import check_number

        check_required(self)
        # every split needs a document; more than a million is a typo (it would run for hours)
        for flag, n in (
            ("--train-docs", self.train_docs),
            ("--valid-docs", self.valid_docs),
            ("--test-docs", self.test_docs),
        ):
            check_number(flag, n, minimum=1, maximum=1_000_000, integer=True)


def generate_demo_data(
    out_dir: str,
    train_docs: int = TRAIN_DOCS,
    valid_docs: int = VALID_DOCS,
    test_docs: int = TEST_DOCS,
    seed: int = SEED,
) -> Dict[str, Dict[str, int]]:
    """Write the demo corpus into ``out_dir``; returns per-split counts. Deterministic."""
    options = DemoDataOptions(out_dir, train_docs, valid_docs, test_docs, seed)  # checked before anything is written
    os.makedirs(out_dir, exist_ok=True)
    stats = {}
    for k, (split, n) in enumerate(
        (("train", options.train_docs), ("valid", options.valid_docs), ("test", options.test_docs))
    ):
        stats[split] = write_split(out_dir, split, generate_split(n, options.seed * 1000 + k, split))
    atomic_write_text(os.path.join(out_dir, "stats.json"), json.dumps(stats, indent=2) + "\n")
    return stats
