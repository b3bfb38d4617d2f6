"""``contextual-mt testset evaluate``: the generative evaluation of systems that cannot be scored
(an API, an LLM, another toolkit's output) on the groups of ``testset build``'s manifest.

For each group (a tagged word of the reference), the system's translation of that line is
checked for the word's correct form, and for its wrong alternatives: *correct* (the correct form
is there), *wrong alternative* (an alternative is there and the correct form is not) or *missing*
(neither: a paraphrase, or an error). Words are compared case-insensitively, on the Moses tokens
of the manifest's language, each further split on apostrophes and hyphens (French "l'", "c'est",
"êtes-vous"); a word of several pieces must appear as consecutive pieces. There is no word
aligner here: what is checked is presence anywhere in the line, any occurrence counting.

Fractions are reported overall, per phenomenon and per context distance, with percentile
bootstrap confidence intervals over documents, and every system after the first is compared
with the first by paired bootstrap (``muda.evaluation.significance``, as ``muda eval`` does).
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from commandkit.documents import document_spans, read_docids
from commandkit.errors import InputError, json_reason
from commandkit.options import check_required, group, option
from commandkit.outputs import atomic_write_text
from commandkit.text import check_input_file, file_sha256, read_lines, read_text
from contextual_mt.errors import Code, check_number
from contextual_mt.system_outputs import Hypotheses, read_hypotheses, read_pivots, refuse_documents
from contextual_mt.testsets.build import PHENOMENA
from contextual_mt.testsets.ctxpro import CtxproMatcher
from contextual_mt.testsets.suite_files import check_unchanged
from docalign.align import ALIGN_GROUP, AlignArgs
from docalign.links import summary
from muda.evaluation.significance import bootstrap_samples, paired_bootstrap

OUTCOMES = ("correct", "wrong_alternative", "missing")
# the phenomena of testset build's groups, and of imported suites (ctxpro's auxiliary and inflection: ellipsis)
KNOWN_PHENOMENA = (*PHENOMENA, "ellipsis")
# how a group's words are looked for: the Moses pieces below, or ctxpro's own rule (testsets.ctxpro)
MATCHES = ("words", "ctxpro")
DISTANCES = ("0", "1", "2", "3", ">3", "unknown")
CONFIDENCE = 0.95
MAX_BOOTSTRAP = 100_000  # as muda eval: past this, more resamples only fill memory
MIN_BOOTSTRAP = 100
NOTES = (
    "correct: the tagged word's correct form appears in the system's translation of the line; wrong_alternative: "
    "one of its alternatives appears and the correct form does not; missing: neither (a paraphrase or an error)",
    "no word alignment: presence anywhere in the line is checked, any occurrence counting (a frequent word such "
    "as a pronoun may be found elsewhere in the sentence than where the reference has it)",
    "words are compared case-insensitively on the Moses tokens of the language, split on apostrophes and hyphens "
    '("l\'" matches l\'homme, "vous" matches êtes-vous); a word of several pieces must appear as consecutive pieces; '
    "formality in a language that tells it by case (German Sie/sie) is compared with case (a sentence-initial "
    '"Sie" still counts as formal)',
    "confidence intervals: 95% percentile bootstrap over documents; comparisons: paired bootstrap of the "
    "difference in fraction correct with the first system, p = share of resamples where its sign changes "
    "(a resample without groups of a cell counts against the difference)",
)

CTXPRO_NOTE = (
    "groups of an imported ctxpro suite (match: ctxpro) are scored by ctxpro's rule: the form, lower-cased, "
    "between spaces in the last sentence of the translation (ctxpro's sentence splitter), lower-cased, ASCII "
    "punctuation deleted; an output with one line per example (the context translated with the sentence) is read "
    "by the examples' numbers"
)


@dataclass
class TestsetAlignArgs(AlignArgs):
    """The alignment options, with a --pivot that has no default: the command has no references."""

    pivot: Optional[str] = option(
        group=ALIGN_GROUP,
        help="a sentence-level translation of each line of the test set, whose chrF to the output's "
        "sentences scores the links: needed by a document-level --hyp (there are no references here; "
        "the reference the suites were built from will do)",
    )


@dataclass(frozen=True)
class EvaluateOptions:
    """The inputs of ``evaluate_testset`` (the options of ``contextual-mt testset evaluate``)."""

    manifest: str = option(required=True, help="manifest.jsonl written by `testset build`")
    # one system's translations per file, one line per line of the test set
    hyps: Sequence[str] = option(
        "--hyp",
        required=True,
        action="append",
        dest="hyp",
        metavar="SYSTEM.txt",
        help="a system's translations of the test set, one line per line, or a document-level output "
        '(JSONL records {"doc", "text"}, or one document per line; with --docids and --pivot), evaluated '
        "through its alignment to the lines; repeat for several systems (the first is the baseline of the "
        "comparisons)",
    )
    summary: Optional[str] = option(
        help="summary.json of `testset build` (default: beside the manifest): the "
        "language and the test set's line count"
    )
    # document ids of the test set: resampled instead of the manifest's "doc"
    docids: Optional[str] = option(
        help="document ids of the test set: the documents resampled (default: the manifest's 'doc' of each "
        "group); needed by a document-level --hyp"
    )
    output: Optional[str] = option(help="write the full result as JSON here")  # the JSON result
    bootstrap: int = option(  # resamples (0: no intervals, no comparison)
        default=1000, help="resamples of documents for the 95%% intervals and the paired comparisons (0: none)"
    )
    seed: int = option(default=1)
    # a document-level system output: aligned to the lines of align.pivot (needs docids)
    align: AlignArgs = group(TestsetAlignArgs)

    def __post_init__(self) -> None:
        check_required(self)
        for flag, path in (
            ("--manifest", self.manifest),
            ("--summary", self.summary),
            ("--docids", self.docids),
            ("--output", self.output),
            ("--pivot", self.align.pivot),
        ):
            if path is not None and (not isinstance(path, str) or not path):
                raise InputError(f"{flag}: a file path is required (got {path!r})", code=Code.OPTION_MISSING)
        if isinstance(self.hyps, str) or not self.hyps or not all(isinstance(h, str) and h for h in self.hyps):
            raise InputError(
                f"--hyp: give one or more system output files (got {self.hyps!r})", code=Code.OPTION_MISSING
            )
        object.__setattr__(self, "hyps", tuple(self.hyps))
        if len({os.path.realpath(h) for h in self.hyps}) != len(self.hyps):
            raise InputError(f"--hyp: a file is given twice ({', '.join(self.hyps)})", code=Code.OPTION_VALUE)
        check_number("--bootstrap", self.bootstrap, minimum=0, maximum=MAX_BOOTSTRAP, integer=True)
        if 0 < self.bootstrap < MIN_BOOTSTRAP:  # a 95% interval from a handful of resamples is noise
            raise InputError(
                f"--bootstrap must be 0 (no intervals) or at least {MIN_BOOTSTRAP} (got {self.bootstrap})",
                code=Code.OPTION_VALUE,
            )
        check_number("--seed", self.seed, minimum=0, integer=True)  # numpy seeds are non-negative
        self.align.options()  # --band
        if self.output and os.path.realpath(self.output) in {os.path.realpath(p) for p in self.inputs()}:
            raise InputError(
                f"{self.output}: --output would overwrite an input; write it elsewhere", code=Code.OUTPUT_IS_INPUT
            )

    @property
    def summary_path(self) -> str:
        return self.summary or os.path.join(os.path.dirname(self.manifest), "summary.json")

    @property
    def system_names(self) -> List[str]:
        """The hypothesis file names, or their paths when two share a name."""
        names = [os.path.basename(h) for h in self.hyps]
        return names if len(set(names)) == len(names) else list(self.hyps)

    def inputs(self) -> List[str]:
        return [p for p in (self.manifest, self.summary_path, self.docids, self.align.pivot, *self.hyps) if p]


@dataclass(frozen=True)
class Group:
    """What the evaluation reads of a manifest line."""

    line: int  # 1-based line of the test set
    doc: str
    phenomenon: str
    word: str
    alternatives: Tuple[str, ...]
    distance: Optional[int]
    match: str = "words"
    example: Optional[int] = None  # an imported suite's example: its line in a one-line-per-example output

    @property
    def bucket(self) -> str:
        if self.distance is None:
            return "unknown"
        return str(self.distance) if self.distance <= 3 else ">3"


# ----------------------------------------------------------------------------- reading
def read_manifest(path: str) -> List[Group]:
    """The groups of a manifest.jsonl; anything else is one error naming the file and line."""
    check_input_file(path, "manifest")
    groups = []
    for lineno, text in enumerate(read_lines(path), start=1):
        if text.strip():
            groups.append(_group(text, f"{path}:{lineno}"))
    if not groups:
        raise InputError(
            f"{path}: no groups in the manifest (is it the manifest.jsonl of `testset build`?)", code=Code.EMPTY
        )
    return groups


def _group(text: str, where: str) -> Group:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(
            f"{where}: not a JSON object ({json_reason(e, line=False)}); expected one group per line", code=Code.FORMAT
        ) from None
    if not isinstance(record, dict):
        raise InputError(f"{where}: not a JSON object; expected one group per line", code=Code.FORMAT)
    missing = [k for k in ("line", "doc", "phenomenon", "word", "alternatives") if k not in record]
    if missing:
        raise InputError(f"{where}: not a group of a testset manifest (no {', '.join(missing)})", code=Code.FORMAT)
    line, distance, alternatives = record["line"], record.get("distance"), record["alternatives"]
    if not _is_int(line) or line < 1:
        raise InputError(f"{where}: 'line' must be a line number >= 1 (got {line!r})", code=Code.FORMAT)
    if distance is not None and (not _is_int(distance) or distance < 0):
        raise InputError(
            f"{where}: 'distance' must be a number of sentences >= 0 or null (got {distance!r})", code=Code.FORMAT
        )
    for key in ("phenomenon", "word"):
        if not isinstance(record[key], str) or not record[key].strip():
            raise InputError(f"{where}: '{key}' must be a non-empty string (got {record[key]!r})", code=Code.FORMAT)
    if record["phenomenon"] not in KNOWN_PHENOMENA:  # a column of its own in every table, silently
        raise InputError(
            f"{where}: unknown phenomenon {record['phenomenon']!r} (`testset build` and `testset import` make "
            f"groups for {', '.join(KNOWN_PHENOMENA)})",
            code=Code.FORMAT,
        )
    match, example = record.get("match", "words"), record.get("example")
    if match not in MATCHES:
        raise InputError(f"{where}: 'match' must be one of {', '.join(MATCHES)} (got {match!r})", code=Code.FORMAT)
    if example is not None and (not _is_int(example) or example < 1):
        raise InputError(f"{where}: 'example' must be an example number >= 1 (got {example!r})", code=Code.FORMAT)
    if not isinstance(alternatives, list) or not all(isinstance(a, str) and a.strip() for a in alternatives):
        raise InputError(f"{where}: 'alternatives' must be a list of words (got {alternatives!r})", code=Code.FORMAT)
    if not isinstance(record["doc"], (str, int)) or isinstance(record["doc"], bool):
        raise InputError(f"{where}: 'doc' must be a document id (got {record['doc']!r})", code=Code.FORMAT)
    return Group(
        line, str(record["doc"]), record["phenomenon"], record["word"], tuple(alternatives), distance, match, example
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_summary(path: str) -> Dict:
    """summary.json of `testset build`: its language (for the tokenizer) and line count."""
    try:
        summary = json.loads(read_text(path))
    except InputError as e:
        raise InputError(
            f"{e} (the summary.json that `testset build` writes beside the manifest; or give --summary)"
            if "not found" in str(e)
            else str(e),
            code=e.code,
        ) from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON ({json_reason(e)})", code=Code.FORMAT) from None
    if not isinstance(summary, dict) or not isinstance(summary.get("language"), str) or not summary["language"]:
        raise InputError(
            f"{path}: no 'language' in the summary (is it the summary.json of `testset build`?)", code=Code.FORMAT
        )
    lines = summary.get("lines")
    if lines is not None and (not _is_int(lines) or lines < 1):
        raise InputError(f"{path}: 'lines' must be the test set's line count (got {lines!r})", code=Code.FORMAT)
    return summary


def _check_lines(path: str, count: int, lines: Optional[int], groups: Sequence[Group], summary: str, what: str) -> None:
    """A file with one line per line of the test set: exactly ``lines`` (the summary's), or at least
    the last line a group refers to when the summary does not record the count."""
    if lines is not None and count != lines:
        raise InputError(
            f"{path}: has {count} lines but the test set has {lines} ({summary}); "
            f"give {what}, one per line of the test set",
            code=Code.LINE_COUNT,
        )
    last = max(g.line for g in groups)
    if count < last:
        raise InputError(
            f"{path}: has {count} lines but the manifest has a group on line {last}; "
            f"give {what}, one per line of the test set",
            code=Code.LINE_COUNT,
        )


def _read_ids(options: EvaluateOptions, groups: Sequence[Group], lines: Optional[int]) -> Optional[List[str]]:
    """The ids of --docids (None without it), one per line of the test set."""
    if not options.docids:
        return None
    ids = read_docids(options.docids)
    _check_lines(options.docids, len(ids), lines, groups, options.summary_path, "document ids")
    return ids


def _read_systems(
    options: EvaluateOptions, groups: Sequence[Group], summary: Dict, ids: Optional[Sequence[str]]
) -> List[Hypotheses]:
    """Each --hyp, one line per line of the test set: line-aligned, or (with --docids and --pivot)
    a document-level output aligned to the lines of the pivot."""
    lines = summary.get("lines")
    for path in options.hyps:
        check_input_file(path, "system output")
    if ids is None or options.docids is None:
        read = []
        for path in options.hyps:
            text = read_lines(path)
            refuse_documents(path, text, "--docids and --pivot", options.align.hyp_format)
            if _per_example(text, groups, summary):
                read.append(Hypotheses(path, _example_lines(text, groups, lines)))
                continue
            try:
                _check_lines(path, len(text), lines, groups, options.summary_path, "the system's translations")
            except InputError as e:
                raise InputError(f"{e} (a document-level output needs --docids and --pivot)", code=e.code) from None
            read.append(Hypotheses(path, text))
        return read
    pivots = read_pivots(options.align, len(ids), options.docids)
    built_from = (
        f": e.g. the reference the suites were built from, {summary['reference']}" if summary.get("reference") else ""
    )
    no_pivot = (
        "a document-level output is aligned to a sentence-level translation of each line of the test "
        f"set: give it with --pivot (testset evaluate has no references){built_from}"
    )
    language = re.split(r"[-_]", summary["language"], maxsplit=1)[0].lower()  # the segmenter's (spaCy's) code
    return read_hypotheses(options.hyps, ids, options.docids, pivots, options.align.options(language), no_pivot)


def _per_example(text: Sequence[str], groups: Sequence[Group], summary: Dict) -> bool:
    """An output of an imported suite with one line per example (ctxpro's systems translate the
    context and the sentence as one line), rather than one per line of the test set."""
    examples = summary.get("examples")
    return (
        _is_int(examples)
        and len(text) == examples
        and len(text) != summary.get("lines")
        and all(g.example is not None and g.example <= examples for g in groups)
    )


def _example_lines(text: Sequence[str], groups: Sequence[Group], lines: Optional[int]) -> List[str]:
    """A per-example output laid out on the test set's lines: each example's line on its group's."""
    laid = [""] * (lines or max(g.line for g in groups))
    for g in groups:
        laid[g.line - 1] = text[int(g.example or 0) - 1]
    return laid


def _documents(options: EvaluateOptions, groups: Sequence[Group], ids: Optional[Sequence[str]]) -> np.ndarray:
    """The document index of each group, 0..D-1: the documents of --docids (runs of equal ids),
    else the manifest's 'doc' values."""
    if options.docids and ids is not None:
        for k, g in enumerate(groups, start=1):  # other ids (e.g. one document) give zero-wide intervals, p 0
            if ids[g.line - 1] != g.doc:
                raise InputError(
                    f"{options.docids}:{g.line}: document {ids[g.line - 1]!r}, but the group of that "
                    f"line in the manifest (group {k}) is in document {g.doc!r}: give the "
                    "document ids of the test set the suites were built from",
                    code=Code.MISMATCH,
                )
        of_line = np.zeros(len(ids), dtype=np.int64)
        for k, (start, end) in enumerate(document_spans(ids)):
            of_line[start:end] = k
        keys: List[Any] = [int(of_line[g.line - 1]) for g in groups]
    else:
        keys = [g.doc for g in groups]
    index: Dict[Any, int] = {}
    return np.array([index.setdefault(k, len(index)) for k in keys], dtype=np.int64)


# ----------------------------------------------------------------------------- matching
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u02bc": "'", "\u2018": "'"})
_PIECE = re.compile(r"[^'\-\u2010\u2011]+")


class WordMatcher:
    """Words as sequences of lower-cased pieces: the Moses tokens of the language (which keep
    hyphenated words whole and French elisions as "l'"), split again on apostrophes and hyphens."""

    def __init__(self, language: str, case_sensitive: bool = False) -> None:
        self.case_sensitive = case_sensitive
        try:
            from sacremoses import MosesTokenizer
        except ImportError:
            raise InputError(
                "testset evaluate tokenizes with sacremoses; install it (pip install sacremoses)", code=Code.MODEL
            ) from None
        self.tokenizer = MosesTokenizer(lang=re.split(r"[-_]", language, maxsplit=1)[0].lower())

    def pieces(self, text: str) -> Tuple[str, ...]:
        text = unicodedata.normalize("NFC", text).translate(_APOSTROPHES)
        text = text if self.case_sensitive else text.casefold()
        return tuple(p for token in self.tokenizer.tokenize(text, escape=False) for p in _PIECE.findall(token))


def contains(pieces: Sequence[str], word: Sequence[str]) -> bool:
    """``word``'s pieces appear consecutively in ``pieces``."""
    n = len(word)
    return n > 0 and any(tuple(pieces[i : i + n]) == tuple(word) for i in range(len(pieces) - n + 1))


def outcome(hypothesis: Sequence[str], word: Sequence[str], alternatives: Sequence[Sequence[str]]) -> Tuple[int, bool]:
    """(index in OUTCOMES, whether an alternative appears too)."""
    right = contains(hypothesis, word)
    wrong = any(contains(hypothesis, a) for a in alternatives if tuple(a) != tuple(word))
    return (0 if right else 1 if wrong else 2), right and wrong


# ----------------------------------------------------------------------------- scoring
def _cells(groups: Sequence[Group]) -> List[str]:
    """The breakdown: 'all', 'phenomenon:P' (in order of first appearance), 'distance:B'."""
    phenomena = list(dict.fromkeys(g.phenomenon for g in groups))
    buckets = [b for b in DISTANCES if any(g.bucket == b for g in groups)]
    return ["all"] + [f"phenomenon:{p}" for p in phenomena] + [f"distance:{b}" for b in buckets]


def _group_cells(g: Group) -> Tuple[str, str, str]:
    return "all", f"phenomenon:{g.phenomenon}", f"distance:{g.bucket}"


def _counts(outcomes: Sequence[int], groups: Sequence[Group], docs: np.ndarray, cells: Sequence[str]) -> np.ndarray:
    """(documents, cells, outcomes) counts of one system."""
    where = {c: k for k, c in enumerate(cells)}
    counts = np.zeros((int(docs.max()) + 1, len(cells), len(OUTCOMES)), dtype=np.int64)
    for g, d, o in zip(groups, docs, outcomes, strict=True):
        for cell in _group_cells(g):
            counts[d, where[cell], o] += 1
    return counts


def _flag_counts(flags: Sequence[bool], groups: Sequence[Group], cells: Sequence[str]) -> np.ndarray:
    """(cells,) how many groups of each cell have the flag."""
    where = {c: k for k, c in enumerate(cells)}
    totals = np.zeros(len(cells), dtype=np.int64)
    for g, flag in zip(groups, flags, strict=True):
        for cell in _group_cells(g):
            totals[where[cell]] += int(flag)
    return totals


def _fractions(totals: np.ndarray) -> np.ndarray:
    """Outcome fractions of (..., outcomes) totals; NaN where a cell has no groups."""
    n = totals.sum(-1, keepdims=True).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, totals / n, np.nan)


