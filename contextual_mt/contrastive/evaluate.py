"""``contextual-mt contrastive``: score every candidate of a contrastive test set with one model
and write the scores file its authors' scorer reads, plus a summary with the accuracy.

A candidate's loss is the negative sum of the natural-log probabilities of its current target
sentence's tokens (EOS included), given the source and the candidate's own context; with
``normalize`` the per-token mean. Candidates are batched across groups, sorted by length and
source, so that the candidates of one source share its encoding. Finished candidates stream to
``SCORES.partial`` (resumed by a rerun made from the same inputs); the scores file and the summary
appear together at the end, and the accuracy is computed from the very numbers written. A
candidate listed twice in its group is scored once; both lines get its score.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from tqdm import tqdm

from commandkit.outputs import atomic_write_lines, atomic_write_text, check_distinct, outputs
from commandkit.text import check_input_file, file_sha256, read_lines
from contextual_mt.contrastive.formats import get_format
from contextual_mt.contrastive.sets import (
    ContrastiveSet,
    accuracy_by,
    blocks_right,
    check_groups,
    group_is_right,
    repeated_candidates,
)
from contextual_mt.errors import ContextualMTError
from contextual_mt.inference.batching import check_batching, length_batches
from contextual_mt.inference.interface import ContextPair, ModelSpec, PairScorer
from contextual_mt.inference.registry import family, model_fingerprint, model_summary, open_pair_scorer
from contextual_mt.stage_record import PartialFile, SummaryRecord, partial_path, remove_partial, resumable_records

logger = logging.getLogger(__name__)

DETOKENIZE = ("auto", "yes", "no")
LOSS = {
    False: "negative sum of the natural-log probabilities of the current target sentence's tokens, "
    "</s> included (lower = better)",
    True: "negative mean natural-log probability per token of the current target sentence, "
    "</s> included (lower = better)",
}


@dataclass
class ContrastiveOptions:
    """``contextual-mt contrastive``; validated when built, before any file is read."""

    model: ModelSpec  # a fairseq checkpoint (FairseqModelOptions) or a Hugging Face model (HFModelOptions)
    format: str
    input: str
    output: str  # the scores file, one loss per candidate in the authors' order
    summary: str  # JSON: accuracy overall and by category, settings
    context_files: Tuple[str, ...] = ()
    normalize: bool = False  # per-token mean instead of the sum
    detokenize: str = "auto"  # auto: a tokenized set is detokenized when --spm or --hf-model is given
    batch_size: int = 64  # candidates per batch
    max_tokens: Optional[int] = None  # (source or target, with context) tokens per batch
    resume: bool = True
    progress: bool = True
    skip_up_to_date: bool = False  # scores and summary already made from these inputs and options: keep them

    def __post_init__(self) -> None:
        get_format(self.format)
        check_batching(self.batch_size, self.max_tokens)
        if self.detokenize not in DETOKENIZE:
            raise ContextualMTError(f"--detokenize must be one of {', '.join(DETOKENIZE)} (got {self.detokenize!r})")
        self.context_files = tuple(self.context_files)
        check_distinct([("--output", self.output), ("--summary", self.summary)])
        inputs = {os.path.realpath(p) for p in (self.input, *self.context_files)}
        for flag, path in (("--output", self.output), ("--summary", self.summary)):
            if os.path.realpath(path) in inputs:
                raise ContextualMTError(f"{path}: {flag} would overwrite an input; write it elsewhere")

    @property
    def set_name(self) -> str:
        return os.path.splitext(os.path.basename(self.input))[0]


def read_set(o: ContrastiveOptions) -> ContrastiveSet:
    fmt = get_format(o.format)
    check_input_file(o.input, f"{o.format} test set")
    for path in o.context_files:
        check_input_file(path, "context file")
    groups = fmt.read(o.input, o.context_files)
    if not groups:
        raise ContextualMTError(f"{o.input}: no test instances")
    check_groups(groups)
    return ContrastiveSet(
        o.set_name,
        fmt.name,
        groups,
        fmt.rule,
        fmt.source_lang,
        fmt.target_lang,
        fmt.tokenized,
        fmt.scorer(o.input, o.output),
    )


def detokenizes(o: ContrastiveOptions, test_set: ContrastiveSet) -> bool:
    if o.detokenize == "auto":  # models that read raw text: --spm, and every Hugging Face model
        return test_set.tokenized and family(o.model).reads_raw_text(o.model)
    return o.detokenize == "yes"


def detokenized(pairs: Sequence[ContextPair], source_lang: str, target_lang: str) -> List[ContextPair]:
    """sacremoses detokenization of every sentence (each distinct text once)."""
    from sacremoses import MosesDetokenizer

    tools = {side: MosesDetokenizer(lang=lang) for side, lang in (("src", source_lang), ("tgt", target_lang))}
    cache: Dict[Tuple[str, str], str] = {}

    def detok(side: str, text: str) -> str:
        if (side, text) not in cache:
            cache[(side, text)] = tools[side].detokenize(text.split())
        return cache[(side, text)]

    return [
        ContextPair(
            detok("src", p.source),
            detok("tgt", p.target),
            tuple(detok("src", s) for s in p.source_context),
            tuple(detok("tgt", s) for s in p.target_context),
        )
        for p in pairs
    ]


def check_distinguishable(test_set: ContrastiveSet, backend: PairScorer) -> None:
    """Different candidate strings the model reads as the same tokens score exactly alike, and
    the group's decision would be the tie-breaking rule, not the model: refused, naming the
    first. A candidate listed twice string for string is legitimate (``repeated_candidates``)."""
    bad, at = [], 0
    for g in test_set.groups:
        seen: Dict = {}
        for k in range(len(g.candidates)):
            first = seen.setdefault(backend.pair_identity(at + k), k)
            if g.candidates[first] != g.candidates[k]:
                bad.append((g, first, k))
                break
        at += len(g.candidates)
    if bad:
        g, a, b = bad[0]
        raise ContextualMTError(
            f"{g.where}: candidates {a} and {b} are the same tokens to the model (different strings that differ only "
            f"in what its vocabulary cannot represent: a test set of another language or script?), so their scores "
            f"tie; {len(bad)} of {len(test_set.groups)} groups are like this"
        )


def repeats(test_set: ContrastiveSet) -> Dict[int, int]:
    """Candidates (0-based, over the whole set) that repeat one of their group string for string
    -> the first listing: scored once, so that the copies' scores are equal, not merely close."""
    copies, at = {}, 0
    for g in test_set.groups:
        copies.update({at + k: at + j for k, j in repeated_candidates(g).items()})
        at += len(g.candidates)
    return copies


