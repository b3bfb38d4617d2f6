"""``muda eval`` as a library call, ``run_eval(EvalOptions(...))``: tag the reference (unless its
tags are given) and every system output in its own document context, then score each system
(per-tag word P/R/F, corpus BLEU, COMET when a model is given) and compare every pair of systems
by paired bootstrap. Writes the JSON result and the plot when asked."""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from itertools import combinations
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from muda.annotators.base import Annotator
from muda.errors import InputError
from muda.evaluation.metrics import bleu_metric, bleu_with_document_statistics, comet_document_sums, \
    comet_predict, load_comet
from muda.evaluation.significance import bleu_bootstrap, bootstrap_samples, mean_bootstrap, paired_bootstrap
from muda.evaluation.words import document_counts, present_tags, prf, scores
from muda.formats.hypotheses import read_hypotheses
from muda.formats.tags import TagDump, read_tags
from muda.io import atomic_write_lines, atomic_write_text, group_by_document, output_exists, read_docids, read_lines, readable_path
from muda.phenomena import phenomenon_names
from muda.tagger import TagOptions, annotation_paths, summary_path, tag_files, text_hash


@dataclass(frozen=True)
class EvalOptions:
    """The inputs of ``run_eval`` (the options of ``muda eval``)."""
    src: str
    ref: str
    docids: str
    tgt_lang: str
    hyps: Sequence[str]
    output: Optional[str] = None  # the JSON result
    ref_tags: Optional[str] = None  # tags of the reference from `muda tag`; None: tag it now
    src_conllu: Optional[str] = None
    ref_conllu: Optional[str] = None
    ref_alignments: Optional[str] = None
    hyp_conllu: Optional[Sequence[str]] = None  # one per hypothesis file
    hyp_alignments: Optional[Sequence[str]] = None  # one per hypothesis file
    names: Optional[Sequence[str]] = None  # default: the hypothesis file names
    bootstrap: int = 1000  # paired bootstrap resamples (0: none)
    seed: int = 1
    comet_model: Optional[str] = None
    plot: Optional[str] = None  # PNG bar chart
    work_dir: Optional[str] = None  # tags of each system; default: beside the output, or a temp dir


def check_ref_tags(path: str, dump: TagDump, refs: Sequence[str]) -> None:
    """A tags file must come from this reference: by the content hash its summary records, or
    (without a summary) by its tokens."""
    meta_path = summary_path(path)
    if output_exists(meta_path):
        with open(readable_path(meta_path), encoding="utf-8") as f:
            recorded = json.load(f).get("tgt_sha256")
        if recorded and recorded != text_hash(refs):
            raise InputError(f"{path}: made from a different reference (content hash {recorded[:12]} in "
                             f"{meta_path}, the reference's is {text_hash(refs)[:12]}); tag this reference again")
    flat = [s for doc in dump for s in doc]
    if len(flat) != len(refs):
        raise InputError(f"{path}: has {len(flat)} sentences but the reference has {len(refs)} lines")
    for n, (s, ref) in enumerate(zip(flat, refs), start=1):
        if "".join(t["token"] for t in s).replace(" ", "") != "".join(ref.split()):
            raise InputError(f"{path}: sentence {n} does not match line {n} of the reference; made from another "
                             f"reference?")


