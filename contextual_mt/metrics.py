"""Scoring translations: sacreBLEU BLEU and chrF, document-level BLEU, COMET and Doc-COMET."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence

from commandkit.documents import document_spans, group_by_document, read_docids
from commandkit.errors import check_number
from commandkit.options import check_required, group, option
from commandkit.outputs import atomic_write_text, outputs
from commandkit.text import read_lines
from contextual_mt.errors import Code, InputError, given
from contextual_mt.system_outputs import (
    DOCUMENT_LEVEL,
    read_hypotheses,
    read_pivots,
    refuse_documents,
    write_alignment_file,
)
from docalign.align import AlignArgs, AlignOptions
from docalign.links import summary as alignment_summary
from muda.evaluation import metrics as _muda_metrics
from muda.evaluation.metrics import comet_model_id, comet_predict, quiet_comet


def join_documents(lines: Sequence[str], docids: Sequence[str]) -> List[str]:
    """Concatenate the sentences of each document (maximal runs of equal ids) with spaces."""
    return [" ".join(line.strip() for line in doc if line.strip()) for doc in group_by_document(lines, docids)]


def sentence_metrics(hyps: Sequence[str], refs: Sequence[str]) -> Dict:
    import sacrebleu

    bleu = _muda_metrics.bleu_metric()
    chrf = sacrebleu.metrics.CHRF()
    b = bleu.corpus_score(list(hyps), [list(refs)])
    c = chrf.corpus_score(list(hyps), [list(refs)])
    return {
        "bleu": {"score": b.score, "signature": str(bleu.get_signature()), "text": str(b)},
        "chrf": {"score": c.score, "signature": str(chrf.get_signature()), "text": str(c)},
    }


def document_bleu(hyps: Sequence[str], refs: Sequence[str], docids: Sequence[str]) -> Dict:
    """d-BLEU: BLEU over whole documents (sentences concatenated), as in document-level MT."""
    bleu = _muda_metrics.bleu_metric()
    d = bleu.corpus_score(join_documents(hyps, docids), [join_documents(refs, docids)])
    return {"score": d.score, "signature": str(bleu.get_signature()), "text": str(d)}


def load_comet(model: str):
    """muda's COMET loader (``muda.evaluation.metrics``)."""
    return _muda_metrics.load_comet(model)


# Doc-COMET (Vernikos et al. 2022, "Embarrassingly Easy Document-Level MT Metrics"): COMET with
# unbabel-comet's document-context mode (``model.enable_context()``). Each sentence is still scored
# on its own, but its source, hypothesis and reference are encoded after up to ``context`` preceding
# sentences of the same document, joined by the model tokenizer's separator token; the model pools
# over the last sentence only. The hypothesis follows the *reference's* previous sentences, as in
# the paper.
DOC_COMET_CONTEXT = 2  # the paper's window (its add_context.py --ws default)


def with_context(
    sentences: Sequence[str], context: Sequence[str], ids: Sequence[str], size: int, sep: str
) -> List[str]:
    """Each of ``sentences`` preceded by up to ``size`` lines of ``context`` from its own document
    (a maximal run of equal ids, as d-BLEU's documents), joined by `` {sep} ``."""
    out = []
    for start, end in document_spans(ids):
        for i in range(start, end):
            out.append(f" {sep} ".join([*context[max(start, i - size) : i], sentences[i]]))
    return out


def context_inputs(
    srcs: Sequence[str], hyps: Sequence[str], refs: Sequence[str], ids: Sequence[str], size: int, sep: str
) -> Dict[str, List[str]]:
    """The three context-augmented sides; the hypothesis gets the reference's context so that an
    error in an earlier output sentence is not counted again in a later one."""
    return {
        "src": with_context(srcs, srcs, ids, size, sep),
        "mt": with_context(hyps, refs, ids, size, sep),
        "ref": with_context(refs, refs, ids, size, sep),
    }


def comet_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("unbabel-comet")
    except PackageNotFoundError:  # a stand-in module (tests)
        return "unknown"


def comet_precision(scorer: Any) -> str:
    """The precision the model scored in: fp32 here (unbabel-comet's own ``comet-score`` runs
    ``.half()``, whose scores differ from fp32's in the 4th decimal)."""
    dtype = str(scorer.dtype).replace("torch.", "")
    return {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}.get(dtype, dtype)


def comet_signature(model: str, precision: str, context: Optional[int] = None, sep: Optional[str] = None) -> str:
    """sacreBLEU-style: what a reader needs to reproduce the number. ``model``: the model's name,
    or a local model's checkpoint hash (``comet_model_id``). ``context`` None: COMET."""
    if context is None:
        return f"COMET|model:{model}|precision:{precision}|version:{comet_version()}"
    return (
        f"Doc-COMET|model:{model}|context:{context}|mtctx:ref|sep:{sep}|precision:{precision}|version:{comet_version()}"
    )


