"""``contextual-mt attribute``: context-sensitive target tokens (CTI) and the context tokens they
rely on (CCI), the method of Sarti et al. (2024, PECoRe), batched over a corpus.

1. CTI: every target token is scored with and without context in batched passes (P-CXMI and
   KL(p_C || p_A)); tokens of the chosen metric above mean + λ·std over the run (or the top k
   per sentence) are selected (``selection``).
2. CCI: for each selected token, the contrast between the contextual prediction and the
   non-contextual one (``--contrast foil``: log p_C(y) - log p_C(ỹ), ỹ the no-context choice;
   ``logprob``: log p_C(y)) is attributed to every context token (saliency, input x gradient,
   or attention); each sentence is read once, its selected tokens' gradients taken from
   backward passes of that one graph (``gradients``); cues above mean + λ·std are kept.

Records stream to ``OUTPUT.partial`` (fingerprinted; a rerun resumes from it, checking that
what it resumes agrees with this run's selection); records and summary appear together.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import ClassVar, Dict, List, Optional, Sequence, Tuple

import numpy as np
from tqdm import tqdm

from commandkit.documents import check_line_count, document_starts, read_docids
from commandkit.errors import check_number
from commandkit.options import check_required, group, option
from commandkit.outputs import outputs
from commandkit.text import file_sha256, read_lines
from contextual_mt.attribution.interface import CONTRASTS, METHODS, ContextToken, CueRequest, TokenContrast
from contextual_mt.attribution.selection import Rule, Statistics, select, significant, statistics
from contextual_mt.errors import Code, InputError, given
from contextual_mt.inference.batching import check_batching, length_batches
from contextual_mt.inference.decoding import DecodingOptions, beam_option
from contextual_mt.inference.interface import ModelSpec
from contextual_mt.inference.model_args import RESUME_HELP, ModelArgs, max_tokens_option, progress_option, resume_option
from contextual_mt.inference.registry import (
    gradient_spec,
    model_fingerprint,
    model_summary,
    open_attribution,
)
from contextual_mt.scored_corpus import (
    LOG_BASES,
    UNITS,
    check_log_base,
    check_references,
    no_context_error,
    parse_shard,
    read_scored_corpus,
    shard_lines,
    summary_path,
    write_records,
)
from contextual_mt.stage_record import PartialFile, partial_path, remove_partial, resumable_records

logger = logging.getLogger(__name__)

METRICS = ("kl", "pcxmi")
SCOPES = ("corpus", "sentence")
EOS = "</s>"


CTI = "context-sensitive tokens (CTI)"
CCI = "contextual cues (CCI)"
TARGET = "target"  # the mutually exclusive group: exactly one of --reference, --hypotheses, --translate


def _rule(name: str, std: Optional[float], top_k: Optional[int]) -> Rule:
    """The selection rule: λ (default 1) or top k, not both (one would be ignored)."""
    if std is not None and top_k is not None:
        raise InputError(f"give --{name}-std or --{name}-top-k, not both", code=Code.OPTIONS_CONFLICT)
    return Rule(top_k=top_k) if top_k is not None else Rule(std if std is not None else Rule().std)


@dataclass
class CtiRuleArgs:
    """``cti``: which target tokens are selected, as the command line gives it."""

    cti_std: Optional[float] = option(
        group=CTI,
        help="λ: a token is selected when its score exceeds "
        f"mean + λ·std over the run's tokens read with context (default {Rule.std:g})",
    )
    cti_top_k: Optional[int] = option(group=CTI, help="instead: the k highest-scoring tokens of each sentence")

    def rule(self) -> Rule:
        return _rule("cti", self.cti_std, self.cti_top_k)


@dataclass
class CueRuleArgs:
    """``cci``: which context tokens are cues, as the command line gives it."""

    cue_std: Optional[float] = option(
        group=CCI,
        help="λ: a context token is a cue when its score "
        "exceeds mean + λ·std over the context tokens of that target token (default "
        f"{Rule.std:g})",
    )
    cue_top_k: Optional[int] = option(group=CCI, help="instead: the k highest-scoring context tokens")

    def rule(self) -> Rule:
        return _rule("cue", self.cue_std, self.cue_top_k)


@dataclass
class TranslateFirstArgs:
    """``translate``: translate the source first (``--translate``, ``--beam``), as the command line gives it."""

    translate: bool = option(
        action="store_true",
        default=False,
        exclusive=TARGET,
        help="translate the source first with the same model (predicted target context, "
        "--beam), then attribute its translations",
    )
    beam: int = beam_option(help="with --translate")

    def decoding(self) -> Optional[DecodingOptions]:
        if self.beam != DecodingOptions.beam and not self.translate:
            raise InputError(
                "--beam goes with --translate (the translations attribute makes)", code=Code.OPTIONS_CONFLICT
            )
        return DecodingOptions(beam=self.beam) if self.translate else None


@dataclass
class AttributeOptions:
    """``contextual-mt attribute``. Exactly one of ``reference`` (forced decoding of the
    references), ``hypotheses`` (the model's own translations, as its target context too) and
    ``translate`` (translate the source first with the same loaded model, then as hypotheses)."""

    # made from the model options (contextual_mt.api.model_spec)
    model: ModelSpec = group(ModelArgs, last=True, given=True)
    source: str = option(required=True, help="source text, one sentence per line")
    docids: str = option(required=True, help="document id of each line (a document: equal consecutive ids)")
    output: str = option(required=True, help="JSONL, one record per sentence (a .summary.json is written beside it)")
    reference: Optional[str] = option(
        exclusive=TARGET,
        exclusive_required=True,
        after="source",
        help="reference translations: scored by forced decoding",
    )
    hypotheses: Optional[str] = option(
        exclusive=TARGET,
        after="source",
        help="the model's own translations (`contextual-mt "
        "translate`): scored, and read as target context, as the model produced them",
    )
    # how to translate (--translate); None: a file is given
    translate: Optional[DecodingOptions] = group(TranslateFirstArgs, make=TranslateFirstArgs.decoding, after="source")
    cti_metric: str = option(
        choices=METRICS,
        default="kl",
        group=CTI,
        help="what selects tokens: KL(p_C || p_A) of the next-token distributions, or P-CXMI (both are written)",
    )
    cti: Rule = group(CtiRuleArgs, make=CtiRuleArgs.rule)
    cti_scope: str = option(
        choices=SCOPES,
        default="corpus",
        group=CTI,
        help="the tokens whose mean and std set the threshold: the whole run (corpus, default) or "
        "each sentence (sentence: as per-example tools such as Inseq's attribute-context)",
    )
    method: str = option(
        choices=METHODS,
        default="saliency",
        group=CCI,
        help="saliency: |gradient| of the input embedding; input_x_gradient: |embedding x gradient|; "
        "attention: last decoder layer, mean over heads (no backward pass)",
    )
    contrast: str = option(
        choices=CONTRASTS,
        default="foil",
        group=CCI,
        help="what is attributed: foil = log p_C(y) - log p_C(ỹ), ỹ the no-context prediction "
        "(its second choice when it is y); logprob = log p_C(y)",
    )
    cci: Rule = group(CueRuleArgs, make=CueRuleArgs.rule)
    log_base: str = option(choices=["e", "2"], default="e", help="units of P-CXMI and KL: e = nats (default), 2 = bits")
    shard: Optional[str] = option(
        empty_ok=True,
        help="i/n: the i-th of n parts of the documents (with --cti-scope sentence or "
        "--cti-top-k: the corpus threshold would be each shard's own)",
    )
    batch_size: int = option(default=16, help="sentences per batch of records")
    # padded tokens per forward (--hf-model: 1024 CPU, 8192 GPU; fairseq 4096); a backward pass of several
    # slots counts each slot's tokens; a sentence over it is read alone, with activation checkpointing
    max_tokens: Optional[int] = max_tokens_option()
    resume: bool = resume_option(RESUME_HELP, "--no-resume")
    progress: bool = progress_option()

    # the options of the attribution method (`make attribute`'s ATTRIBUTE_ARGS)
    METHOD_FIELDS: ClassVar[Tuple[str, ...]] = (
        "cti_metric",
        "cti",
        "cti_scope",
        "method",
        "contrast",
        "cci",
        "log_base",
    )

    def __post_init__(self) -> None:
        check_required(self)
        self.model = gradient_spec(self.model)  # fairseq: float32 (what the fingerprint and summary name)
        if [self.reference, self.hypotheses, self.translate].count(None) != 2:
            raise InputError(
                "give exactly one of --reference (forced decoding of the references), "
                "--hypotheses (the model's own translations) and --translate (translate first)",
                code=Code.OPTIONS_CONFLICT,
            )
        if self.cti_metric not in METRICS:
            raise InputError(
                f"--cti-metric must be one of {', '.join(METRICS)} (got {self.cti_metric!r})", code=Code.OPTION_VALUE
            )
        if self.cti_scope not in SCOPES:
            raise InputError(
                f"--cti-scope must be one of {', '.join(SCOPES)} (got {self.cti_scope!r})", code=Code.OPTION_VALUE
            )
        if self.method not in METHODS:
            raise InputError(
                f"--method must be one of {', '.join(METHODS)} (got {self.method!r})", code=Code.OPTION_VALUE
            )
        if self.contrast not in CONTRASTS:
            raise InputError(
                f"--contrast must be one of {', '.join(CONTRASTS)} (got {self.contrast!r})", code=Code.OPTION_VALUE
            )
        if self.method == "attention" and self.contrast != AttributeOptions.contrast:
            raise InputError(
                "--method attention reads attention weights, not a contrast: --contrast applies "
                "to the gradient methods only",
                code=Code.OPTIONS_CONFLICT,
            )
        for flag, rule in (("--cti", self.cti), ("--cue", self.cci)):
            check_number(f"{flag}-std", rule.std, minimum=-10, maximum=10)
            check_number(f"{flag}-top-k", rule.top_k, minimum=1, integer=True, optional=True)
        check_log_base(self.log_base)
        check_batching(self.batch_size, self.max_tokens)
        parse_shard(self.shard)
        if self.shard is not None and self.cti_scope == "corpus" and self.cti.top_k is None:
            raise InputError(
                "--shard with the corpus CTI threshold would select by each shard's own mean and "
                "std: give --cti-scope sentence or --cti-top-k K (the same rule in every shard)",
                code=Code.OPTIONS_CONFLICT,
            )
        if self.model.source_context_size == 0 and self.model.target_context_size == 0:
            raise no_context_error(self.model.path, None, "attribute")

    @property
    def target(self) -> Optional[str]:
        """The file of the scored targets (None: translated here)."""
        return self.reference if self.reference is not None else self.hypotheses

    @property
    def target_kind(self) -> str:
        return "reference" if self.reference is not None else "hypotheses" if self.hypotheses else "translation"


def attribute_fingerprint(options: AttributeOptions) -> Dict:
    """Everything the records depend on, by content, computed without loading the model."""
    i, n = parse_shard(options.shard)
    target = (
        file_sha256(options.target)
        if options.target is not None
        # what the translations depend on
        else {k: getattr(options.translate, k) for k in ("beam", "lenpen", "max_len_a", "max_len_b")}
    )
    return {
        "source": file_sha256(options.source),
        options.target_kind: target,
        "docids": file_sha256(options.docids),
        **model_fingerprint(options.model),
        "cti_metric": options.cti_metric,
        "cti_rule": [options.cti.std, options.cti.top_k],
        "cti_scope": options.cti_scope,
        "method": options.method,
        "contrast": None if options.method == "attention" else options.contrast,
        "cue_rule": [options.cci.std, options.cci.top_k],
        "log_base": options.log_base,
        "shard": f"{i}/{n}",
    }


def current_attribution(options: AttributeOptions) -> Optional[Dict]:
    """OUTPUT's summary when OUTPUT was made from these inputs and options (its fingerprint), else None."""
    from contextual_mt.stage_record import SummaryRecord

    record = SummaryRecord(options.output, summary_path(options.output), "sentences")
    return record.current(attribute_fingerprint(options))


def run_attribute(options: AttributeOptions) -> Dict:
    """File-level entry point; returns the summary. Nothing is written on failure but the
    fingerprinted ``OUTPUT.partial`` that a rerun resumes from."""
    with outputs(options.output, summary_path(options.output)):
        summary = _run(options)
    remove_partial(options.output)
    return summary


def _run(options: AttributeOptions) -> Dict:
    if options.translate is None:
        sources, targets, ids = read_scored_corpus(
            options.source,
            given(options.target, "--reference or --hypotheses"),
            options.docids,
            "hypothesis" if options.hypotheses else "reference",
        )
    else:
        sources, ids = read_lines(options.source), read_docids(options.docids)
        check_line_count(ids, options.docids, len(sources), options.source)
        check_references(sources, options.source, "source")  # as read_scored_corpus does
    mine = shard_lines(ids, options.shard, options.docids)
    partial = partial_path(options.output)
    fp = attribute_fingerprint(options)
    done = resumable_records(partial, fp, (i + 1 for i in mine), command="attribute") if options.resume else []
    backend = open_attribution(options.model, options.max_tokens)
    if options.translate is not None:
        targets = _translations(backend, options, sources, ids)
    starts = document_starts(list(ids))
    try:
        pieces = backend.load(
            sources, targets, starts, None, names=(options.source, options.target or "the translation")
        )
    except InputError as e:
        if options.translate is None:
            raise
        raise InputError(
            f"{e} (with --translate, the line is read with the model's own translation, which may be "
            "what is too long here: give --hypotheses made with a length limit)",
            code=e.code,
        ) from None
    src_k, tgt_k = backend.context_sentences()
    if not (backend.source_context_size or backend.target_context_size):
        raise no_context_error(options.model.path, backend.trained_context, "attribute")
    scale = LOG_BASES[options.log_base]

    # CTI over every sentence of the run (the statistics need them all; two forward passes)
    contrasts: Dict[int, TokenContrast] = {}
    order = sorted(mine, key=lambda i: (backend.length(i), i))
    bar = tqdm(total=len(order), unit="sent", desc="CTI", disable=not options.progress)
    for chunk in length_batches(order, backend.length, 4 * options.batch_size, None):
        contrasts.update(backend.contrast(chunk))
        bar.update(len(chunk))
    bar.close()
    cti = {i: _cti_values(contrasts[i], scale) for i in mine}
    with_context = [i for i in mine if src_k[i] or tgt_k[i]]
    if not with_context:  # every sentence starts a document: nothing can depend on context
        raise InputError(
            f"{options.docids}: none of the {len(mine)} sentences has a sentence before it in its "
            "document (each is a document's first): there is no context to attribute",
            code=Code.EMPTY,
        )
    stats = statistics([cti[i][options.cti_metric] for i in with_context], options.cti)
    # corpus: one threshold over the run; sentence: each sentence's own (as per-example tools do)
    threshold = (lambda i: stats.threshold) if options.cti_scope == "corpus" else (lambda i: None)
    has_context = set(with_context)
    selected = {
        i: sorted(select(cti[i][options.cti_metric], options.cti, threshold(i), exclude=[len(cti[i]["kl"]) - 1]))
        if i in has_context
        else []
        for i in mine
    }

    finished = {r["line"] - 1: r for r in done}
    for i, r in finished.items():
        _check_resumed(r, selected[i], [*list(pieces[i]), EOS], targets[i], partial)
    if done:
        logger.warning("%s: resuming, %d of %d sentences already attributed", partial, len(finished), len(mine))
    todo = [i for i in order if i not in finished]
    writer, new = PartialFile(partial, fp, done), []
    bar = tqdm(total=len(todo), unit="sent", desc=f"CCI ({options.method})", disable=not options.progress)
    try:
        for chunk in length_batches(todo, backend.length, options.batch_size, None):
            requests = [
                CueRequest(i, t, int(contrasts[i].foil[t]) if options.contrast == "foil" else None)
                for i in chunk
                for t in selected[i]
            ]
            scores = backend.cue_scores(requests, options.method) if requests else []
            by_sentence: Dict[int, List[Tuple[int, np.ndarray]]] = {}
            for request, s in zip(requests, scores, strict=True):
                by_sentence.setdefault(request.index, []).append((request.token, s))
            records = [
                _record(
                    i,
                    ids,
                    starts,
                    sources,
                    targets,
                    pieces[i],
                    cti[i],
                    selected[i],
                    backend.context_tokens(i),
                    by_sentence.get(i, []),
                    options.cci,
                )
                for i in chunk
            ]
            writer.write(records)
            new.extend(records)
            bar.update(len(chunk))
    finally:
        writer.close()
        bar.close()
    records = sorted(list(finished.values()) + new, key=lambda r: r["line"])
    passes = getattr(backend, "passes", None)
    if passes is not None and passes.forwards:
        # how the gradients were computed: for who tunes --max-tokens (also the summary's cci.passes)
        logger.debug(
            "CCI: %d sentences read in %d forward passes (%d with activation checkpointing: a sentence over "
            "--max-tokens %s), %d backward passes of at most %d slots",
            passes.sentences,
            passes.forwards,
            passes.checkpointed,
            backend.max_tokens,
            passes.backward,
            passes.widest,
        )
        if passes.checkpointed:  # the one thing a user may act on: it was slower than it could be
            logger.info(
                "%d sentences longer than --max-tokens %s were each read alone, recomputing the model's "
                "intermediate results to fit in memory: slower, the same numbers (a larger --max-tokens, "
                "memory allowing, reads them faster)",
                passes.checkpointed,
                backend.max_tokens,
            )
    summary = _summary(options, records, stats, backend, fp)
    write_records(options.output, records, summary)
    return summary


def _translations(backend, options: AttributeOptions, sources: List[str], ids: List[str]) -> List[str]:
    """The model's own translations of the whole corpus (a shard's sentences read the
    translations of the sentences before them)."""
    targets = backend.translator(options.translate).translate(
        sources, ids, progress=options.progress, source_name=options.source
    )
    empty = [n for n, t in enumerate(targets, start=1) if not t.strip()]
    if empty:
        raise InputError(
            f"{options.source}:{empty[0]}: the model translated this line to nothing ({len(empty)} "
            "such lines): there is no token to attribute; translate with other settings "
            "and give the file with --hypotheses",
            code=Code.EMPTY,
        )
    return targets


def _cti_values(c: TokenContrast, scale: float) -> Dict[str, np.ndarray]:
    return {"pcxmi": (c.log_prob_context - c.log_prob_no_context) / scale, "kl": c.kl / scale}


def _record(
    i: int,
    ids: Sequence[str],
    starts: np.ndarray,
    sources: Sequence[str],
    targets: Sequence[str],
    pieces: Sequence[str],
    cti: Dict[str, np.ndarray],
    selected: List[int],
    context: List[ContextToken],
    scores: List[Tuple[int, np.ndarray]],
    rule: Rule,
) -> Dict:
    sentences: Dict[Tuple[str, int], List[str]] = {}
    for c in context:
        sentences.setdefault((c.side, c.sentence), []).append(c.token)
    cues = []
    for t, s in scores:
        for k in select(s, rule):
            c = context[k]
            cues.append(
                {
                    "target": t,
                    "side": c.side,
                    "sentence": c.sentence,
                    "position": c.position,
                    "token": c.token,
                    "score": significant(float(s[k])),
                }
            )
    return {
        "doc": ids[i],
        "sentence": int(i - starts[i]),
        "line": i + 1,
        "source": sources[i],
        "target": targets[i],
        "tokens": [*list(pieces), EOS],
        "cti": {m: [significant(float(v)) for v in cti[m]] for m in METRICS},
        "selected": selected,
        "context": [{"side": side, "sentence": s, "tokens": toks} for (side, s), toks in sentences.items()],
        "cues": cues,
    }


def _check_resumed(r: Dict, selected: List[int], pieces: List[str], target: str, partial: str) -> None:
    """A resumed record must be this run's: same target and tokens (with --translate, the same
    translation), same selection, cues that point into its context. Anything else is a stale or
    damaged file."""
    where = f"{partial}: the record of line {r.get('line')}"
    tokens, n_tokens = r.get("tokens"), len(pieces)
    if not isinstance(tokens, list) or len(tokens) != n_tokens:
        raise InputError(
            f"{where} has {len(tokens) if isinstance(tokens, list) else 'no'} tokens, this run "
            f"{n_tokens}; rerun with --overwrite to discard the file",
            code=Code.MISMATCH,
        )
    if tokens != pieces or r.get("target") != target:
        raise InputError(
            f"{where} is of another target text than this run's; rerun with --overwrite to discard the file",
            code=Code.MISMATCH,
        )
    sel = r.get("selected")
    if not isinstance(sel, list) or any(not isinstance(t, int) or not 0 <= t < n_tokens for t in sel):
        raise InputError(
            f"{where}: a selected token index is out of range (0..{n_tokens - 1}); rerun with "
            "--overwrite to discard the file",
            code=Code.FORMAT,
        )
    if sel != selected:
        raise InputError(
            f"{where}: selects tokens {sel}, this run {selected}; rerun with --overwrite", code=Code.MISMATCH
        )
    lengths = {(c.get("side"), c.get("sentence")): len(c.get("tokens", [])) for c in r.get("context", [])}
    for cue in r.get("cues", []):
        n = lengths.get((cue.get("side"), cue.get("sentence")))
        if (
            cue.get("target") not in sel
            or n is None
            or not isinstance(cue.get("position"), int)
            or not 0 <= cue["position"] < n
        ):
            raise InputError(
                f"{where}: a cue points outside the selected tokens or the context "
                f"({cue}); rerun with --overwrite to discard the file",
                code=Code.FORMAT,
            )


def _summary(options: AttributeOptions, records: List[Dict], stats: Statistics, backend, fp: Dict) -> Dict:
    unit = UNITS[options.log_base]
    return {
        **model_summary(options.model),
        "source_context_size": backend.source_context_size,
        "target_context_size": backend.target_context_size,
        "scored": options.target_kind,
        "target_file": options.target,
        **({"decoding": fp[options.target_kind]} if options.translate is not None else {}),
        "sentences": len(records),
        "tokens": sum(len(r["tokens"]) for r in records),
        "selected_tokens": sum(len(r["selected"]) for r in records),
        "cues": sum(len(r["cues"]) for r in records),
        "cti": {
            "metric": options.cti_metric,
            "unit": unit,
            "rule": options.cti.describe(),
            "scope": options.cti_scope,
            **stats.as_dict(),
            "statistics_over": (
                "tokens of the sentences read with context, EOS included (never selected)"
                if options.cti_scope == "corpus"
                else "each sentence's own tokens, EOS included (never selected); mean, std and "
                "threshold here are the run's, for reference"
            ),
        },
        "cci": {
            "method": options.method,
            "contrast": None if options.method == "attention" else options.contrast,
            "rule": options.cci.describe(),
            # how it was computed: forwards (one per batch of sentences), those with activation
            # checkpointing, backward passes and the most slots (attributed tokens) in one
            **(
                {"passes": backend.passes.as_dict(), "max_tokens": backend.max_tokens}
                if hasattr(backend, "passes")
                else {}
            ),
        },
        "shard": fp["shard"],
        "records": options.output,
        "fingerprint": fp,
    }


def summary_line(summary: Dict, output: str) -> str:
    c = summary["cti"]
    if c["rule"].startswith("top"):
        rule = f"{c['metric']}, {c['rule']} per sentence"
    elif c.get("scope", "corpus") == "corpus":
        rule = f"{c['metric']} > {c['threshold']:.4g} {c['unit']}"
    else:
        rule = f"{c['metric']}, {c['rule']} per sentence"
    return (
        f"{summary['sentences']} sentences, {summary['selected_tokens']} of {summary['tokens']} tokens "
        f"context-sensitive ({rule}), {summary['cues']} cues "
        f"({summary['cci']['method']}); wrote {output}"
    )
