"""``muda eval`` as a library call, ``run_eval(EvalOptions(...))``: tag the reference (unless its
tags are given) and every system output in its own document context, then score each system
(per-tag word P/R/F, corpus BLEU, COMET when a model is given) and compare every pair of systems
by paired bootstrap. Writes the JSON result and the plot when asked.

A document-level output (``docalign.formats``) is re-aligned to the source lines first
(``muda.formats.hypotheses.load_system_outputs``); its aligned hypotheses are what is tagged and
scored (and what the annotation cache keys on), and its alignment statistics join its result."""

from __future__ import annotations

import json
import logging
import os
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Callable, ClassVar, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from commandkit.documents import group_by_document, read_docids
from commandkit.errors import Code, InputError, check_number
from commandkit.options import group, option
from commandkit.outputs import (
    atomic_write_lines,
    atomic_write_text,
    check_distinct,
    check_not_inputs,
    output_exists,
    outputs,
    scratch_directory,
)
from commandkit.text import read_lines
from docalign.align import ALIGN_GROUP, AlignArgs, AlignOptions
from docalign.formats import read_pivots, write_alignment
from muda.annotators.base import Annotator
from muda.annotators.models import ANNOTATOR_GROUP, AnnotatorOptions
from muda.evaluation.metrics import (
    bleu_metric,
    bleu_with_document_statistics,
    comet_document_sums,
    comet_predict,
    load_comet,
)
from muda.evaluation.significance import bleu_bootstrap, bootstrap_samples, mean_bootstrap, paired_bootstrap
from muda.evaluation.words import document_counts, present_tags, prf, scores
from muda.formats.hypotheses import Hypotheses, load_system_outputs
from muda.formats.tags import TagDump, read_tags
from muda.languages import get_language
from muda.phenomena import check_phenomena, phenomenon_names
from muda.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, TaggerSettings
from muda.tagger import (
    TagOptions,
    annotation_paths,
    output_paths,
    read_summary,
    skipped_phenomena,
    summary_path,
    tag_files,
    text_hash,
)

# p-values have a resolution of 1/N; past this, more resamples only fill memory (N x documents)
MAX_BOOTSTRAP = 100_000
REFERENCE = "reference"  # the reference's files in the work directory: reference.tags.json, ...

logger = logging.getLogger(__name__)


PRECOMPUTED = "pre-computed annotations"


