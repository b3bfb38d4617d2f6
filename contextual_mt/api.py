"""contextual-mt from Python: one function per command, taking the command's options as keywords
(the names of the command line's options: ``batch_size`` for ``--batch-size``, ``path`` or
``hf_model`` for the model) or as its options object, writing the files the command writes and
returning what it made as objects.

    from contextual_mt import api

    translations = api.translate(path="model/checkpoint_best.pt", spm="model/spm.model",
                                 source="test.en", docids="test.docids", output="test.hyp.fr")
    result = api.cxmi(path="model/checkpoint_best.pt", spm="model/spm.model", source="test.en",
                      reference="test.fr", docids="test.docids", output="pcxmi.jsonl")
    result.summary["cxmi"], result.records[0]["token_pcxmi"]

Each command's options are declared once, by its options class (``TranslateOptions``,
``CxmiOptions``, ...): the command line is generated from it (``contextual_mt.cli``), and these
functions build it from their keywords the same way. A wrong option or input raises
``InputError`` (``contextual_mt.errors``; ``ContextualMTError`` is one kind of it), its message the
one line the command would print; nothing is printed, and no output file is left behind.
Progress bars go to stderr (``quiet=True``: none).

This module imports the library's modules when a function is called: ``import contextual_mt.api``
loads neither torch nor fairseq.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Dict, List, Optional, Tuple, Type, TypeVar

from commandkit.errors import Code
from commandkit.options import (
    Dataclass,
    check_required,
    from_keywords,
    from_namespace,
    group,
    group_fields,
    group_value,
    option,
)
from contextual_mt.inference.model_args import (
    FAIRSEQ_ONLY,
    HF_ONLY,
    ModelArgs,
    max_tokens_option,
    progress_option,
)
from docalign.align import AlignArgs, Alignment, AlignOptions
from docalign.formats import NO_PIVOT

if TYPE_CHECKING:
    from contextual_mt.analysis.cxmi import CxmiOptions
    from contextual_mt.analysis.cxmi_shards import CxmiMergeOptions
    from contextual_mt.analysis.report import ReportOptions
    from contextual_mt.attribution.attribute import AttributeOptions
    from contextual_mt.contrastive.evaluate import ContrastiveOptions, ContrastiveResult
    from contextual_mt.inference.interface import ModelSpec
    from contextual_mt.inference.translate import TranslateOptions
    from contextual_mt.metrics import ScoreOptions
    from contextual_mt.testsets.build import BuildOptions
    from contextual_mt.testsets.ctxpro import ImportOptions
    from contextual_mt.testsets.cues import CueOptions
    from contextual_mt.testsets.evaluate import EvaluateOptions

Options = TypeVar("Options", bound=Dataclass)  # a command's options class

# torch takes a C int and starts one OpenMP thread each: far past any machine's cores is a typo
MAX_THREADS = 4096


@dataclass
class Translations:
    """What ``translate`` made: ``lines``, one translation per source line (``unit="sentence"``),
    or ``documents``, one record per document (``unit="document"``: ``DocumentRecord``, its
    ``doc`` and ``text``), as written to ``output``; ``dtype``: the precision the model ran in."""

    output: str
    dtype: str
    lines: Optional[List[str]] = None
    documents: Optional[List[Any]] = None


@dataclass
class Run:
    """What a scoring command made: its ``summary`` (the ``.summary.json`` beside the output) and
    its ``records`` (the output's JSONL lines, one per sentence)."""

    output: str
    summary: Dict
    records: List[Dict]


def translate(options: Optional[TranslateOptions] = None, **keywords: Any) -> Translations:
    """``contextual-mt translate``: translate documents, the model's own previous translations
    (or ``gold_target_context``, references) as target context.

    Keywords: the options of ``TranslateOptions`` (``source``, ``docids``, ``output``, ``beam``,
    ``batch_size``, ``unit``, ...) and of the model (``path``, ``spm``, ``hf_model``, ...; or
    ``model``, a backend's specification), as ``contextual-mt translate --help`` lists them."""
    from contextual_mt.inference.registry import model_dtype
    from contextual_mt.inference.translate import TranslateOptions, translate_document_files, translate_files

    translation = command_options(TranslateOptions, options, keywords)
    if translation.unit == "document":
        from contextual_mt.inference.document_output import read_document_records

        translate_document_files(translation)
        documents = read_document_records(translation.output)
        return Translations(translation.output, model_dtype(translation.model), documents=documents)
    lines = translate_files(translation)
    return Translations(translation.output, model_dtype(translation.model), lines=lines)


def cxmi(options: Optional[CxmiOptions] = None, **keywords: Any) -> Run:
    """``contextual-mt cxmi``: corpus CXMI and token-level P-CXMI of the references, each scored
    with and without its context by one model. Returns the summary (``summary["cxmi"]``, in
    nats unless ``log_base="2"``) and the records (``token_pcxmi`` per target token).

    Keywords: the options of ``CxmiOptions`` (``source``, ``reference``, ``docids``, ``output``,
    ``batch_size``, ``shard``, ...) and of the model, as ``contextual-mt cxmi --help`` lists them."""
    from contextual_mt.analysis.cxmi import CxmiOptions, run_cxmi
    from contextual_mt.analysis.join import read_pcxmi

    scoring = command_options(CxmiOptions, options, keywords)
    summary = run_cxmi(scoring)
    return Run(scoring.output, summary, read_pcxmi(scoring.output))


def cxmi_merge(options: Optional[CxmiMergeOptions] = None, **keywords: Any) -> Run:
    """``contextual-mt cxmi-merge``: the outputs of ``cxmi`` runs with ``shard="i/n"`` (``shards``,
    every part of one computation) joined into ``output`` and its summary, as one unsharded run
    writes them. Returns the summary and the records.

    Keywords: the options of ``CxmiMergeOptions`` (``shards``, ``output``)."""
    from contextual_mt.analysis.cxmi_shards import CxmiMergeOptions, merge_shards
    from contextual_mt.analysis.join import read_pcxmi

    merge = command_options(CxmiMergeOptions, options, keywords)
    summary = merge_shards(merge.shards, merge.output)
    return Run(merge.output, summary, read_pcxmi(merge.output))


def contrastive(options: Optional[ContrastiveOptions] = None, **keywords: Any) -> ContrastiveResult:
    """``contextual-mt contrastive``: the accuracy of a model (``path`` or ``hf_model``) on a
    contrastive test set (``format``: voita, bawden, contrapro, scat; ``input``), scoring every
    candidate and writing ``output`` (one loss per candidate, the file the set's own scorer reads)
    and ``summary``; or, with ``scores`` instead of a model, the accuracy of scores made elsewhere.
    Returns the summary (``summary["accuracy"]``, ``summary["by"]``), the ``scores`` (one per
    candidate) and the ``groups`` (one record per test instance: ``right``, ...).

    Keywords: the options of ``ContrastiveOptions`` and of the model, as ``contextual-mt
    contrastive --help`` lists them."""
    from contextual_mt.contrastive.evaluate import ContrastiveOptions, evaluate_contrastive

    return evaluate_contrastive(command_options(ContrastiveOptions, options, keywords))


def attribute(options: Optional[AttributeOptions] = None, **keywords: Any) -> Run:
    """``contextual-mt attribute``: context attribution, PECoRe batched: which target tokens
    depend on context (CTI: ``cti_metric``, KL or P-CXMI) and on which context tokens (CCI:
    ``method``, gradients or attention), for ``reference``, ``hypotheses`` or the model's own
    translations (``translate=True``). Returns the summary and the records (one per sentence:
    its selected tokens and their cues).

    Keywords: the options of ``AttributeOptions``, as ``contextual-mt attribute --help`` lists
    them (``cti_std``, ``cue_top_k``, ``beam``: the command line's; or ``cti``, ``cci``, ``translate``
    as the fields hold them)."""
    from contextual_mt.attribution.attribute import AttributeOptions, run_attribute

    attribution = command_options(AttributeOptions, options, keywords)
    summary = run_attribute(attribution)
    return Run(attribution.output, summary, _jsonl(attribution.output))


def _jsonl(path: str) -> List[Dict]:
    import json

    from commandkit.text import read_lines

    return [json.loads(line) for line in read_lines(path) if line.strip()]


def report(options: Optional[ReportOptions] = None, **keywords: Any) -> Dict:
    """``contextual-mt report``: tables, a plot and an HTML viewer of P-CXMI (``pcxmi``, the
    records of ``cxmi``) per POS class, tag, vocabulary item and token, written to
    ``output_dir``; returns the report's summary.

    Keywords: the options of ``ReportOptions``, as ``contextual-mt report --help`` lists them."""
    from contextual_mt.analysis.report import ReportOptions, run_report

    return run_report(command_options(ReportOptions, options, keywords))


def score(options: Optional[ScoreOptions] = None, **keywords: Any) -> Dict:
    """``contextual-mt score``: sacreBLEU BLEU and chrF of ``hyp`` against ``ref``; with
    ``docids``, document-level BLEU; with ``comet_model`` (and ``source``), COMET and Doc-COMET.
    A document-level ``hyp`` is aligned to the reference lines first (``pivot``, ``segmenter``,
    ...: the alignment options). Returns the result (``result["bleu"]["score"]``, ...), as written
    to ``output`` when given.

    Keywords: the options of ``ScoreOptions``, as ``contextual-mt score --help`` lists them."""
    from contextual_mt.metrics import ScoreOptions, run_score

    return run_score(command_options(ScoreOptions, options, keywords))


@dataclass
class Suite:
    """What ``testset_build`` or ``testset_import`` made in ``output_dir``: its ``summary`` (its
    summary.json: counts per phenomenon, the inputs' hashes) and its ``groups`` (the records of
    its manifest.jsonl, one per tested word: what ``testset_evaluate`` reads)."""

    output_dir: str
    summary: Dict
    groups: List[Dict]
    tagged: Optional[Dict] = None  # testset_build without tags: muda's summary of the reference's tagging

    @property
    def manifest(self) -> str:
        import os

        return os.path.join(self.output_dir, "manifest.jsonl")


@dataclass
class Measures:
    """What ``testset_evaluate`` or ``testset_cues`` measured: ``result``, as written to ``output``
    when given (per system: overall, per phenomenon and distance, with intervals; ``testset_evaluate``'s
    also the outcome of each group, ``result["systems"][name]["group_outcomes"]``), and ``table``,
    the table the command prints."""

    output: Optional[str]
    result: Dict
    table: str


def testset_build(options: Optional[BuildOptions] = None, **keywords: Any) -> Suite:
    """``contextual-mt testset build``: contrastive groups from the MuDA tags (``tags``) of a
    parallel document corpus (``source``, ``reference``, ``docids``, ``lang``): the reference and
    its variants, in Voita's and ContraPro's formats with a manifest, written to ``output_dir``
    (with ``counterfactual=True``, also its counterfactual suite). Without ``tags`` the reference
    is tagged first (``muda tag``, ``annotator``) into OUTPUT_DIR/reference.tags.json.

    Keywords: the options of ``BuildOptions``, as ``contextual-mt testset build --help`` lists them."""
    from contextual_mt.testsets.build import BuildOptions, run_build, tag_reference

    built = command_options(BuildOptions, options, keywords)
    # without tags: tagged first (the options were checked before anything is annotated); the
    # tags are kept when the build fails (a cache)
    tagged = None if built.tags_ready else tag_reference(built)
    suite = _suite(built.output_dir, run_build(built))
    suite.tagged = tagged
    return suite


def testset_import(options: Optional[ImportOptions] = None, **keywords: Any) -> Suite:
    """``contextual-mt testset import``: a published suite as the project's (ctxpro's evaluation
    sets: ``evalset`` and its ``inputs``), written to ``output_dir`` for ``translate``,
    ``testset_evaluate`` and ``contrastive``.

    Keywords: the options of ``ImportOptions``, as ``contextual-mt testset import --help`` lists them."""
    from contextual_mt.testsets.ctxpro import ImportOptions, import_ctxpro

    imported = command_options(ImportOptions, options, keywords)
    return _suite(imported.output_dir, import_ctxpro(imported))


def _suite(folder: str, summary: Dict) -> Suite:
    import os

    return Suite(folder, summary, _jsonl(os.path.join(folder, "manifest.jsonl")))


def testset_evaluate(options: Optional[EvaluateOptions] = None, **keywords: Any) -> Measures:
    """``contextual-mt testset evaluate``: for each group of ``manifest`` (a suite's), does the
    tagged word's correct form, or a wrong alternative, appear in each system's translation of
    its line (``hyps``, or ``hyp``: one file per system; the first is the baseline of the paired
    comparisons); per phenomenon and context distance, with bootstrap intervals.

    Keywords: the options of ``EvaluateOptions``, as ``contextual-mt testset evaluate --help`` lists
    them (``hyp`` or ``hyps``: a list of files)."""
    from contextual_mt.testsets.evaluate import EvaluateOptions, evaluate_testset, format_testset_table

    evaluated = command_options(EvaluateOptions, options, keywords)
    result = evaluate_testset(evaluated)
    return Measures(evaluated.output, result, format_testset_table(result))


def testset_cues(options: Optional[CueOptions] = None, **keywords: Any) -> Measures:
    """``contextual-mt testset cues``: does the model follow the cue? The measures of a
    counterfactual suite (``suite``: OUTPUT_DIR/counterfactual of ``testset_build(...,
    counterfactual=True)``) from ``contrastive`` summaries or an ``evaluation`` (the output of
    ``testset_evaluate``): cue-following, control stability, their difference, accuracy by cue
    distance (``plot``: a PNG) and under a distractor, with bootstrap intervals.

    Keywords: the options of ``CueOptions``, as ``contextual-mt testset cues --help`` lists them."""
    from contextual_mt.testsets.cues import CueOptions, format_cues_table, measure_cues

    measured = command_options(CueOptions, options, keywords)
    result = measure_cues(measured)
    return Measures(measured.output, result, format_cues_table(result))


ALIGN_HELP = "re-align a document-level output (whole documents) to the source lines, for line-level evaluation"
LINK_MODEL = "the model's link score (optional: --path or --hf-model, below)"
NO_REFERENCE = "without a reference (--pivot none): the output aligned to the source lines"


@dataclass
class AlignCommandOptions:
    """``contextual-mt align``: a document-level output re-aligned to its source lines
    (``docalign``), optionally with a model scoring the links."""

    model_optional: ClassVar[bool] = True
    # a model scoring the links (FairseqModelOptions, HFModelOptions), or None
    model: Optional[ModelSpec] = group(ModelArgs, last=True, given=True)
    hyp_documents: str = option(
        required=True,
        metavar="OUTPUT",
        help='the system\'s output: JSONL records {"doc", "text"} (as `translate --unit document` writes) '
        "or one document per line, in the docids file's order",
    )
    docids: str = option(required=True, help="document id of each source line")
    output: str = option(required=True, help="the aligned hypothesis, one line per source line")
    alignment: str = option(
        required=True, help="the alignment: JSONL, one record per source line (its segments, link type, score)"
    )
    align: AlignArgs = group(AlignArgs)
    source: Optional[str] = option(
        group=LINK_MODEL,
        help="the source lines: with a model, its probability of the output sentences given the source "
        f"line(s) scores the links near the chrF path too (averaged with chrF); with --pivot {NO_PIVOT}, the "
        "lines the output is aligned to",
    )
    batch_size: int = option(default=64, group=LINK_MODEL, help="links scored together by the model")
    lexical_train: Optional[List[str]] = option(
        nargs=2,
        metavar=("TRAIN.SRC", "TRAIN.TGT"),
        group=NO_REFERENCE,
        help="--pivot none: the pair's training data (line-aligned source and target files), from which a "
        "lexical translation table (IBM Model 1) is learned, cached beside them (`make data` leaves the "
        "study's), to gloss each --source line word by word: the pivot chrF compares with the output",
    )
    max_tokens: Optional[int] = max_tokens_option()
    progress: bool = progress_option("no progress bar")

    def __post_init__(self) -> None:
        check_required(self)

    @staticmethod
    def check_before_model(model: ModelArgs, given: Any) -> None:
        """--band, before the model's options."""
        from_namespace(AlignArgs, given).options()


def align(options: Optional[AlignCommandOptions] = None, **keywords: Any) -> Alignment:
    """``contextual-mt align``: re-align a document-level output (``hyp_documents``: whole
    documents) to the source lines of ``docids``, against ``pivot`` (a sentence-level translation
    of each line), or with ``pivot="none"`` to ``source`` through a lexical table learned from
    ``lexical_train``; a model (``path`` or ``hf_model``) may score the links too. Writes
    ``output`` (one line per source line) and ``alignment`` (JSONL); returns docalign's
    ``Alignment`` (``hypotheses``, ``records()``, ``statistics``).

    Keywords: the options of ``AlignCommandOptions``, as ``contextual-mt align --help`` lists them."""
    from commandkit.documents import check_line_count, read_docids
    from commandkit.errors import InputError
    from commandkit.outputs import atomic_write_lines, outputs
    from commandkit.text import read_lines
    from docalign.align import align_documents, check_guess, nonempty_documents
    from docalign.formats import LINES, read_pivots, read_system_output, write_alignment

    request = command_options(AlignCommandOptions, options, keywords)
    align_options = request.align.options()  # checked before anything is read
    spec = request.model
    if request.align.pivot is None:
        raise InputError(
            "--pivot: give a sentence-level translation of each source line (e.g. `contextual-mt translate` "
            f"of a sentence-level model, or the references when evaluating), or `--pivot {NO_PIVOT}` with --source",
            code=Code.OPTION_MISSING,
        )
    no_pivot = request.align.pivot == NO_PIVOT
    if no_pivot and (request.source is None or request.lexical_train is None):
        raise InputError(
            f"--pivot {NO_PIVOT} aligns to the source lines: give --source and --lexical-train TRAIN.SRC TRAIN.TGT "
            "(the pair's training data; a model, --path or --hf-model, may score the links too)",
            code=Code.OPTION_MISSING,
        )
    if request.lexical_train is not None and not no_pivot:
        raise InputError(
            f"--lexical-train glosses the source lines for --pivot {NO_PIVOT} only", code=Code.OPTIONS_CONFLICT
        )
    if not no_pivot and (spec is None) != (request.source is None):
        raise InputError(
            "--source goes with a model (--path or --hf-model) that scores the links, and a model needs --source",
            code=Code.OPTIONS_CONFLICT,
        )
    if request.batch_size < 1:
        raise InputError(f"--batch-size must be at least 1 (got {request.batch_size})", code=Code.OPTION_VALUE)
    ids = read_docids(request.docids)
    sources = None
    if request.source is not None:
        sources = read_lines(request.source)
        check_line_count(ids, request.docids, len(sources), request.source)
    if no_pivot:
        assert sources is not None and request.lexical_train is not None
        pivots, align_options = _source_pivots(sources, request.lexical_train, align_options)
    else:
        pivots = read_pivots(request.align.pivot, len(ids), request.docids)
    with outputs(request.output, request.alignment):
        read = read_system_output(
            request.hyp_documents,
            ids,
            request.docids,
            nonempty_documents(pivots, ids),
            align_options.hyp_format,
        )
        if read.format == LINES:
            raise InputError(
                f"{request.hyp_documents}: has one line per source line: it is line-aligned already, nothing to align",
                code=Code.FORMAT,
            )
        assert read.documents is not None
        link_model = None
        if spec is not None:
            from contextual_mt.contrastive.link_model import link_model as open_link_model

            link_model = open_link_model(spec, request.batch_size, request.max_tokens, progress=request.progress)
        # a gloss has no punctuation: a line's sentences are its source's
        line_texts = sources if no_pivot else None
        result = align_documents(
            read.documents, pivots, ids, align_options, sources=sources, link_model=link_model, line_texts=line_texts
        )
        check_guess(read, result, pivots)
        atomic_write_lines(request.output, result.hypotheses)
        write_alignment(request.alignment, result.records())
    return result


def _source_pivots(
    sources: List[str], lexical_train: List[str], options: AlignOptions
) -> Tuple[List[str], AlignOptions]:
    """``--pivot none``: the pivots in the output's language made from the source lines (their
    gloss by the lexical table learned from ``lexical_train``) and the weights for them. The table
    is needed even with a model: the model scores the links near a first path, which without a
    pivot in the output's language strays (on the demo, the source lines themselves as the pivot
    and the model's score alone linked 0.73 of the lines, the gloss 0.99; bench/RESULTS.md)."""
    from docalign.lexical.gloss import WEIGHTS, gloss_lines
    from docalign.lexical.model1 import lexical_table

    table = lexical_table(*lexical_train)
    return gloss_lines(sources, table), replace(options, weights=replace(options.weights, **WEIGHTS))


def command_options(cls: Type[Options], options: Optional[Options], keywords: Dict[str, Any]) -> Options:
    """The options object of a command: ``options`` as given, or made from ``keywords`` (the
    names of its fields or of the command line's options) by ``options_from``."""
    return from_keywords(cls, options, keywords, options_from)


def options_from(cls: Type[Options], values: Any, named: Optional[Dict[str, Any]] = None) -> Options:
    """``cls`` made from ``values`` (a parsed command line, or keywords as attributes) as every
    command makes it: its groups (checked) first, then the model's specification from the model
    options (after the class's ``check_before_model``), then the object (checked); ``named``:
    fields given as they are."""
    named = dict(named or {})
    for f, given in group_fields(cls):
        if f.name in named:
            continue
        if given:
            model = from_namespace(ModelArgs, values)
            check = getattr(cls, "check_before_model", None)
            if check is not None:
                check(model, values)
            optional = getattr(cls, "model_optional", False)  # align: a model may score the links
            named[f.name] = model_spec(model) if model.given() or not optional else None
        else:
            named[f.name] = group_value(f, values)
    return from_namespace(cls, values, **named)


def model_spec(model: ModelArgs) -> ModelSpec:
    """A fairseq checkpoint (``path``) or a Hugging Face model (``hf_model``), the other's
    options refused; ``threads`` sets torch's CPU threads."""
    from contextual_mt.errors import ContextualMTError

    if model.threads is not None:
        set_threads(model.threads)
    dtype = model.dtype
    if model.fp16:  # an alias: with another --dtype, which one was meant?
        if dtype not in (None, "float16"):
            raise ContextualMTError(
                f"--fp16 is --dtype float16: give one of them, not --fp16 with --dtype {dtype}",
                code=Code.OPTIONS_CONFLICT,
            )
        dtype = "float16"
    if model.path and model.hf_model:
        raise ContextualMTError(
            "give one model: --path CHECKPOINT (fairseq) or --hf-model FOLDER_OR_NAME, not both",
            code=Code.OPTIONS_CONFLICT,
        )
    if not model.given():
        raise ContextualMTError(
            "give the model: --path CHECKPOINT (fairseq) or --hf-model FOLDER_OR_NAME", code=Code.OPTION_MISSING
        )
    flag = lambda name: "--" + name.replace("_", "-")  # noqa: E731
    if model.hf_model:
        from contextual_mt.backends.hf.options import HFModelOptions

        given = [flag(n) for n in FAIRSEQ_ONLY if getattr(model, n) is not None]
        if given:
            raise ContextualMTError(
                f"{', '.join(given)}: for fairseq checkpoints only; --hf-model brings its tokenizer",
                code=Code.OPTIONS_CONFLICT,
            )
        if dtype == "auto":
            raise ContextualMTError(
                "--dtype auto: for fairseq checkpoints only (--hf-model runs in float32 unless "
                "--dtype bfloat16 or float16 is given)",
                code=Code.OPTIONS_CONFLICT,
            )
        return HFModelOptions(
            model.hf_model,
            src_lang=model.src_lang,
            tgt_lang=model.tgt_lang,
            separator=model.hf_separator if model.hf_separator is not None else " ",
            prompt_template=model.prompt_template,
            dtype="float32" if dtype is None else dtype,
            device_map=model.device_map,
            cpu=model.cpu,
            source_context_size=1 if model.source_context_size is None else model.source_context_size,
            target_context_size=1 if model.target_context_size is None else model.target_context_size,
        )
    given = [flag(n) for n in HF_ONLY if getattr(model, n) is not None]
    if given:
        raise ContextualMTError(f"{', '.join(given)}: for --hf-model only", code=Code.OPTIONS_CONFLICT)
    from contextual_mt.backends.fairseq.model import FairseqModelOptions

    assert model.path is not None  # given(), and not hf_model
    return FairseqModelOptions(
        model.path,
        spm=model.spm,
        data=model.data,
        source_context_size=model.source_context_size,
        target_context_size=model.target_context_size,
        cpu=model.cpu,
        dtype="auto" if dtype is None else dtype,
    )  # --dtype= (empty) is refused


def set_threads(threads: int) -> None:
    """``--threads``: torch's CPU threads, within 1..MAX_THREADS (one line naming the option
    otherwise); more than the machine's cores is allowed, with a warning (they only compete)."""
    import logging
    import os

    from contextual_mt.errors import ContextualMTError

    if threads < 1:
        raise ContextualMTError(f"--threads must be at least 1 (got {threads})", code=Code.OPTION_VALUE)
    if threads > MAX_THREADS:
        raise ContextualMTError(f"--threads must be at most {MAX_THREADS} (got {threads})", code=Code.OPTION_VALUE)
    cores = os.cpu_count()
    if cores is not None and threads > cores:
        logging.getLogger(__name__).warning(
            "--threads %d: more than this machine's %d CPU cores; the extra threads only compete for them",
            threads,
            cores,
        )
    import torch

    torch.set_num_threads(threads)


__all__ = [
    "AlignCommandOptions",
    "Measures",
    "ModelArgs",
    "Run",
    "Suite",
    "Translations",
    "align",
    "attribute",
    "contrastive",
    "cxmi",
    "cxmi_merge",
    "model_spec",
    "report",
    "score",
    "testset_build",
    "testset_cues",
    "testset_evaluate",
    "testset_import",
    "translate",
]
