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
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

from tqdm import tqdm

from commandkit.options import check_required, group, option
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
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.batching import check_batching, length_batches
from contextual_mt.inference.interface import ContextPair, ModelSpec, PairScorer
from contextual_mt.inference.model_args import ModelArgs, max_tokens_option, progress_option, resume_option
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
    """``contextual-mt contrastive``: score every candidate with a model (``model``, ``output``),
    or evaluate the scores made elsewhere (``scores``, no model); validated when built, before any
    file is read or model loaded."""

    model_optional: ClassVar[bool] = True  # --scores evaluates existing scores, without a model
    # a fairseq checkpoint (FairseqModelOptions) or a Hugging Face model (HFModelOptions), made from
    # the model options (contextual_mt.api.model_spec); None with --scores
    model: Optional[ModelSpec] = group(ModelArgs, last=True, given=True)
    format: str = option(required=True, help="voita | bawden | contrapro | scat")
    input: str = option(
        required=True,
        help="the test set (voita: *.json; bawden: anaphora.json or "
        "lexical-choice.json; contrapro: contrapro.json; scat: highlighted.test.fr; docs/explanations/testsets.md)",
    )
    output: Optional[str] = option(help="scores file: one loss per candidate, in the order the set's scorer reads")
    summary: str = option(required=True, help="JSON: accuracy overall and by category, and the settings")
    # None (the command line's "not given") is kept as ()
    context_files: Tuple[str, ...] = option(
        nargs="+",
        metavar="FILE",
        after="input",
        help="contrapro: the text and context files of "
        "json2text_and_context.pl; bawden: the four *.{prev,current}.{en,fr} "
        "files, to score their (preprocessed) text",
    )
    scores: Optional[str] = option(
        after="output",
        help="instead of a model: the accuracy of this scores file (one per candidate, "
        "in the set's order; lower = better unless --maximize)",
    )
    maximize: bool = option(
        action="store_true", default=False, after="scores", help="with --scores: higher scores are better"
    )
    normalize: bool = option(action="store_true", default=False, help="loss per token instead of the sentence's sum")
    detokenize: str = option(
        choices=DETOKENIZE,
        default="auto",
        help="sacremoses-detokenize a Moses-tokenized set (auto: when --spm is given)",
    )
    batch_size: int = option(default=64, help="candidates per batch")
    max_tokens: Optional[int] = max_tokens_option()  # (source or target, with context) tokens per batch
    resume: bool = resume_option("discard OUTPUT.partial instead of resuming from it")
    progress: bool = progress_option()
    skip_up_to_date: bool = False  # scores and summary already made from these inputs and options: keep them

    def __post_init__(self) -> None:
        check_required(self)
        check_mode(self.model is not None, self.output, self.scores, self.maximize)
        get_format(self.format)
        self.context_files = tuple(self.context_files or ())
        inputs = {os.path.realpath(p) for p in (self.input, *self.context_files)}
        if self.scores is not None:
            if os.path.realpath(self.summary) in inputs | {os.path.realpath(self.scores)}:
                raise InputError(
                    f"{self.summary}: --summary would overwrite an input; write it elsewhere", code=Code.OUTPUT_IS_INPUT
                )
            return
        check_batching(self.batch_size, self.max_tokens)
        if self.detokenize not in DETOKENIZE:
            raise InputError(
                f"--detokenize must be one of {', '.join(DETOKENIZE)} (got {self.detokenize!r})",
                code=Code.OPTION_VALUE,
            )
        assert self.output is not None  # check_mode
        check_distinct([("--output", self.output), ("--summary", self.summary)])
        for flag, path in (("--output", self.output), ("--summary", self.summary)):
            if os.path.realpath(path) in inputs:
                raise InputError(
                    f"{path}: {flag} would overwrite an input; write it elsewhere", code=Code.OUTPUT_IS_INPUT
                )

    @staticmethod
    def check_before_model(model: ModelArgs, given: Any) -> None:
        """Which of the two runs, before the model's options are read."""
        check_mode(
            model.given(),
            getattr(given, "output", None),
            getattr(given, "scores", None),
            bool(getattr(given, "maximize", False)),
        )

    @property
    def set_name(self) -> str:
        return os.path.splitext(os.path.basename(self.input))[0]

    @property
    def scoring_model(self) -> ModelSpec:
        """The model that scores the candidates (not ``--scores``)."""
        assert self.model is not None  # check_mode
        return self.model

    @property
    def scores_file(self) -> str:
        """The scores the accuracy is computed from: written (``output``) or given (``scores``)."""
        path = self.scores if self.scores is not None else self.output
        assert path is not None  # check_mode
        return path