@dataclass(frozen=True)
class EvalOptions:
    """``muda eval`` (and ``run_eval``): the reference, the systems' outputs, what to write and how
    to test; checked when built, before any file is read or model loaded."""

    src: str = option(required=True)
    ref: str = option(required=True)
    docids: str = option(required=True)
    tgt_lang: str = option(required=True)
    hyps: Sequence[str] = option(
        nargs="+",
        required=True,
        help="system outputs: plain lines, raw fairseq-generate output (re-ordered by id), or a document-level "
        "output (JSONL records or one document per line), re-aligned to the source lines",
    )
    names: Optional[Sequence[str]] = option(nargs="+", help="system names (default: the file names)")
    ref_tags: Optional[str] = option(help="tags of the reference from `muda tag` (default: tag it now)")
    output: Optional[str] = option(help="JSON with every score and p-value")
    plot: Optional[str] = option(help="PNG bar chart of f-measure per tag per system")
    table: Optional[str] = option(help="also write the table printed on stdout to this file")
    bootstrap: int = option(default=BOOTSTRAP_RESAMPLES, help="paired bootstrap resamples (0: none)")
    seed: int = option(default=BOOTSTRAP_SEED)
    comet_model: Optional[str] = option(help="also COMET (unbabel-comet): a model name or checkpoint path")
    src_conllu: Optional[str] = option(group=PRECOMPUTED)
    ref_conllu: Optional[str] = option(group=PRECOMPUTED)
    ref_alignments: Optional[str] = option(group=PRECOMPUTED)
    hyp_conllu: Optional[Sequence[str]] = option(nargs="+", group=PRECOMPUTED, help="one per hypothesis file")
    hyp_alignments: Optional[Sequence[str]] = option(nargs="+", group=PRECOMPUTED, help="one per hypothesis file")
    lexicon: Optional[Sequence[str]] = option(
        nargs=3,
        metavar=("SRC.conllu", "TGT.conllu", "ALIGN"),
        group=PRECOMPUTED,
        help="annotate hypotheses by lookup in this annotated parallel corpus (no model)",
    )
    annotators: AnnotatorOptions = group(AnnotatorOptions, ANNOTATOR_GROUP)
    # a --hyps file may be a whole-document output (JSONL records {"doc", "text"}, or one document
    # per line): it is re-aligned to the source lines (docalign) against ``align.pivot`` (default:
    # the reference), with docalign's sentence rules for --tgt-lang unless ``align`` says otherwise
    align: AlignArgs = group(AlignArgs)
    alignment_dir: Optional[str] = option(
        group=ALIGN_GROUP,
        metavar="DIR",
        help="write DIR/NAME.alignment.jsonl for each document-level system: each source line's "
        "segment(s), link type and chrF",
    )
    work_dir: Optional[str] = None  # tags of each system; default: beside the output, or a temp dir

    OUTPUT_ARGS: ClassVar[Tuple[str, ...]] = ("output", "table", "plot")
    OUTPUT_DIR_ARGS: ClassVar[Tuple[str, ...]] = ("alignment_dir",)

    def __post_init__(self) -> None:
        # every value checked before any file is read or model loaded
        if not isinstance(self.tgt_lang, str):
            raise InputError(f"--tgt-lang must be a language code (got {self.tgt_lang!r})", code=Code.OPTION_VALUE)
        if not isinstance(self.align, AlignArgs):
            raise InputError(
                f"align must be a docalign AlignArgs (got {type(self.align).__name__})", code=Code.OPTION_VALUE
            )
        _ = self.align_options  # --band; the segmenter's language
        for flag, path in (("--src", self.src), ("--ref", self.ref), ("--docids", self.docids)):
            if not isinstance(path, str) or not path:
                raise InputError(f"{flag}: a file path is required (got {path!r})", code=Code.OPTION_MISSING)
        if isinstance(self.hyps, str) or not self.hyps or not all(isinstance(h, str) and h for h in self.hyps):
            raise InputError(
                f"--hyps: give one or more system output files (got {self.hyps!r})", code=Code.OPTION_MISSING
            )
        get_language(self.tgt_lang)
        check_number("--bootstrap", self.bootstrap, minimum=0, maximum=MAX_BOOTSTRAP, integer=True)
        check_number("--seed", self.seed, minimum=0, integer=True)  # numpy seeds are non-negative
        for flag, values in (
            ("--names", self.names),
            ("--hyp-conllu", self.hyp_conllu),
            ("--hyp-alignments", self.hyp_alignments),
        ):
            _check_one_per_system(flag, values, len(self.hyps))
        _check_names(self.system_names, self.names is not None, self.ref_tags is None)
        if self.pivot is not None and (not isinstance(self.pivot, str) or not self.pivot):
            raise InputError(f"--pivot: a file path is required (got {self.pivot!r})", code=Code.OPTION_MISSING)

    @property
    def pivot(self) -> Optional[str]:
        """What document-level outputs are re-aligned to (None: the reference)."""
        return self.align.pivot

    @property
    def align_options(self) -> AlignOptions:
        """How document-level outputs are re-aligned: ``align``'s options, the segmenter's
        language --tgt-lang unless ``align.segmenter_lang`` is given."""
        return self.align.options(get_language(self.tgt_lang).code)

    @property
    def system_names(self) -> List[str]:
        """``names``, or the hypothesis file names."""
        return list(self.names) if self.names is not None else [os.path.basename(h) for h in self.hyps]

    @property
    def work(self) -> Optional[str]:
        """The work directory kept after the run: ``work_dir``, or OUTPUT.work beside ``output``
        (None: a temporary one, removed at the end)."""
        return self.work_dir or (os.path.splitext(self.output)[0] + ".work" if self.output else None)

    def inputs(self) -> Dict[str, str]:
        """Every input file, by the option that names it (no output may replace one)."""
        found = {
            "--src": self.src,
            "--ref": self.ref,
            "--docids": self.docids,
            "--ref-tags": self.ref_tags,
            "--src-conllu": self.src_conllu,
            "--ref-conllu": self.ref_conllu,
            "--ref-alignments": self.ref_alignments,
            "--pivot": self.pivot,
        }
        for flag, files in (
            ("--hyps", self.hyps),
            ("--hyp-conllu", self.hyp_conllu),
            ("--hyp-alignments", self.hyp_alignments),
        ):
            found.update({f"{flag} ({k + 1})": f for k, f in enumerate(files or ())})
        return {k: v for k, v in found.items() if v}