def contrastive_fingerprint(o: ContrastiveOptions, detok: bool) -> Dict:
    """Everything the scores depend on, by content, computed without loading the model."""
    return {
        "format": o.format,
        "input": file_sha256(o.input),
        "context_files": [file_sha256(p) for p in o.context_files],
        **model_fingerprint(o.model),
        "detokenized": detok,
    }


def batches(backend: PairScorer, todo: Sequence[int], batch_size: int, max_tokens: Optional[int]) -> List[List[int]]:
    """Candidates sorted by length, then by source (candidates of one source side by side, so a
    batch encodes it once), cut into batches of at most ``batch_size`` candidates and
    ``max_tokens`` padded tokens."""
    return length_batches(todo, backend.pair_length, batch_size, max_tokens, key=backend.pair_source_key)


def score_candidates(
    backend: PairScorer,
    todo: Sequence[int],
    batch_size: int = 64,
    max_tokens: Optional[int] = None,
    progress: bool = True,
):
    """Yield lists of records ``{"line", "logprob", "tokens"}`` (line: 1-based candidate number
    in the scores file), one list per batch."""
    bar = tqdm(total=len(todo), unit="cand", desc="contrastive", disable=not progress)
    for chunk in batches(backend, todo, batch_size, max_tokens):
        log_probs = backend.pair_log_probs(chunk)
        bar.update(len(chunk))
        yield [{"line": i + 1, "logprob": float(log_probs[i].sum()), "tokens": len(log_probs[i])} for i in chunk]
    bar.close()