def check_mode(model: bool, output: Optional[str], scores: Optional[str], maximize: bool) -> None:
    """A model and ``output`` (score the candidates), or ``scores`` alone (evaluate existing scores)."""
    if scores is not None:
        if model or output:
            raise InputError(
                "--scores evaluates existing scores: give it without --path/--hf-model and --output",
                code=Code.OPTIONS_CONFLICT,
            )
        return
    if not (model and output):
        raise InputError(
            "give --path or --hf-model, and --output (score with a model), or --scores (evaluate existing scores)",
            code=Code.OPTION_MISSING,
        )
    if maximize:
        raise InputError(
            "--maximize applies to --scores only (this command writes losses: lower is better)",
            code=Code.OPTIONS_CONFLICT,
        )


def read_set(options: ContrastiveOptions) -> ContrastiveSet:
    """The test set of ``options`` (its files checked), in the order its scorer reads the scores."""
    fmt = get_format(options.format)
    check_input_file(options.input, f"{options.format} test set")
    for path in options.context_files:
        check_input_file(path, "context file")
    groups = fmt.read(options.input, options.context_files)
    if not groups:
        raise InputError(f"{options.input}: no test instances", code=Code.EMPTY)
    check_groups(groups)
    return ContrastiveSet(
        options.set_name,
        fmt.name,
        groups,
        fmt.rule,
        fmt.source_lang,
        fmt.target_lang,
        fmt.tokenized,
        fmt.scorer(options.input, options.scores_file),
    )


def detokenizes(options: ContrastiveOptions, test_set: ContrastiveSet) -> bool:
    if options.detokenize == "auto":  # models that read raw text: --spm, and every Hugging Face model
        return test_set.tokenized and family(options.scoring_model).reads_raw_text(options.scoring_model)
    return options.detokenize == "yes"


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
        raise InputError(
            f"{g.where}: candidates {a} and {b} are the same tokens to the model (different strings that differ only "
            f"in what its vocabulary cannot represent: a test set of another language or script?), so their scores "
            f"tie; {len(bad)} of {len(test_set.groups)} groups are like this",
            code=Code.MISMATCH,
        )


def repeats(test_set: ContrastiveSet) -> Dict[int, int]:
    """Candidates (0-based, over the whole set) that repeat one of their group string for string
    -> the first listing: scored once, so that the copies' scores are equal, not merely close."""
    copies, at = {}, 0
    for g in test_set.groups:
        copies.update({at + k: at + j for k, j in repeated_candidates(g).items()})
        at += len(g.candidates)
    return copies