def _correct_fraction(totals: np.ndarray) -> np.ndarray:
    """For paired_bootstrap: fraction correct, 0 for a cell without groups."""
    return np.nan_to_num(_fractions(totals)[..., 0])


def _resampled_totals(counts: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """(resamples, cells, outcomes): the counts summed over each resample's documents."""
    weights = np.zeros((samples.shape[0], counts.shape[0]))
    np.add.at(weights, (np.arange(samples.shape[0])[:, None], samples), 1)
    return np.einsum("nd,dco->nco", weights, counts.astype(float))


def _intervals(counts: np.ndarray, samples: Optional[np.ndarray]) -> Optional[np.ndarray]:
    """(2, cells, outcomes) percentile bounds, or None without resamples."""
    if samples is None:
        return None
    tail = (1 - CONFIDENCE) / 2 * 100
    with np.errstate(invalid="ignore"):
        return np.nanpercentile(_fractions(_resampled_totals(counts, samples)), [tail, 100 - tail], axis=0)


def _system_result(
    hyp: str,
    counts: np.ndarray,
    both: np.ndarray,
    cells: Sequence[str],
    ci: Optional[np.ndarray],
    outcomes: Sequence[int],
) -> Dict:
    totals = counts.sum(0)
    fractions = _fractions(totals)
    result: Dict[str, Any] = {"hypotheses": hyp, "overall": None, "phenomena": {}, "distances": {}}
    for k, cell in enumerate(cells):
        entry: Dict[str, Any] = {"groups": int(totals[k].sum())}
        for j, what in enumerate(OUTCOMES):
            entry[what] = float(fractions[k, j])
            entry[f"{what}_ci"] = None if ci is None else [float(ci[0, k, j]), float(ci[1, k, j])]
        entry["correct_with_alternative"] = int(both[k])  # the correct form and a wrong one both appear
        _place(result, cell, entry)
    result["group_outcomes"] = [OUTCOMES[o] for o in outcomes]
    return result


def _place(result: Dict, cell: str, entry: Any) -> None:
    """Put a cell's entry under 'overall', 'phenomena' or 'distances'."""
    if cell == "all":
        result["overall"] = entry
    else:
        kind, key = cell.split(":", 1)
        result["phenomena" if kind == "phenomenon" else "distances"][key] = entry


def _comparison(
    names: Sequence[str], counts: Sequence[np.ndarray], k: int, cells: Sequence[str], samples: np.ndarray
) -> Dict:
    """System k against the first: difference in fraction correct and its paired bootstrap p."""
    p = paired_bootstrap(counts[k], counts[0], samples, metric=_correct_fraction)
    diff = _correct_fraction(counts[k].sum(0)) - _correct_fraction(counts[0].sum(0))
    result: Dict[str, Any] = {"a": names[0], "b": names[k], "overall": None, "phenomena": {}, "distances": {}}
    for j, cell in enumerate(cells):
        _place(result, cell, {"difference": float(diff[j]), "p": float(p[j])})
    return result


def _ctxpro_outcome(matcher: CtxproMatcher, g: Group, translation: str) -> Tuple[int, bool]:
    """``outcome`` by ctxpro's rule: the forms in the translation's last sentence, as ctxpro score."""
    prepared = matcher.prepare(translation)
    right = matcher.found(prepared, g.word)
    wrong = any(matcher.found(prepared, a) for a in g.alternatives if a.lower() != g.word.lower())
    return (0 if right else 1 if wrong else 2), right and wrong


def _formality_by_case(language: str) -> bool:
    from muda.languages import get_language

    try:
        formality = get_language(language).formality
    except Exception:  # a language MuDA does not know: compare without case, as for any word
        return False
    return formality is not None and formality.case_sensitive


def evaluate_testset(options: EvaluateOptions) -> Dict:
    """Every system's outcome on every group, by phenomenon and distance, with intervals and the
    comparisons with the first system; written to ``options.output`` when given (after every check)."""
    groups = read_manifest(options.manifest)
    summary = read_summary(options.summary_path)
    check_unchanged(options.summary_path, summary)
    if summary.get("groups") is not None and summary["groups"] != len(groups):
        raise InputError(
            f"{options.summary_path}: the summary of a build of {summary['groups']} groups, but "
            f"{options.manifest} has {len(groups)}: give the summary.json written beside it",
            code=Code.MISMATCH,
        )
    lines = summary.get("lines")
    ids = _read_ids(options, groups, lines)
    docs = _documents(options, groups, ids)
    read = _read_systems(options, groups, summary, ids)
    hyps = [r.lines for r in read]
    # German formality is told by case (Sie/sie): its groups are compared case-sensitively
    folded = WordMatcher(summary["language"])
    cased = WordMatcher(summary["language"], case_sensitive=True) if _formality_by_case(summary["language"]) else None
    matchers = [cased if cased is not None and g.phenomenon == "formality" else folded for g in groups]
    words = [(m.pieces(g.word), [m.pieces(a) for a in g.alternatives]) for g, m in zip(groups, matchers, strict=True)]
    # an imported ctxpro suite: its groups are scored by ctxpro's own rule (testsets.ctxpro)
    ctxpro = CtxproMatcher(summary["language"]) if any(g.match == "ctxpro" for g in groups) else None
    cells = _cells(groups)
    samples = bootstrap_samples(int(docs.max()) + 1, options.bootstrap, options.seed) if options.bootstrap else None
    result: Dict[str, Any] = {
        "manifest": options.manifest,
        "manifest_sha256": file_sha256(options.manifest),  # which manifest, wherever the result is read from
        "summary": options.summary_path,
        "language": summary["language"],
        "reference": summary.get("reference"),
        "lines": lines,
        "groups": len(groups),
        "documents": int(docs.max()) + 1,
        "bootstrap": options.bootstrap,
        "seed": options.seed,
        "confidence": CONFIDENCE,
        "notes": list(NOTES) + ([CTXPRO_NOTE] if ctxpro is not None else []),
        "systems": {},
        "comparisons": [],
    }
    all_counts = []
    for name, path, text in zip(options.system_names, options.hyps, hyps, strict=True):
        checked = [
            _ctxpro_outcome(ctxpro, g, text[g.line - 1])
            if ctxpro is not None and g.match == "ctxpro"
            else outcome(m.pieces(text[g.line - 1]), w, alts)
            for g, m, (w, alts) in zip(groups, matchers, words, strict=True)
        ]
        outcomes = [c[0] for c in checked]
        counts = _counts(outcomes, groups, docs, cells)
        both = _flag_counts([c[1] for c in checked], groups, cells)
        all_counts.append(counts)
        result["systems"][name] = _system_result(path, counts, both, cells, _intervals(counts, samples), outcomes)
    for name, r in zip(options.system_names, read, strict=True):
        if r.alignment is not None:  # a document-level output, evaluated through its alignment
            result["systems"][name]["alignment"] = r.alignment.statistics
            result["pivot"] = options.align.pivot
    if samples is not None:
        result["comparisons"] = [
            _comparison(options.system_names, all_counts, k, cells, samples) for k in range(1, len(all_counts))
        ]
    if options.output:
        atomic_write_text(options.output, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return result


# ----------------------------------------------------------------------------- table
def _percent(entry: Dict, what: str = "correct") -> str:
    ci = entry.get(f"{what}_ci")
    text = f"{100 * entry[what]:.1f}"
    return text + (f" [{100 * ci[0]:.1f}-{100 * ci[1]:.1f}]" if ci else "")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    return [
        "  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
        for r in [header, *rows]
    ]


def _entry(section: str, key: Any) -> Callable[[Dict], Any]:
    """A system's figure ``section[key]`` (a column of the summary)."""
    return lambda s: s[section][key]


def evaluate_on_suites(
    manifest: str, hyps: Sequence[str], reference: str, docids: str, output: str, table: str
) -> Optional[str]:
    """The generative evaluation of a study's translations ``hyps`` (a document-level output
    aligned to ``reference``) on the suites of ``manifest``: ``output`` (JSON) and ``table`` (its
    table, returned); None, and nothing written, when the suites were built from another
    reference than ``reference`` (their groups would not be of these sentences)."""
    options = EvaluateOptions(manifest, hyps, docids=docids, output=output, align=AlignArgs(pivot=reference))
    if read_summary(options.summary_path).get("reference_sha256") != file_sha256(reference):
        return None
    text = format_testset_table(evaluate_testset(options))
    atomic_write_text(table, text + "\n")
    return text


def format_testset_table(result: Dict) -> str:
    """Per system: % correct [95% CI] overall, per phenomenon, per distance; the outcome shares
    overall; the comparisons with the first system."""
    systems = result["systems"]
    first = next(iter(systems.values()))
    columns: List[Tuple[str, Callable[[Dict], Any]]] = [("all", lambda s: s["overall"])]
    columns += [(p, _entry("phenomena", p)) for p in first["phenomena"]]
    columns += [(f"d={d}", _entry("distances", d)) for d in first["distances"]]
    lines = ["% correct [95% CI]" if result["bootstrap"] else "% correct"]
    rows = [[name] + [_percent(get(s)) for _, get in columns] for name, s in systems.items()]
    rows.append(["groups"] + [str(get(first)["groups"]) for _, get in columns])
    lines += _table(["system"] + [c for c, _ in columns], rows)
    lines.append("")
    lines += _table(
        ["system", *OUTCOMES], [[name] + [_percent(s["overall"], w) for w in OUTCOMES] for name, s in systems.items()]
    )
    for name, s in systems.items():
        if "alignment" in s:
            lines.append(f"{name}: {summary(s['alignment'])}")
    for c in result["comparisons"]:
        parts = [f"{label} {100 * get(c)['difference']:+.1f} (p {get(c)['p']:.3f})" for label, get in columns]
        lines.append(f"{c['b']} vs {c['a']}: % correct, paired bootstrap: {', '.join(parts)}")
    return "\n".join(lines)


__all__ = ["EvaluateOptions", "WordMatcher", "evaluate_testset", "format_testset_table", "read_manifest"]