def _check_one_per_system(flag: str, values: Optional[Sequence[str]], systems: int) -> None:
    if values is None:
        return
    if isinstance(values, str) or not all(isinstance(v, str) and v for v in values):
        raise InputError(f"{flag}: give a list of non-empty strings (got {values!r})", code=Code.OPTION_VALUE)
    if len(values) != systems:
        raise InputError(
            f"{flag}: {len(values)} given for {systems} --hyps files; give one per system, in the same order",
            code=Code.OPTION_VALUE,
        )


def _check_names(names: Sequence[str], given: bool, reference_in_work: bool) -> None:
    """System names name files in the work directory: distinct, and no path."""
    flag = "--names" if given else "--hyps (their file names are the system names)"
    if len(set(names)) != len(names):
        raise InputError(f"system names must differ: {', '.join(names)} (use --names)", code=Code.OPTION_VALUE)
    for name in names:
        if name in (".", "..") or "/" in name or os.sep in name or "\0" in name:
            raise InputError(
                f"{flag}: {name!r} cannot be a system name (it names files in the work directory)",
                code=Code.OPTION_VALUE,
            )
        if reference_in_work and name == REFERENCE:
            raise InputError(
                f"{flag}: {name!r} is taken by the reference's tags in the work directory; give the "
                "system another name (--names), or --ref-tags",
                code=Code.OPTION_VALUE,
            )


def check_ref_tags(path: str, dump: TagDump, refs: Sequence[str], tgt_lang: Optional[str] = None) -> None:
    """A tags file must come from this reference, and for this language: by the content hash and
    the language its summary records, or (without a summary) by its tokens."""
    summary = read_summary(path)
    if summary is not None:
        meta_path = summary_path(path)
        if tgt_lang is not None:
            _check_language(path, summary, tgt_lang)
        recorded = summary.get("tgt_sha256")
        if recorded and recorded != text_hash(refs):
            raise InputError(
                f"{path}: made from a different reference (content hash {str(recorded)[:12]} in "
                f"{meta_path}, the reference's is {text_hash(refs)[:12]}); tag this reference again",
                code=Code.MISMATCH,
            )
    flat = [s for doc in dump for s in doc]
    if len(flat) != len(refs):
        raise InputError(
            f"{path}: has {len(flat)} sentences but the reference has {len(refs)} lines", code=Code.LINE_COUNT
        )
    for n, (s, ref) in enumerate(zip(flat, refs, strict=True), start=1):
        if "".join(t["token"] for t in s).replace(" ", "") != "".join(ref.split()):
            raise InputError(
                f"{path}: sentence {n} does not match line {n} of the reference; made from another reference?",
                code=Code.MISMATCH,
            )


def _check_language(path: str, summary: Dict[str, Any], tgt_lang: str) -> None:
    """Tags made for another language score every language-specific tag (formality, pronouns)
    as 0 against hypotheses tagged for --tgt-lang: compare the canonical codes (pt-br = pt)."""
    recorded = summary.get("language")
    if recorded is None:
        return
    meta_path = summary_path(path)
    try:
        made_for = get_language(str(recorded)).code
    except InputError:
        raise InputError(
            f"{meta_path}: records the language {recorded!r}, which muda does not know; tag the "
            f"reference again with --tgt-lang {tgt_lang}",
            code=Code.FORMAT,
        ) from None
    wanted = get_language(tgt_lang).code
    if made_for != wanted:
        given = tgt_lang if tgt_lang.lower() == wanted else f"{tgt_lang} ({wanted})"
        raise InputError(
            f"{path}: tags made for language '{made_for}' (in {meta_path}) but --tgt-lang is {given}; "
            f"tag the reference again with `muda tag --tgt-lang {tgt_lang}`, or pass the right "
            f"--tgt-lang",
            code=Code.MISMATCH,
        )


@dataclass(frozen=True)
class _Tagging:
    """How the hypotheses are tagged: as the reference was (its summary's phenomena and
    settings), so that a tag the reference lacks is not counted as every system's error."""

    phenomena: Optional[List[str]] = None
    settings: Optional[TaggerSettings] = None