def contrastive_fingerprint(options: ContrastiveOptions, detok: bool) -> Dict:
    """Everything the scores depend on, by content, computed without loading the model."""
    return {
        "format": options.format,
        "input": file_sha256(options.input),
        "context_files": [file_sha256(p) for p in options.context_files],
        **model_fingerprint(options.scoring_model),
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


@dataclass
class ContrastiveResult:
    """What ``contextual-mt contrastive`` made: the ``summary`` (as written to the summary file),
    the ``scores``, one per candidate in the scores file's order (the losses written, or the
    ``--scores`` given), and ``groups``, one record per test instance (``where``, ``correct``: its
    correct candidate, ``categories``, ``right``: whether the set's rule counts it right)."""

    summary: Dict
    scores: List[float]
    groups: List[Dict]


def run_contrastive(options: ContrastiveOptions) -> Dict:
    """File-level entry point; returns the summary. Nothing is written on failure."""
    return evaluate_contrastive(options).summary


def evaluate_contrastive(options: ContrastiveOptions) -> ContrastiveResult:
    """``contextual-mt contrastive``: the scores file (with a model) and the summary, written
    together at the end (nothing on failure), and what they hold."""
    if options.scores is not None:
        return _evaluate_scores(options)
    assert options.output is not None  # ContrastiveOptions.check_mode
    with outputs(options.output, options.summary):
        result = _run(options, options.output)
    remove_partial(options.output)
    return result


def _run(options: ContrastiveOptions, output: str) -> ContrastiveResult:
    test_set = read_set(options)
    detok = detokenizes(options, test_set)
    pairs = [c for g in test_set.groups for c in g.candidates]
    owner = [(g, k) for g in test_set.groups for k in range(len(g.candidates))]
    if detok:
        pairs = detokenized(pairs, test_set.source_lang, test_set.target_lang)
    fp = contrastive_fingerprint(options, detok)
    if options.skip_up_to_date:
        summary = up_to_date(options, output, fp, test_set.candidates)
        if summary is not None:
            logger.warning("%s: up to date (made from these inputs and options); nothing to do", output)
            losses = read_scores(output, test_set.candidates)
            return ContrastiveResult(summary, losses, group_records(test_set, losses))
    partial = partial_path(output)
    done = resumable_records(partial, fp, range(1, len(pairs) + 1), "contrastive") if options.resume else []
    finished = {r["line"] - 1 for r in done}
    if done:
        logger.warning("%s: resuming, %d of %d candidates already scored", partial, len(finished), len(pairs))
    backend = open_pair_scorer(options.scoring_model, options.max_tokens)
    backend.load_pairs(pairs, where=lambda i: f"{owner[i][0].where}, candidate {owner[i][1]}")
    check_distinguishable(test_set, backend)
    copies = repeats(test_set)
    writer, new = PartialFile(partial, fp, done), []
    try:
        todo = [i for i in range(len(pairs)) if i not in finished and i not in copies]
        for records in score_candidates(backend, todo, options.batch_size, options.max_tokens, options.progress):
            writer.write(records)
            new.extend(records)
    finally:
        writer.close()
    by_line = {r["line"]: r for r in done + new}
    by_line.update({i + 1: {**by_line[j + 1], "line": i + 1} for i, j in copies.items()})
    lines = [loss_text(by_line[n], options.normalize) for n in range(1, len(pairs) + 1)]
    losses = [float(x) for x in lines]  # the accuracy is computed from the very numbers written
    summary = summarize(
        test_set,
        losses,
        {
            "input": options.input,
            "context_files": list(options.context_files),
            "scores": output,
            # the scores file's content: a later run writing the same --output is told from this one's
            "scores_sha256": hashlib.sha256("".join(line + "\n" for line in lines).encode("utf-8")).hexdigest(),
            "loss": LOSS[options.normalize],
            "normalize": options.normalize,
            "detokenized": detok,
            **model_summary(options.scoring_model),
            "source_context_size": backend.source_context_size,
            "target_context_size": backend.target_context_size,
            "trained_context": backend.trained_context,
            "official_scorer": test_set.scorer,
            "fingerprint": fp,
        },
    )
    atomic_write_lines(output, lines)
    atomic_write_text(options.summary, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return ContrastiveResult(summary, losses, group_records(test_set, losses))


def up_to_date(options: ContrastiveOptions, output: str, fp: Dict, candidates: int) -> Optional[Dict]:
    """The existing summary when the scores file ``output`` and the summary were made from
    exactly these inputs and options (same fingerprint and loss, one line per candidate); else None."""
    return SummaryRecord(output, options.summary, "candidates").current(fp, candidates, normalize=options.normalize)


def groups_right(test_set: ContrastiveSet, losses: Sequence[float]) -> List[bool]:
    """Whether the set's rule counts each group right, from the losses in the scores file's order."""
    right, at = [], 0
    for g in test_set.groups:
        n = len(g.candidates)
        right.append(group_is_right(losses[at : at + n], g.correct, test_set.rule))
        at += n
    if at != len(losses):
        raise InputError(f"{len(losses)} scores for {at} candidates", code=Code.LINE_COUNT)
    return right


def group_records(test_set: ContrastiveSet, losses: Sequence[float]) -> List[Dict]:
    """One record per group: where it is, its correct candidate, its categories, and whether it is right."""
    return [
        {"where": g.where, "correct": g.correct, "categories": dict(g.categories), "right": right}
        for g, right in zip(test_set.groups, groups_right(test_set, losses), strict=True)
    ]


def summarize(test_set: ContrastiveSet, losses: Sequence[float], extra: Optional[Dict] = None) -> Dict:
    """Accuracy (a fraction) overall and by each category of the set, from the losses in the
    scores file's order."""
    right = groups_right(test_set, losses)
    repeating = sum(bool(repeated_candidates(g)) for g in test_set.groups)
    return {
        "set": test_set.name,
        "format": test_set.format,
        "rule": test_set.rule,
        "accuracy": sum(right) / len(right),
        "groups": len(right),
        "right": int(sum(right)),
        "candidates": len(losses),
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


def read_scores(path: str, expected: int) -> List[float]:
    """One finite number per line, as many as the set has candidates."""
    check_input_file(path, "scores file")
    values = []
    for lineno, line in enumerate(read_lines(path), start=1):
        try:
            value = float(line)
        except ValueError:
            raise InputError(f"{path}:{lineno}: not a number ({line.strip()[:40]!r})", code=Code.FORMAT) from None
        if not math.isfinite(value):
            raise InputError(f"{path}:{lineno}: {line.strip()} is not a finite score", code=Code.FORMAT)
        values.append(value)
    if len(values) != expected:
        raise InputError(
            f"{path}: has {len(values)} scores, but the test set has {expected} candidates "
            "(one score per candidate, in the set's order)",
            code=Code.LINE_COUNT,
        )
    return values


def _evaluate_scores(options: ContrastiveOptions) -> ContrastiveResult:
    """``--scores``: the summary of an existing scores file; written atomically, nothing on failure."""
    assert options.scores is not None
    with outputs(options.summary):
        test_set = read_set(options)
        values = read_scores(options.scores, test_set.candidates)
        losses = [-v for v in values] if options.maximize else values
        summary = summarize(
            test_set,
            losses,
            {
                "input": options.input,
                "context_files": list(options.context_files),
                "scores": options.scores,
                "maximize": options.maximize,
                "official_scorer": test_set.scorer,
            },
        )
        atomic_write_text(options.summary, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return ContrastiveResult(summary, values, group_records(test_set, losses))