@contextmanager
def context_mode(scorer: Any) -> Iterator[bool]:
    """The document-context mode for one prediction, then off again, so that one loaded model
    gives both COMET and Doc-COMET. Yields False for models without the mode: unbabel-comet only
    enables it for regression models with average pooling (e.g. Unbabel/wmt22-comet-da)."""
    if not callable(getattr(scorer, "enable_context", None)):  # an older unbabel-comet, or another model class
        yield False
        return
    before = bool(getattr(scorer, "use_context", False))
    with quiet_comet():  # a model class without the mode logs a warning; the note below says it
        scorer.enable_context()
    try:
        yield bool(getattr(scorer, "use_context", False))
    finally:
        scorer.use_context = before


def doc_comet_predict(
    scorer: Any,
    srcs: Sequence[str],
    hyps: Sequence[str],
    refs: Sequence[str],
    ids: Sequence[str],
    model: str,
    context: int = DOC_COMET_CONTEXT,
    batch_size: int = 16,
    gpus: Optional[int] = None,
) -> Optional[Dict]:
    """Doc-COMET of one system with a loaded model; None (and a note) if the model has no context mode."""
    with context_mode(scorer) as enabled:
        if not enabled:
            print(
                f"Doc-COMET: skipped, {model} has no document-context mode (unbabel-comet has it for "
                "regression models with average pooling, e.g. Unbabel/wmt22-comet-da)",
                file=sys.stderr,
            )
            return None
        sep = scorer.encoder.tokenizer.sep_token
        sides = context_inputs(srcs, hyps, refs, ids, context, sep)
        result = comet_predict(scorer, sides["src"], sides["mt"], sides["ref"], model, batch_size, gpus)
    result.update(
        context=context, signature=comet_signature(comet_model_id(model), comet_precision(scorer), context, sep)
    )
    return result


def comet_results(
    scorer: Any,
    srcs: Sequence[str],
    hyps: Sequence[str],
    refs: Sequence[str],
    docids: Optional[Sequence[str]],
    model: str,
    batch_size: int = 16,
    doc_context: int = DOC_COMET_CONTEXT,
) -> Dict:
    """``comet``, and ``doc_comet`` when there are document ids, from one loaded model."""
    comet = comet_predict(scorer, srcs, hyps, refs, model, batch_size)
    comet["signature"] = comet_signature(comet_model_id(model), comet_precision(scorer))
    out = {"comet": comet}
    if docids is not None:
        doc = doc_comet_predict(scorer, srcs, hyps, refs, docids, model, doc_context, batch_size)
        if doc is not None:
            out["doc_comet"] = doc
    return out


def check_comet_model(model: str) -> None:
    """A COMET model given as a path must be one (muda's check: no import, no network)."""
    _muda_metrics.local_comet_checkpoint(model)


def check_comet_options(comet_batch_size: int, doc_comet_context: int) -> None:
    check_number("--comet-batch-size", comet_batch_size, minimum=1, integer=True)
    check_number("--doc-comet-context", doc_comet_context, minimum=1, integer=True)


def score(
    hyps: Sequence[str],
    refs: Sequence[str],
    docids: Optional[Sequence[str]] = None,
    srcs: Optional[Sequence[str]] = None,
    comet_model: Optional[str] = None,
    comet_batch_size: int = 16,
    doc_comet_context: int = DOC_COMET_CONTEXT,
) -> Dict:
    """All metrics for one system. d-BLEU needs ``docids``; COMET needs ``srcs``; Doc-COMET both."""
    check_comet_options(comet_batch_size, doc_comet_context)
    if len(hyps) != len(refs):
        raise InputError(f"{len(hyps)} hypotheses but {len(refs)} references", code=Code.LINE_COUNT)
    if not refs:
        raise InputError("no sentences to score", code=Code.EMPTY)
    if docids is not None and len(docids) != len(refs):
        raise InputError(f"{len(docids)} document ids but {len(refs)} references", code=Code.LINE_COUNT)
    scorer = None
    if comet_model is not None:  # the model (or its absence) before any metric is computed
        if srcs is None:
            raise InputError("COMET needs the source sentences (--source)", code=Code.OPTION_MISSING)
        scorer = load_comet(comet_model)
    result = sentence_metrics(hyps, refs)
    if docids is not None:
        result["d_bleu"] = document_bleu(hyps, refs, docids)
    if scorer is not None:
        result.update(
            comet_results(
                scorer,
                given(srcs, "--source"),
                hyps,
                refs,
                docids,
                given(comet_model, "--comet-model"),
                comet_batch_size,
                doc_comet_context,
            )
        )
    return result


def summary_line(result: Dict) -> str:
    parts = [f"BLEU {result['bleu']['score']:.2f}", f"chrF {result['chrf']['score']:.2f}"]
    if "d_bleu" in result:
        parts.append(f"d-BLEU {result['d_bleu']['score']:.2f}")
    if "comet" in result:
        parts.append(f"COMET {result['comet']['score']:.4f}")
    if "doc_comet" in result:  # its signature too: the context size changes the number
        parts.append(f"Doc-COMET {result['doc_comet']['score']:.4f} ({result['doc_comet']['signature']})")
    if "alignment" in result:  # a document-level output, scored through its alignment
        parts.append(alignment_summary(result["alignment"]))
    return " | ".join(parts)