def _tagging_of(ref_tags: str) -> _Tagging:
    summary = read_summary(ref_tags)
    if summary is None:
        return _Tagging()
    where = summary_path(ref_tags)
    phenomena = summary.get("phenomena")
    if phenomena is not None:
        if not isinstance(phenomena, list) or not all(isinstance(p, str) for p in phenomena):
            raise InputError(f"{where}: 'phenomena' is not a list of names", code=Code.FORMAT)
        try:
            check_phenomena(phenomena)
        except InputError as e:
            raise InputError(f"{where}: {e}", code=e.code) from None
    settings = summary.get("settings")
    return _Tagging(phenomena, TaggerSettings.from_json(settings, where) if settings is not None else None)


def run_eval(options: EvalOptions, annotators: Optional[Annotator] = None) -> Dict:
    """Evaluate the systems ``options.hyps``; returns the result that ``output`` gets as JSON.
    Every output (the JSON, the plot, the work directory) is checked before any work and
    written together at the end, or nothing on any error."""
    with (
        outputs(options.output, options.plot, directories=[options.work, options.alignment_dir]),
        _work_directory(options) as work,
    ):
        written = _work_outputs(options, work)
        check_not_inputs(written, options.inputs())
        check_distinct(list(written.items()))
        return _run_eval(options, work, annotators)


@contextmanager
def _work_directory(options: EvalOptions) -> Iterator[str]:
    """``options.work``, or a temporary directory removed at the end (nothing to keep without --output)."""
    if options.work:
        yield options.work
        return
    with scratch_directory("muda-eval-") as work:
        yield work


def _work_outputs(options: EvalOptions, work: str) -> Dict[str, str]:
    """Every file the run writes, by what it is."""
    found = {"--output": options.output, "--plot": options.plot}
    if not options.ref_tags:
        found.update(
            {f"the work file {os.path.basename(p)} of the reference": p for p in output_paths(_ref_tags_path(work))}
        )
    for name in options.system_names:
        text, tags = _system_paths(work, name)
        found.update(
            {f"the work file {os.path.basename(p)} of system {name!r}": p for p in (text, *output_paths(tags))}
        )
        if options.alignment_dir:
            found[f"the alignment file of system {name!r}"] = _alignment_path(options.alignment_dir, name)
    return {k: v for k, v in found.items() if v}


def _ref_tags_path(work: str) -> str:
    return os.path.join(work, f"{REFERENCE}.tags.json")


def _alignment_path(directory: str, name: str) -> str:
    """Where ``--alignment-dir`` gets the alignment of system ``name`` (a document-level output)."""
    return os.path.join(directory, f"{name}.alignment.jsonl")


def _system_paths(work: str, name: str) -> Tuple[str, str]:
    """A system's text and tags file in the work directory."""
    return os.path.join(work, f"{name}.txt"), os.path.join(work, f"{name}.tags.json")


@dataclass
class _Texts:
    srcs: List[str]
    refs: List[str]
    ids: List[str]
    hyps: List[Hypotheses]


def _read_texts(options: EvalOptions) -> _Texts:
    """Every text, checked (line counts, fairseq ids, documents) before any tagging; the
    document-level outputs re-aligned to the pivot (the reference unless --pivot)."""
    srcs, refs, ids = read_lines(options.src), read_lines(options.ref), read_docids(options.docids)
    if len(refs) != len(srcs):
        raise InputError(
            f"{options.ref}: has {len(refs)} lines but {options.src} has {len(srcs)}", code=Code.LINE_COUNT
        )
    if len(ids) != len(srcs):
        raise InputError(
            f"{options.docids}: has {len(ids)} lines but {options.src} has {len(srcs)}", code=Code.LINE_COUNT
        )
    pivots = refs if options.pivot is None else read_pivots(options.pivot, len(srcs), options.src)
    return _Texts(
        srcs, refs, ids, load_system_outputs(options.hyps, pivots, ids, options.docids, options.align_options)
    )


