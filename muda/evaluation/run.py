"""``muda eval``: per-tag word P/R/F of each system against the tagged reference, corpus BLEU
(and COMET when a model is given), paired bootstrap between every pair of systems."""
from __future__ import annotations

import json
import os
import tempfile
from itertools import combinations
from typing import Dict, List, Optional, Sequence

import numpy as np

from muda.errors import InputError
from muda.evaluation.words import NO_TAG, bleu_bootstrap, bootstrap_samples, document_counts, mean_bootstrap, \
    paired_bootstrap, present_tags, prf, scores
from muda.formats.hypotheses import read_hypotheses
from muda.io import atomic_write_lines, atomic_write_text, read_docids, read_lines
from muda.languages import PHENOMENA
from muda.formats.tags import TagDump, read_tags
from muda.tagger import annotation_paths, tag_files, text_hash


def check_ref_tags(path: str, dump: TagDump, refs: Sequence[str]) -> None:
    """A tags file must come from this reference: by the content hash its summary records, or
    (without a summary) by its tokens."""
    stem = path[:-5] if path.endswith(".json") else path
    meta_path = stem + ".summary.json"
    if os.path.exists(meta_path):
        with open(meta_path, encoding="utf-8") as f:
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


def _split_by_docs(dump_flat: List, docids: Sequence[str]) -> TagDump:
    docs, prev = [], None
    for sent, d in zip(dump_flat, docids):
        if d != prev:
            docs.append([])
            prev = d
        docs[-1].append(sent)
    return docs