@dataclass
class ScoreOptions:
    """``contextual-mt score``: the files scored, the metrics' settings and where results go."""

    hyp: str = option(
        required=True,
        help="system output, one line per reference line; or a document-level output (JSONL records "
        '{"doc", "text"}, or one document per line, with --docids), scored through its alignment to the '
        "reference lines",
    )
    ref: str = option(required=True, help="references")
    docids: Optional[str] = option(help="document ids: adds d-BLEU, and Doc-COMET with --comet-model")
    source: Optional[str] = option(help="source sentences (needed by COMET)")
    comet_model: Optional[str] = option(help="COMET model name or checkpoint path (unbabel-comet)")
    comet_batch_size: int = option(default=16)
    doc_comet_context: int = option(
        default=DOC_COMET_CONTEXT,
        help="Doc-COMET: preceding sentences of the same document encoded as context "
        "(default: %(default)s, as in Vernikos et al. 2022)",
    )
    output: Optional[str] = option(help="write the full result as JSON here")
    alignment_output: Optional[str] = option(
        help="a document-level --hyp: write its alignment to the reference lines here (JSONL, one record per line)"
    )
    # a document-level --hyp: the alignment options (the pivot defaults to the references)
    align: AlignArgs = group(AlignArgs)

    def __post_init__(self) -> None:
        check_required(self)


def run_score(options: ScoreOptions) -> Dict:
    """``contextual-mt score``: the metrics of the files; ``output`` (and ``alignment_output``)
    written atomically (checked writable first, nothing written on failure). ``hyp`` may be a
    document-level output (``contextual_mt.system_outputs``): it is then aligned to the reference
    lines (``align``: the alignment options; the pivot defaults to the references) and scored on
    the aligned hypotheses, its alignment statistics in the result's ``alignment``."""
    check_comet_options(options.comet_batch_size, options.doc_comet_context)
    if options.comet_model is not None:
        check_comet_model(options.comet_model)  # a path not there: before a document-level output is aligned
    align = options.align or AlignArgs()
    align_options = align.options()  # --band checked before any file is read
    with outputs(options.output, options.alignment_output):
        return _score_files(
            options.hyp,
            options.ref,
            options.docids,
            options.source,
            options.comet_model,
            options.comet_batch_size,
            options.output,
            options.doc_comet_context,
            align,
            align_options,
            options.alignment_output,
        )


def score_files(hyp: str, ref: str, **options: Any) -> Dict:
    """``run_score`` of ``ScoreOptions(hyp, ref, **options)``."""
    return run_score(ScoreOptions(hyp, ref, **options))


def _score_files(
    hyp: str,
    ref: str,
    docids: Optional[str],
    source: Optional[str],
    comet_model: Optional[str],
    comet_batch_size: int,
    output: Optional[str],
    doc_comet_context: int,
    align: AlignArgs,
    options: AlignOptions,
    alignment_output: Optional[str],
) -> Dict:
    hyps, refs = read_lines(hyp), read_lines(ref)
    for path, lines, what in ((hyp, hyps, "hypothesis"), (ref, refs, "reference")):
        if not lines:  # sacreBLEU has no score for no sentences
            raise InputError(f"{path}: {what} file is empty", code=Code.EMPTY)
    ids = None
    if docids is not None:
        ids = read_docids(docids)
        if len(ids) != len(refs):
            raise InputError(f"{docids}: has {len(ids)} lines but {ref} has {len(refs)}", code=Code.LINE_COUNT)
    srcs = None
    if source is not None:
        srcs = read_lines(source)
        if len(srcs) != len(refs):
            raise InputError(f"{source}: has {len(srcs)} lines but {ref} has {len(refs)}", code=Code.LINE_COUNT)
    pivots = read_pivots(align, len(refs), ref)
    alignment = None
    if ids is None:
        refuse_documents(hyp, hyps, hyp_format=options.hyp_format)
        if len(hyps) != len(refs):
            raise InputError(
                f"{hyp}: has {len(hyps)} lines but {ref} has {len(refs)}; {DOCUMENT_LEVEL}", code=Code.LINE_COUNT
            )
        if alignment_output:
            raise InputError(
                f"--alignment-output: without --docids {hyp} is read line by line (no alignment to write)",
                code=Code.OPTIONS_CONFLICT,
            )
    else:
        read = read_hypotheses([hyp], ids, docids or "", refs if pivots is None else pivots, options)[0]
        if alignment_output:
            write_alignment_file(alignment_output, read)  # staged: committed with the scores
        hyps, alignment = read.lines, read.alignment
    result = score(hyps, refs, ids, srcs, comet_model, comet_batch_size, doc_comet_context)
    result["files"] = {"hyp": hyp, "ref": ref, "docids": docids, "source": source}
    if alignment is not None:
        result["files"]["pivot"] = align.pivot or ref
        result["alignment"] = alignment.statistics
    if output:
        atomic_write_text(output, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return result