def _run_eval(options: EvalOptions, work: str, annotators: Optional[Annotator]) -> Dict:
    texts = _read_texts(options)
    if options.alignment_dir and all(h.alignment is None for h in texts.hyps):  # as score's --alignment-output
        raise InputError(
            f"--alignment-dir {options.alignment_dir}: every --hyps file is line-aligned (one line per source "
            "line): there is no alignment to write",
            code=Code.OPTIONS_CONFLICT,
        )
    comet = load_comet(options.comet_model) if options.comet_model else None  # a missing model fails before the tagging
    ref_tags, ref_docs = _reference_tags(options, texts.refs, texts.ids, work, annotators)
    # tagged here too: its summary says which phenomena it was tagged for (the others were skipped)
    tagging = _tagging_of(ref_tags)
    # the source side the reference was tagged with serves every hypothesis
    beside = annotation_paths(ref_tags)["src_conllu"]
    src_conllu = options.src_conllu or (beside if output_exists(beside) else None)
    not_tagged = skipped_phenomena(read_summary(ref_tags))
    hyp_docs = []
    for k, name in enumerate(options.system_names):
        dump, skipped = _hypothesis_tags(
            options, k, name, texts.hyps[k], texts.ids, work, src_conllu, tagging, annotators
        )
        hyp_docs.append(dump)
        not_tagged.update({p: m for p, m in skipped.items() if p not in not_tagged})
    if not_tagged:  # zeros there would mean "not tagged", not "found nowhere" or "every system wrong"
        logger.warning(
            "not scored: %s (not tagged, for lack of %s)",
            ", ".join(not_tagged),
            ", ".join(sorted(set().union(*map(set, not_tagged.values())))),
        )
    kept = options.ref_tags or options.work  # a temporary work directory is gone after the run
    result = _score(options, texts, ref_docs, hyp_docs, comet, not_tagged)
    result["reference_tags"] = ref_tags if kept else None
    _write_result(options, result, texts)
    return result


def _score(
    options: EvalOptions,
    texts: _Texts,
    ref_docs: TagDump,
    hyp_docs: Sequence[TagDump],
    comet: Any,
    not_tagged: Optional[Dict[str, List[str]]] = None,
) -> Dict:
    """Per-tag P/R/F, BLEU and COMET of every system, and the paired bootstrap between them; the
    phenomena ``not_tagged`` (skipped for the reference or a system) are left out and listed."""
    names, hyp_lines = options.system_names, [h.texts for h in texts.hyps]
    not_tagged = not_tagged or {}
    tags = [t for t in present_tags([ref_docs, *hyp_docs], phenomenon_names()) if t not in not_tagged]
    counts = [document_counts(ref_docs, h, tags) for h in hyp_docs]
    result: Dict = {
        "reference": options.ref,
        "reference_tags": None,
        "language": options.tgt_lang,
        "tags": tags,
        **({"not_tagged": not_tagged} if not_tagged else {}),
        "bootstrap": options.bootstrap,
        "seed": options.seed,
        "systems": {},
        "comparisons": [],
    }
    bleu, bleu_stats = bleu_with_document_statistics(hyp_lines, texts.refs, texts.ids)
    for k, name in enumerate(names):
        alignment = texts.hyps[k].alignment
        result["systems"][name] = {
            "hypotheses": options.hyps[k],
            "bleu": bleu[k],
            "tags": {t: vars(s) for t, s in scores(counts[k], tags).items()},
            # a document-level output's re-alignment: omissions, additions, merges, splits, mean link chrF
            "alignment": None if alignment is None else alignment.statistics,
        }
    if any(h.alignment is not None for h in texts.hyps):  # how the document-level outputs were aligned
        a = options.align_options
        result["alignment"] = {
            "pivot": options.pivot or options.ref,
            "segmenter": a.segmenter,
            "language": a.language,
            "band": a.band,
        }
    comet_docs = []
    if comet is not None:  # loaded once, for every system
        for k, name in enumerate(names):
            out = comet_predict(comet, texts.srcs, hyp_lines[k], texts.refs, options.comet_model or "")
            result["systems"][name]["comet"] = out["score"]
            comet_docs.append(comet_document_sums(out["segments"], texts.ids))
    if options.bootstrap and len(options.hyps) > 1:
        result["comparisons"] = _compare(
            names,
            tags,
            counts,
            bleu_stats,
            comet_docs,
            bootstrap_samples(len(ref_docs), options.bootstrap, options.seed),
        )
    return result