def run_eval(src: str, ref: str, docids: str, tgt_lang: str, hyps: Sequence[str], output: Optional[str] = None,
             ref_tags: Optional[str] = None, src_conllu: Optional[str] = None, ref_conllu: Optional[str] = None,
             ref_alignments: Optional[str] = None, hyp_conllu: Optional[Sequence[str]] = None,
             hyp_alignments: Optional[Sequence[str]] = None, annotators=None, names: Optional[Sequence[str]] = None,
             bootstrap: int = 1000, seed: int = 1, comet_model: Optional[str] = None, plot: Optional[str] = None,
             work_dir: Optional[str] = None) -> Dict:
    srcs, refs, ids = read_lines(src), read_lines(ref), read_docids(docids)
    if len(refs) != len(srcs):
        raise InputError(f"{ref}: has {len(refs)} lines but {src} has {len(srcs)}")
    if len(ids) != len(srcs):
        raise InputError(f"{docids}: has {len(ids)} lines but {src} has {len(srcs)}")
    names = list(names) if names else [os.path.basename(h) for h in hyps]
    if len(set(names)) != len(names):
        raise InputError(f"system names must differ: {', '.join(names)} (use --names)")
    for option, files in (("--hyp-conllu", hyp_conllu), ("--hyp-alignments", hyp_alignments)):
        if files and len(files) != len(hyps):
            raise InputError(f"{option}: {len(files)} files for {len(hyps)} hypotheses")
    hyp_lines = [read_hypotheses(h, len(refs)) for h in hyps]  # all inputs checked before any tagging
    work = work_dir or (os.path.splitext(output)[0] + ".work" if output else tempfile.mkdtemp(prefix="muda-eval-"))
    os.makedirs(work, exist_ok=True)
    common = dict(src_conllu=src_conllu, annotators=annotators, progress=False)
    if ref_tags:
        ref_dump = read_tags(ref_tags)
        check_ref_tags(ref_tags, ref_dump, refs)
    else:
        ref_tags = os.path.join(work, "reference.tags.json")
        tag_files(src, ref, docids, tgt_lang, ref_tags, tgt_conllu=ref_conllu, alignments=ref_alignments, **common)
        ref_dump = read_tags(ref_tags)
    # the source side the reference was tagged with serves every hypothesis
    src_annotations = src_conllu or annotation_paths(ref_tags)["src_conllu"]
    if os.path.exists(src_annotations):
        common["src_conllu"] = src_annotations
    ref_docs = _split_by_docs([s for d in ref_dump for s in d], ids)
    hyp_docs = []
    for k, (name, lines) in enumerate(zip(names, hyp_lines)):
        text = os.path.join(work, f"{name}.txt")
        atomic_write_lines(text, lines)
        out = os.path.join(work, f"{name}.tags.json")
        tag_files(src, text, docids, tgt_lang, out, tgt_conllu=hyp_conllu[k] if hyp_conllu else None,
                  alignments=hyp_alignments[k] if hyp_alignments else None, **common)
        hyp_docs.append(_split_by_docs([s for d in read_tags(out) for s in d], ids))
    tags = present_tags([ref_docs, *hyp_docs], PHENOMENA)
    counts = [document_counts(ref_docs, h, tags) for h in hyp_docs]
    result: Dict = {"reference": ref, "reference_tags": ref_tags, "language": tgt_lang, "tags": tags,
                    "bootstrap": bootstrap, "seed": seed, "systems": {}, "comparisons": []}
    bleu, bleu_stats = _bleu(hyp_lines, refs, ids)
    for k, name in enumerate(names):
        result["systems"][name] = {"hypotheses": hyps[k], "bleu": bleu[k],
                                   "tags": {t: vars(s) for t, s in scores(counts[k], tags).items()}}
    comet_docs = []
    if comet_model:
        from contextual_mt.metrics import comet_predict, load_comet

        model = load_comet(comet_model)  # once, for every system
        starts = _doc_starts(ids)
        for k, name in enumerate(names):
            out = comet_predict(model, srcs, hyp_lines[k], refs, comet_model)
            result["systems"][name]["comet"] = out["score"]
            seg = np.asarray(out["segments"], dtype=np.float64)
            comet_docs.append(np.stack([[seg[a:b].sum(), b - a] for a, b in zip(starts, starts[1:])]))
    if bootstrap and len(hyps) > 1:
        samples = bootstrap_samples(len(ref_docs), bootstrap, seed)
        from sacrebleu.metrics import BLEU

        metric = BLEU()
        for a, b in combinations(range(len(hyps)), 2):
            p = {m: paired_bootstrap(counts[a], counts[b], samples, metric=lambda c, i=i: prf(c)[..., i])
                 for i, m in enumerate(("precision", "recall", "f"))}
            comparison = {"a": names[a], "b": names[b]}
            if comet_docs:
                comparison["comet_p"] = mean_bootstrap(comet_docs[a], comet_docs[b], samples)
            result["comparisons"].append({
                **comparison,
                "bleu_p": bleu_bootstrap(bleu_stats[a], bleu_stats[b], samples, metric),
                "tags": {t: {m: float(p[m][j]) for m in p} for j, t in enumerate(tags)}})
    if output:
        atomic_write_text(output, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    if plot:
        from muda.evaluation.plot import plot_fmeasure

        plot_fmeasure(plot, result)
    return result


def _doc_starts(ids: Sequence[str]) -> List[int]:
    return [n for n in range(len(ids)) if n == 0 or ids[n] != ids[n - 1]] + [len(ids)]


def _bleu(hyps: Sequence[Sequence[str]], refs: Sequence[str], ids: Sequence[str]):
    """Corpus BLEU per system and per-document sufficient statistics for the bootstrap."""
    from sacrebleu.metrics import BLEU

    metric = BLEU()
    starts = _doc_starts(ids)
    scores_, stats = [], []
    for h in hyps:
        per_sentence = np.array(metric._extract_corpus_statistics(list(h), [list(refs)]), dtype=np.int64)
        per_doc = np.stack([per_sentence[a:b].sum(0) for a, b in zip(starts, starts[1:])])
        stats.append(per_doc)
        scores_.append(metric._compute_score_from_stats(list(per_sentence.sum(0))).score)
    return scores_, stats


def format_table(result: Dict) -> str:
    tags = result["tags"]
    names = list(result["systems"])
    width = max(12, *(len(n) for n in names))
    head = f"{'system':<{width}} {'BLEU':>6}" + (" COMET " if any("comet" in s for s in result["systems"].values()) else "")
    head += "".join(f" {t[:16]:>16}" for t in tags)
    lines = ["word f-measure per tag (precision/recall in the JSON)", head, "-" * len(head)]
    for name, s in result["systems"].items():
        row = f"{name:<{width}} {s['bleu']:6.2f}" + (f" {s['comet']:6.4f}" if "comet" in s else "")
        row += "".join(f" {s['tags'][t]['f']:16.3f}" for t in tags)
        lines.append(row)
    ref_counts = next(iter(result["systems"].values()))["tags"]
    lines.append(f"{'ref words':<{width}} {'':>6}" + "".join(f" {ref_counts[t]['ref_words']:16d}" for t in tags))
    for c in result["comparisons"]:
        sig = ", ".join(f"{t} {c['tags'][t]['f']:.3f}" for t in tags)
        comet = f"; COMET {c['comet_p']:.3f}" if "comet_p" in c else ""
        lines.append(f"{c['a']} vs {c['b']}: paired bootstrap p (BLEU {c['bleu_p']:.3f}{comet}; f-measure: {sig})")
    return "\n".join(lines)


__all__ = ["run_eval", "format_table", "check_ref_tags", "NO_TAG"]