def run_eval(options: EvalOptions, annotators: Optional[Annotator] = None) -> Dict:
    """Evaluate the systems ``options.hyps``; returns the result that ``output`` gets as JSON."""
    o = options
    srcs, refs, ids = read_lines(o.src), read_lines(o.ref), read_docids(o.docids)
    if len(refs) != len(srcs):
        raise InputError(f"{o.ref}: has {len(refs)} lines but {o.src} has {len(srcs)}")
    if len(ids) != len(srcs):
        raise InputError(f"{o.docids}: has {len(ids)} lines but {o.src} has {len(srcs)}")
    names = list(o.names) if o.names else [os.path.basename(h) for h in o.hyps]
    if len(set(names)) != len(names):
        raise InputError(f"system names must differ: {', '.join(names)} (use --names)")
    for option, files in (("--hyp-conllu", o.hyp_conllu), ("--hyp-alignments", o.hyp_alignments)):
        if files and len(files) != len(o.hyps):
            raise InputError(f"{option}: {len(files)} files for {len(o.hyps)} hypotheses")
    hyp_lines = [read_hypotheses(h, len(refs)) for h in o.hyps]  # all inputs checked before any tagging
    # no directory is made here: the first file written makes it, so a failure leaves nothing behind
    work = o.work_dir or (os.path.splitext(o.output)[0] + ".work" if o.output
                          else tempfile.mkdtemp(prefix="muda-eval-"))
    ref_tags, ref_docs = _reference_tags(o, refs, ids, work, annotators)
    # the source side the reference was tagged with serves every hypothesis
    src_conllu = o.src_conllu or annotation_paths(ref_tags)["src_conllu"]
    if not output_exists(src_conllu):
        src_conllu = o.src_conllu
    hyp_docs = [_hypothesis_tags(o, k, name, lines, ids, work, src_conllu, annotators)
                for k, (name, lines) in enumerate(zip(names, hyp_lines))]
    tags = present_tags([ref_docs, *hyp_docs], phenomenon_names())
    counts = [document_counts(ref_docs, h, tags) for h in hyp_docs]
    result: Dict = {"reference": o.ref, "reference_tags": ref_tags, "language": o.tgt_lang, "tags": tags,
                    "bootstrap": o.bootstrap, "seed": o.seed, "systems": {}, "comparisons": []}
    bleu, bleu_stats = bleu_with_document_statistics(hyp_lines, refs, ids)
    for k, name in enumerate(names):
        result["systems"][name] = {"hypotheses": o.hyps[k], "bleu": bleu[k],
                                   "tags": {t: vars(s) for t, s in scores(counts[k], tags).items()}}
    comet_docs = []
    if o.comet_model:
        model = load_comet(o.comet_model)  # once, for every system
        for k, name in enumerate(names):
            out = comet_predict(model, srcs, hyp_lines[k], refs, o.comet_model)
            result["systems"][name]["comet"] = out["score"]
            comet_docs.append(comet_document_sums(out["segments"], ids))
    if o.bootstrap and len(o.hyps) > 1:
        result["comparisons"] = _compare(names, tags, counts, bleu_stats, comet_docs,
                                         bootstrap_samples(len(ref_docs), o.bootstrap, o.seed))
    if o.output:
        atomic_write_text(o.output, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    if o.plot:
        from muda.evaluation.plot import plot_fmeasure

        plot_fmeasure(o.plot, result)
    return result


def _reference_tags(o: EvalOptions, refs: Sequence[str], ids: Sequence[str], work: str,
                    annotators: Optional[Annotator]) -> Tuple[str, TagDump]:
    """The reference's tags file (given, or tagged now into ``work``) and its tags by document."""
    if o.ref_tags:
        ref_tags = o.ref_tags
        dump = read_tags(ref_tags)
        check_ref_tags(ref_tags, dump, refs)
    else:
        ref_tags = os.path.join(work, "reference.tags.json")
        tag_files(TagOptions(o.src, o.ref, o.docids, o.tgt_lang, ref_tags, src_conllu=o.src_conllu,
                             tgt_conllu=o.ref_conllu, alignments=o.ref_alignments), annotators, progress=False)
        dump = read_tags(ref_tags)
    return ref_tags, _by_document(dump, ids)


def _hypothesis_tags(o: EvalOptions, k: int, name: str, lines: Sequence[str], ids: Sequence[str], work: str,
                     src_conllu: Optional[str], annotators: Optional[Annotator]) -> TagDump:
    """System ``k`` tagged in its own document context (its text and tags go into ``work``)."""
    text = os.path.join(work, f"{name}.txt")
    atomic_write_lines(text, lines)
    out = os.path.join(work, f"{name}.tags.json")
    tag_files(TagOptions(o.src, text, o.docids, o.tgt_lang, out, src_conllu=src_conllu,
                         tgt_conllu=o.hyp_conllu[k] if o.hyp_conllu else None,
                         alignments=o.hyp_alignments[k] if o.hyp_alignments else None), annotators, progress=False)
    return _by_document(read_tags(out), ids)


def _by_document(dump: TagDump, ids: Sequence[str]) -> TagDump:
    """A tags dump regrouped into the documents of ``ids`` (a given reference dump may group
    its sentences otherwise)."""
    return group_by_document([s for d in dump for s in d], ids)


def _compare(names: Sequence[str], tags: Sequence[str], counts: Sequence[np.ndarray],
             bleu_stats: Sequence[np.ndarray], comet_docs: Sequence[np.ndarray], samples: np.ndarray) -> List[Dict]:
    """Paired bootstrap p-values for every pair of systems, all on the same resamples."""
    metric = bleu_metric()
    comparisons = []
    for a, b in combinations(range(len(names)), 2):
        p = {m: paired_bootstrap(counts[a], counts[b], samples, metric=lambda c, i=i: prf(c)[..., i])
             for i, m in enumerate(("precision", "recall", "f"))}
        comparison = {"a": names[a], "b": names[b]}
        if comet_docs:
            comparison["comet_p"] = mean_bootstrap(comet_docs[a], comet_docs[b], samples)
        comparisons.append({
            **comparison,
            "bleu_p": bleu_bootstrap(bleu_stats[a], bleu_stats[b], samples, metric),
            "tags": {t: {m: float(p[m][j]) for m in p} for j, t in enumerate(tags)}})
    return comparisons


__all__ = ["EvalOptions", "run_eval", "check_ref_tags"]
