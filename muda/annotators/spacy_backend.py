"""``--annotator spacy``: spaCy's trained pipelines for morphology and dependencies (as the MuDA
paper tags), beside the stanza backend. What it provides depends on what is installed, found
without loading anything: the target's pipeline (its absence is an error: every phenomenon reads
the target), English's for the source parse, the aligner as the stanza backend finds it; never
coreference (spaCy's core pipelines have none), nor ellipsis detection without ``--ellipsis-model``
(the rules read UD labels). Phenomena needing what it lacks are skipped by
the tagger, with one warning built from ``enabling``.

The small pipelines get some closed-class words wrong that the word alone decides (fr_core_news_sm
tags sentence-initial "Tu" DET, and "tu" Person=3): the target's words that its language file
lists under ``closed_class`` get the part of speech and features listed there
(``correct_closed_class``), on the pipeline's output as it is cached."""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from muda.annotation import Sentence, Word
from muda.annotators.models import AnnotatorOptions, ModelAnnotators
from muda.annotators.required_models import _aligner
from muda.annotators.spacy_pipeline import (
    ENGLISH_PIPELINE,
    SpacyAnnotator,
    install_hint,
    installed,
    package_version,
    target_pipeline,
)
from muda.formats.conllu import format_conllu, parse_conllu
from muda.languages import Language, get_language
from muda.phenomena.requirements import ALIGNMENT, COREFERENCE, ELLIPSIS_DETECTION, SOURCE_PARSE, TARGET_MORPHOLOGY


class SpacyAnnotators(ModelAnnotators):
    """The spaCy backend; alignment and the ellipsis classifier are the stanza backend's.
    ``source``/``targets`` replace the pipelines that would be loaded (tests)."""

    name = "spacy"

    def __init__(
        self,
        options: Optional[AnnotatorOptions] = None,
        source: Optional[SpacyAnnotator] = None,
        targets: Optional[Dict[str, SpacyAnnotator]] = None,
        aligner=None,
    ) -> None:
        super().__init__(AnnotatorOptions() if options is None else options, aligner=aligner)
        self._spacy_source, self._spacy_targets = source, dict(targets or {})
        self.warned: Set[str] = set()  # warnings already given (muda eval tags several files)

    # ------------------------------------------------------------------ what it provides
    def _has_aligner(self) -> bool:
        return self._aligner is not None or _aligner(self.options.align_model).present

    def provides(self, language: Language) -> FrozenSet[str]:
        given = {TARGET_MORPHOLOGY}  # a missing target pipeline is an error (target_pipeline), not a skip
        if installed(ENGLISH_PIPELINE):
            given.add(SOURCE_PARSE)
        if self._has_aligner():
            given.add(ALIGNMENT)
        if self.has_ellipsis_model:  # the rules read UD labels, not spaCy's: all-zero flags would pass for none
            given.add(ELLIPSIS_DETECTION)
        return frozenset(given)

    def enabling(self, missing: Iterable[str], language: Language) -> str:
        """What would supply each of the ``missing`` annotations, in one clause each."""
        how = {
            ALIGNMENT: f"word alignments need the aligner {self.options.align_model} (not on this machine: "
            f"'muda download --tgt-lang {language.code} --no-source --no-target') or --alignments FILE",
            SOURCE_PARSE: f"the English parse needs the spaCy pipeline {ENGLISH_PIPELINE} "
            f"({install_hint(ENGLISH_PIPELINE)}) or --src-conllu FILE",
            COREFERENCE: "coreference needs --annotator stanza or --src-conllu FILE with CorefUD Entity "
            "(spaCy's pipelines have none)",
            ELLIPSIS_DETECTION: "ellipsis detection needs a UD parse of the English (--annotator stanza or "
            "--src-conllu FILE; spaCy's labels are not UD) or --ellipsis-model",
            TARGET_MORPHOLOGY: f"the target's morphology needs {language.spacy_pipeline} or --tgt-conllu FILE",
        }
        return "; ".join(
            how[k]
            for k in (SOURCE_PARSE, COREFERENCE, ELLIPSIS_DETECTION, ALIGNMENT, TARGET_MORPHOLOGY)
            if k in missing
        )

    # ------------------------------------------------------------------ the annotations
    def source(self, lines: Sequence[str], docids: Sequence[str]) -> Tuple[List[Sentence], None]:
        """English parsed by en_core_web_sm when installed, else only tokenized (the tagger then
        runs no phenomenon that reads the source); never coreference."""
        parsed = installed(ENGLISH_PIPELINE)
        producer = (
            f"spacy-{ENGLISH_PIPELINE}-{package_version(ENGLISH_PIPELINE)}"
            if parsed
            else f"spacy-blank-en-{package_version('spacy')}"
        )
        return self._cached("source", producer, lines, lambda: self._source_pipeline(parsed)), None

    def target(self, lines: Sequence[str], lang: str) -> List[Sentence]:
        language = get_language(lang)
        package = target_pipeline(language)
        sentences = self._cached(
            "target", f"spacy-{package}-{package_version(package)}", lines, lambda: self._target_pipeline(package)
        )
        correct_closed_class(sentences, language)
        return sentences

    def _source_pipeline(self, parsed: bool) -> SpacyAnnotator:
        if self._spacy_source is None:
            self._spacy_source = SpacyAnnotator(ENGLISH_PIPELINE) if parsed else SpacyAnnotator(blank_lang="en")
        return self._spacy_source

    def _target_pipeline(self, package: str) -> SpacyAnnotator:
        if package not in self._spacy_targets:
            self._spacy_targets[package] = SpacyAnnotator(package)
        return self._spacy_targets[package]

    def _cached(self, kind: str, producer: str, lines: Sequence[str], pipeline) -> List[Sentence]:
        key = self.cache.key(kind, producer, lines)
        cached = self.cache.get(key, ".conllu")
        if cached is not None:
            return parse_conllu(cached.splitlines(), "annotation cache")
        sentences = pipeline().annotate(lines)
        self.cache.put(key, ".conllu", format_conllu(sentences))
        return sentences


def correct_closed_class(sentences: Sequence[Sentence], language: Language) -> int:
    """Give the words that ``language.closed_class`` lists (case-insensitive; single-word tokens)
    the part of speech and the features listed there, in place. Where the pipeline had the part
    of speech right, its other features stay; where not, they and its lemma came from the wrong
    class: the listed features replace them, and the lemma is the word. Returns how many words
    changed."""
    changed = 0
    for sentence in sentences:
        for token in sentence.tokens:
            fixed = language.closed_class.get(token.form.lower()) if len(token.words) == 1 else None
            if fixed is None:
                continue
            word: Word = token.words[0]
            upos, feats = fixed
            new = {**word.feats, **feats} if word.upos == upos else dict(feats)
            if word.upos == upos and word.feats == new:
                continue
            if word.upos != upos:
                word.upos, word.lemma = upos, token.form.lower()
            word.feats = new
            changed += 1
    return changed
