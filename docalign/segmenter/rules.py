"""Sentence boundaries by rules: docalign's own splitter (``--segmenter rules``, the default).

Why rules of our own: the segmenter runs on every evaluation of a document-level output, and
spaCy's rule-based sentencizer (the earlier default) costs seconds before the first sentence is
split: importing spaCy imports thinc, which imports torch, and a blank pipeline builds its
language's tokenizer exceptions. These rules import nothing but ``regex`` (already a dependency)
and split a document as Moses's ``split-sentences.perl`` and spaCy's sentencizer do in spirit:

1. A line break ends a sentence (LLMs often write one sentence per line).
2. A run of sentence terminals (Unicode's Sentence_Terminal property: ``. ! ?`` and their forms in
   other scripts), with the closing quotes and brackets written right after it, ends a sentence
   where whitespace or the end of the line follows. A closing mark standing alone after it (French
   ``« Non ! » Puis``) stays with the sentence it closes; an opening one starts the next.
   A CJK full stop or fullwidth ``!`` / ``?`` ends one with nothing after it (text written without
   spaces).
3. Except where the next word shows that the sentence goes on:

   * ``!`` or ``?`` before a word in lower case (``« Tu viens ? » demanda-t-il``);
   * an ellipsis (``...``, ``…``) before anything but a word in upper case (``Il est… fatigué``);
   * a period after a title of the language (French ``M.``, English ``Dr.``: a name follows), a
     single capital letter (an initial) or a dotted abbreviation (``U.S.``, ``z.B.``);
   * a period after another abbreviation of the language (``etc.``, ``env.``, ``Nr.``) before a
     word not in upper case; in languages that write ordinals with a period (German ``am 3.
     Oktober``), after a number of at most three digits.

The lists of abbreviations below are short and cover the languages the project's studies use;
in another language only the rules that need no list apply (add a list here to do better).
"""

from __future__ import annotations

import itertools
import re
from typing import Dict, FrozenSet, List, NamedTuple, Tuple

import regex

Span = Tuple[int, int]  # character offsets [start, end) in a text

# a run of sentence terminals (and the ellipsis, which Unicode does not count as one), then the
# closing quotes and brackets written against it
TERMINALS = regex.compile(r"[\p{Sentence_Terminal}\u2026]+[\p{Pe}\p{Pf}\"'\u00bb]*")
TERMINAL_RUN = regex.compile(r"[\p{Sentence_Terminal}\u2026]+")
# a closing mark standing alone (whitespace before and after it)
STANDALONE_CLOSE = regex.compile(r"\s+[\p{Pe}\p{Pf}\"'\u00bb]+(?=\s|$)")
# what may open a sentence before its first letter: quotes, brackets, Spanish inverted marks, dashes
OPENING = regex.compile(r"[\p{Ps}\p{Pi}\p{Pd}\"'\u00ab\u00bf\u00a1]*")
CJK_STOPS = frozenset("\u3002\uff61\uff01\uff1f")  # ideographic full stop, halfwidth one, fullwidth ! ?
SPACES = regex.compile(r"\s*")


class Abbreviations(NamedTuple):
    titles: FrozenSet[str]  # as written: never end a sentence (a name follows)
    other: FrozenSet[str]  # lower case: end one only before a word in upper case


def _words(text: str) -> FrozenSet[str]:
    return frozenset(text.split())


# per language (ISO 639-1); written for this project
ABBREVIATIONS: Dict[str, Abbreviations] = {
    "en": Abbreviations(
        _words("Mr Mrs Ms Mx Dr Prof St Sr Jr Rev Gen Col Capt Lt Sgt Gov Sen Rep Hon Mt Messrs"),
        _words(
            "etc vs approx cf dept est fig inc ltd co corp no nos vol vols p pp ed eds al ca misc"
            " jan feb mar apr jun jul aug sep sept oct nov dec"
        ),
    ),
    "fr": Abbreviations(
        _words("M MM Mme Mmes Mlle Mlles Me Dr Pr Mgr St Ste av apr"),  # av. J.-C., av. Foch
        _words("etc env cf ex p pp vol chap art éd coll ch tél fig max min hab janv févr avr juil sept oct nov déc"),
    ),
    # German writes nouns in upper case: most abbreviations are titles here ("bzw. Hannahs Brief")
    "de": Abbreviations(
        _words(
            "Hr Hrn Fr Dr Prof St bzw ca evtl ggf inkl vgl Nr Bd Abb Kap Jh Str Tel Mio Mrd geb gest"
            " Jan Feb Mär Apr Aug Sept Okt Nov Dez"
        ),
        _words("usw etc ff"),
    ),
    "es": Abbreviations(
        _words("Sr Sra Srta Sres Dr Dra D Dña Lic Ing Prof Ud Uds Vd Vds Sto Sta"),
        _words(
            "etc pág págs p núm art cap vol aprox ej av avda tel cía"
            " ene feb mar abr may jun jul ago sep sept oct nov dic"
        ),
    ),
    "it": Abbreviations(
        _words("Sig Sigg Dott Dr Prof Ing Avv Arch On Geom Rag Sen Mons"),
        _words("ecc es pag pagg p n art cap vol ca tel gen febbr ott nov dic"),
    ),
    "pt": Abbreviations(
        _words("Sr Sra Srta Dr Dra Prof Profa Exmo Exma Sto Sta"),
        _words("etc pág p pp art cap vol ex aprox tel av jan fev mar abr mai jun jul ago set out nov dez"),
    ),
    "nl": Abbreviations(
        _words("Dhr dhr Mevr mevr Mw mw Dr dr Prof prof Ir ir Mr mr Drs drs Ing ing St"),
        _words("bijv enz etc ca nr blz pag vgl jl resp zgn mln mld"),
    ),
    "ro": Abbreviations(_words("Dl Dna Dra Dr Prof"), _words("etc ex pag p nr art cap vol str tel")),
    "ru": Abbreviations(_words("проф акад доц"), _words("др см стр ул им гг тыс млн млрд руб коп")),  # noqa: RUF001
    "tr": Abbreviations(_words("Dr Prof Doç Av"), _words("vb vs bkz örn s")),
}
# titles written the same in many languages (English ones in other languages' subtitles and news)
SHARED_TITLES = _words("Mr Mrs Ms Dr Prof St")
NONE = Abbreviations(frozenset(), frozenset())
# languages that write ordinal numbers with a period ("am 3. Oktober")
ORDINAL_PERIOD = _words("de da no nb nn fi is cs sk pl hu sl hr sr bs lv lt et tr")


def language_code(language: str) -> str:
    """The rules' language: ``pt-br`` and ``zh_CN`` read as ``pt`` and ``zh``."""
    return re.split(r"[-_]", language, maxsplit=1)[0].lower()


class SentenceRules:
    """The rules above for one language (``xx`` or a language without a list: no abbreviations)."""

    def __init__(self, language: str = "xx") -> None:
        self.code = language_code(language)
        own = ABBREVIATIONS.get(self.code, NONE)
        self.abbreviations = Abbreviations(own.titles | SHARED_TITLES, own.other)
        self.ordinals = self.code in ORDINAL_PERIOD

    def split_line(self, line: str) -> List[Span]:
        """The sentence spans of one line (no line break in it), whitespace trimmed, none empty."""
        bounds = [0]
        for m in TERMINALS.finditer(line):
            end = m.end()
            if end < len(line) and not line[end].isspace():
                if _terminal_run(m.group())[-1] in CJK_STOPS:
                    bounds.append(end)
                continue
            while closing := STANDALONE_CLOSE.match(line, end):
                end = closing.end()
            if self._ends(line, m.start(), _terminal_run(m.group()), end):
                bounds.append(end)
        bounds.append(len(line))
        spans = []
        for start, end in itertools.pairwise(bounds):
            while start < end and line[start].isspace():
                start += 1
            while end > start and line[end - 1].isspace():
                end -= 1
            if end > start:
                spans.append((start, end))
        return spans

    def _ends(self, line: str, start: int, terminals: str, end: int) -> bool:
        """Whether the terminals at ``line[start:]`` (through ``end``) end a sentence (rule 3)."""
        after = SPACES.match(line, end).end()
        if after == len(line):
            return True
        k = OPENING.match(line, after).end()
        first = line[k : k + 1]
        upper, lower = first.isupper(), first.islower()
        if set(terminals) <= {".", "\u2026"} and (len(terminals) > 1 or terminals == "\u2026"):
            return upper  # an ellipsis
        if terminals != ".":
            return not lower  # ! ? and the like
        word = line[_word_start(line, start) : start]
        word = word[OPENING.match(word).end() :]
        if not word:
            return True  # a period standing alone (tokenized text)
        if word in self.abbreviations.titles:
            return False
        if len(word) == 1 and word.isupper():
            return False  # an initial
        if "." in word and any(c.isalpha() for c in word):
            return False  # a dotted abbreviation: U.S., z.B., J.-C.
        if self.ordinals and word.isdigit() and len(word) <= 3:
            return False  # an ordinal number
        if word.lower() in self.abbreviations.other:
            return upper
        return True


def _word_start(line: str, end: int) -> int:
    """Where the word that ends at ``end`` starts (after the last whitespace before it)."""
    k = end
    while k > 0 and not line[k - 1].isspace():
        k -= 1
    return k


def _terminal_run(match: str) -> str:
    """The terminals of a ``TERMINALS`` match, without the closing marks after them."""
    run = TERMINAL_RUN.match(match)
    assert run is not None
    return run.group()