def _write_result(options: EvalOptions, result: Dict, texts: _Texts) -> None:
    if options.alignment_dir:
        for name, hyp in zip(options.system_names, texts.hyps, strict=True):
            if hyp.alignment is not None:
                write_alignment(_alignment_path(options.alignment_dir, name), hyp.alignment.records())
    if options.output:
        atomic_write_text(options.output, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    if options.plot:
        from muda.evaluation.plot import plot_fmeasure

        plot_fmeasure(options.plot, result)


def _reference_tags(
    options: EvalOptions, refs: Sequence[str], ids: Sequence[str], work: str, annotators: Optional[Annotator]
) -> Tuple[str, TagDump]:
    """The reference's tags file (given, or tagged now into ``work``) and its tags by document."""
    if options.ref_tags:
        ref_tags = options.ref_tags
        dump = read_tags(ref_tags)
        check_ref_tags(ref_tags, dump, refs, options.tgt_lang)
    else:
        ref_tags = _ref_tags_path(work)
        tag_files(
            TagOptions(
                options.src,
                options.ref,
                options.docids,
                options.tgt_lang,
                ref_tags,
                src_conllu=options.src_conllu,
                tgt_conllu=options.ref_conllu,
                alignments=options.ref_alignments,
            ),
            annotators,
            progress=False,
        )
        dump = read_tags(ref_tags)
    return ref_tags, _by_document(dump, ids)


def _hypothesis_tags(
    options: EvalOptions,
    k: int,
    name: str,
    hyp: Hypotheses,
    ids: Sequence[str],
    work: str,
    src_conllu: Optional[str],
    tagging: _Tagging,
    annotators: Optional[Annotator],
) -> Tuple[TagDump, Dict[str, List[str]]]:
    """System ``k`` tagged in its own document context (its text and tags go into ``work``), and
    the phenomena its tagging skipped; messages about its text name the user's file and line."""
    text, out = _system_paths(work, name)
    atomic_write_lines(text, hyp.texts)
    summary = tag_files(
        TagOptions(
            options.src,
            text,
            options.docids,
            options.tgt_lang,
            out,
            src_conllu=src_conllu,
            tgt_conllu=options.hyp_conllu[k] if options.hyp_conllu else None,
            alignments=options.hyp_alignments[k] if options.hyp_alignments else None,
            phenomena=tagging.phenomena,
            settings=tagging.settings,
            tgt_name=options.hyps[k] if hyp.alignment is None else f"the re-alignment of {options.hyps[k]}",
            tgt_line_numbers=hyp.line_numbers,
        ),
        annotators,
        progress=False,
    )
    return _by_document(read_tags(out), ids), skipped_phenomena(summary)


def _by_document(dump: TagDump, ids: Sequence[str]) -> TagDump:
    """A tags dump regrouped into the documents of ``ids`` (a given reference dump may group
    its sentences otherwise)."""
    return group_by_document([s for d in dump for s in d], ids)


def _prf_metric(i: int) -> Callable[[np.ndarray], np.ndarray]:
    """Precision (0), recall (1) or F (2) of counts, for the bootstrap."""
    return lambda c: prf(c)[..., i]


def _compare(
    names: Sequence[str],
    tags: Sequence[str],
    counts: Sequence[np.ndarray],
    bleu_stats: Sequence[np.ndarray],
    comet_docs: Sequence[np.ndarray],
    samples: np.ndarray,
) -> List[Dict]:
    """Paired bootstrap p-values for every pair of systems, all on the same resamples."""
    metric = bleu_metric()
    comparisons = []
    for a, b in combinations(range(len(names)), 2):
        p = {
            m: paired_bootstrap(counts[a], counts[b], samples, metric=_prf_metric(i))
            for i, m in enumerate(("precision", "recall", "f"))
        }
        comparison: Dict[str, Any] = {"a": names[a], "b": names[b]}
        if comet_docs:
            comparison["comet_p"] = mean_bootstrap(comet_docs[a], comet_docs[b], samples)
        comparisons.append(
            {
                **comparison,
                "bleu_p": bleu_bootstrap(bleu_stats[a], bleu_stats[b], samples, metric),
                "tags": {t: {m: float(p[m][j]) for m in p} for j, t in enumerate(tags)},
            }
        )
    return comparisons


__all__ = ["EvalOptions", "check_ref_tags", "run_eval"]