def loss_text(record: Dict, normalize: bool) -> str:
    loss = -record["logprob"] / record["tokens"] if normalize else -record["logprob"]
    return f"{loss:.6f}"


def run_contrastive(options: ContrastiveOptions) -> Dict:
    """File-level entry point; returns the summary. Nothing is written on failure."""
    with outputs(options.output, options.summary):
        summary = _run(options)
    remove_partial(options.output)
    return summary


def _run(o: ContrastiveOptions) -> Dict:
    test_set = read_set(o)
    detok = detokenizes(o, test_set)
    pairs = [c for g in test_set.groups for c in g.candidates]
    owner = [(g, k) for g in test_set.groups for k in range(len(g.candidates))]
    if detok:
        pairs = detokenized(pairs, test_set.source_lang, test_set.target_lang)
    fp = contrastive_fingerprint(o, detok)
    if o.skip_up_to_date:
        summary = up_to_date(o, fp, test_set.candidates)
        if summary is not None:
            logger.warning("%s: up to date (made from these inputs and options); nothing to do", o.output)
            return summary
    partial = partial_path(o.output)
    done = resumable_records(partial, fp, range(1, len(pairs) + 1), "contrastive") if o.resume else []
    finished = {r["line"] - 1 for r in done}
    if done:
        logger.warning("%s: resuming, %d of %d candidates already scored", partial, len(finished), len(pairs))
    backend = open_pair_scorer(o.model, o.max_tokens)
    backend.load_pairs(pairs, where=lambda i: f"{owner[i][0].where}, candidate {owner[i][1]}")
    check_distinguishable(test_set, backend)
    copies = repeats(test_set)
    writer, new = PartialFile(partial, fp, done), []
    try:
        todo = [i for i in range(len(pairs)) if i not in finished and i not in copies]
        for records in score_candidates(backend, todo, o.batch_size, o.max_tokens, o.progress):
            writer.write(records)
            new.extend(records)
    finally:
        writer.close()
    by_line = {r["line"]: r for r in done + new}
    by_line.update({i + 1: {**by_line[j + 1], "line": i + 1} for i, j in copies.items()})
    lines = [loss_text(by_line[n], o.normalize) for n in range(1, len(pairs) + 1)]
    summary = summarize(
        test_set,
        [float(x) for x in lines],
        {
            "input": o.input,
            "context_files": list(o.context_files),
            "scores": o.output,
            # the scores file's content: a later run writing the same --output is told from this one's
            "scores_sha256": hashlib.sha256("".join(line + "\n" for line in lines).encode("utf-8")).hexdigest(),
            "loss": LOSS[o.normalize],
            "normalize": o.normalize,
            "detokenized": detok,
            **model_summary(o.model),
            "source_context_size": backend.source_context_size,
            "target_context_size": backend.target_context_size,
            "trained_context": backend.trained_context,
            "official_scorer": test_set.scorer,
            "fingerprint": fp,
        },
    )
    atomic_write_lines(o.output, lines)
    atomic_write_text(o.summary, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary


def up_to_date(o: ContrastiveOptions, fp: Dict, candidates: int) -> Optional[Dict]:
    """The existing summary when the scores file and the summary were made from exactly these
    inputs and options (same fingerprint and loss, one line per candidate); else None."""
    return SummaryRecord(o.output, o.summary, "candidates").current(fp, candidates, normalize=o.normalize)


def summarize(test_set: ContrastiveSet, losses: Sequence[float], extra: Optional[Dict] = None) -> Dict:
    """Accuracy (a fraction) overall and by each category of the set, from the losses in the
    scores file's order."""
    right, at, repeating = [], 0, 0
    for g in test_set.groups:
        n = len(g.candidates)
        right.append(group_is_right(losses[at : at + n], g.correct, test_set.rule))
        repeating += bool(repeated_candidates(g))
        at += n
    if at != len(losses):
        raise ContextualMTError(f"{len(losses)} scores for {at} candidates")
    return {
        "set": test_set.name,
        "format": test_set.format,
        "rule": test_set.rule,
        "accuracy": sum(right) / len(right),
        "groups": len(right),
        "right": int(sum(right)),
        "candidates": at,
        "groups_with_identical_candidates": repeating,
        "by": accuracy_by(test_set.groups, right),
        **({"blocks": blocks} if (blocks := blocks_right(test_set.groups, right)) else {}),
        **(extra or {}),
    }


def format_contrastive_table(summary: Dict) -> str:
    rows = [
        f"{summary['set']} ({summary['format']}): accuracy {summary['accuracy']:.4f} "
        f"({summary['right']}/{summary['groups']} groups, {summary['candidates']} candidates; context "
        f"{summary.get('source_context_size', '?')}/{summary.get('target_context_size', '?')} source/target"
        + (f"; model in {summary['dtype']}" if summary.get("dtype") else "")
        + ")"
    ]
    if summary.get("groups_with_identical_candidates"):
        rows.append(
            f"  groups listing a candidate string twice: {summary['groups_with_identical_candidates']} "
            f"(equal scores; decided by the {summary['rule']} rule)"
        )
    if "blocks" in summary:
        b = summary["blocks"]
        rows.append(f"  entries with every pair right: {b['all_right']}/{b['blocks']} ({b['accuracy']:.4f})")
    for name, values in summary["by"].items():
        rows.append(f"  by {name}:")
        for value, r in values.items():
            rows.append(f"    {value:<24} {r['accuracy']:.4f}  ({r['right']}/{r['groups']})")
    return "\n".join(rows)


@dataclass
class ExternalScoresOptions:
    """``contextual-mt contrastive --scores``: the accuracy of scores made elsewhere (one per
    candidate, in the authors' order), without a model."""

    format: str
    input: str
    scores: str
    summary: str
    context_files: Tuple[str, ...] = ()
    maximize: bool = False  # higher scores are better (log-probabilities rather than losses)

    def __post_init__(self) -> None:
        get_format(self.format)
        self.context_files = tuple(self.context_files)
        if os.path.realpath(self.summary) in {
            os.path.realpath(p) for p in (self.input, self.scores, *self.context_files)
        }:
            raise ContextualMTError(f"{self.summary}: --summary would overwrite an input; write it elsewhere")

    @property
    def set_name(self) -> str:
        return os.path.splitext(os.path.basename(self.input))[0]


def read_scores(path: str, expected: int) -> List[float]:
    """One finite number per line, as many as the set has candidates."""
    check_input_file(path, "scores file")
    values = []
    for lineno, line in enumerate(read_lines(path), start=1):
        try:
            value = float(line)
        except ValueError:
            raise ContextualMTError(f"{path}:{lineno}: not a number ({line.strip()[:40]!r})") from None
        if not math.isfinite(value):
            raise ContextualMTError(f"{path}:{lineno}: {line.strip()} is not a finite score")
        values.append(value)
    if len(values) != expected:
        raise ContextualMTError(
            f"{path}: has {len(values)} scores, but the test set has {expected} candidates "
            "(one score per candidate, in the set's order)"
        )
    return values


def evaluate_scores(options: ExternalScoresOptions) -> Dict:
    """The summary of an existing scores file; written atomically, nothing on failure."""
    o = options
    with outputs(o.summary):
        fmt = get_format(o.format)
        check_input_file(o.input, f"{o.format} test set")
        groups = fmt.read(o.input, o.context_files)
        if not groups:
            raise ContextualMTError(f"{o.input}: no test instances")
        check_groups(groups)
        test_set = ContrastiveSet(
            o.set_name,
            fmt.name,
            groups,
            fmt.rule,
            fmt.source_lang,
            fmt.target_lang,
            fmt.tokenized,
            fmt.scorer(o.input, o.scores),
        )
        values = read_scores(o.scores, test_set.candidates)
        losses = [-v for v in values] if o.maximize else values
        summary = summarize(
            test_set,
            losses,
            {
                "input": o.input,
                "context_files": list(o.context_files),
                "scores": o.scores,
                "maximize": o.maximize,
                "official_scorer": test_set.scorer,
            },
        )
        atomic_write_text(o.summary, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary
