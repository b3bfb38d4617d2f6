"""``contextual-mt testset cues``: does a model follow the cue? The measures of a counterfactual
suite (``testset build --counterfactual``) from the decisions a model made on it: the scores of
``contrastive`` (the preferred candidate of each edited group) or the outcomes of ``testset
evaluate`` (the expected form present in the translation of each edited document).

Per phenomenon and overall, each with a percentile bootstrap interval over the original documents:

- ``original``: accuracy on the unedited groups (cue sentence and what lies between, only);
- ``cue_following``: among the groups whose cue was flipped, the share where the decision follows
  the cue both ways (right on the original and right on the flipped context: the preferred or
  produced form changed as the cue did). A model that reads no context cannot do both: 0;
- ``control_stability``: among the control edits (another word of the cue's sentence changed),
  the share where the decision is the same as on the original;
- ``cue_score``: cue_following minus the control flips (1 - control_stability), the single number
  to quote: a model that follows cues and nothing else is near 1, one that reads no context 0, and
  one whose decisions move with any context change scores its following minus that movement;
- ``distance``: accuracy with the cue D sentences back (the originals and the cue moved back by
  neutral sentences), a curve (``--plot``);
- ``distractor``: accuracy with a competing candidate inserted between cue and target, beside
  ``distractor_original``, the accuracy on the same groups unedited.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from commandkit.errors import json_reason
from commandkit.options import check_required, option
from commandkit.outputs import atomic_save_figure, atomic_write_text, outputs
from commandkit.text import check_input_file, file_sha256, read_lines, read_text
from contextual_mt.contrastive.evaluate import read_scores
from contextual_mt.contrastive.sets import group_is_right
from contextual_mt.errors import Code, InputError, check_number
from contextual_mt.testsets.counterfactual import EDITS
from contextual_mt.testsets.evaluate import CONFIDENCE, MAX_BOOTSTRAP, MIN_BOOTSTRAP, _intervals, _resampled_totals
from contextual_mt.testsets.suite_files import check_unchanged
from muda.evaluation.significance import bootstrap_samples

MEASURES = ("original", "cue_following", "control_stability", "distractor", "distractor_original")
NOTES = (
    "cue_following: right on the original and on the cue-flipped context (the decision changed as the cue did); "
    "control_stability: the same decision with a non-cue word of the cue's sentence changed; cue_score = "
    "cue_following - (1 - control_stability)",
    "the context of every edited group is the cue's sentence and the sentences between it and the tagged one; "
    "distance: the cue moved back by neutral sentences of other documents",
    "confidence intervals: 95% percentile bootstrap over the original documents",
)


@dataclass(frozen=True)
class CueOptions:
    """The options of ``contextual-mt testset cues``."""

    suite: str = option(required=True, help="OUTPUT_DIR/counterfactual of `testset build --counterfactual`")
    # summaries of `contrastive --format voita` runs on SUITE/voita.json (None: none)
    contrastive: Tuple[str, ...] = option(
        action="append",
        metavar="SUMMARY.json",
        help="the --summary of a `contrastive --format voita` run on SUITE/voita.json (its scores beside it); "
        "repeat for several models",
    )
    evaluation: Optional[str] = option(  # the --output of `testset evaluate` on SUITE/manifest.jsonl
        metavar="RESULT.json",
        help="the --output of `testset evaluate --manifest SUITE/manifest.jsonl` (translations of SUITE/source.en "
        "with --gold-target-context SUITE/reference.xx): every system in it",
    )
    output: Optional[str] = option(help="write the measures as JSON here")
    # PNG: accuracy by cue distance, per system
    plot: Optional[str] = option(metavar="PNG", help="accuracy by cue distance, per phenomenon and system")
    bootstrap: int = option(default=1000, help="resamples of documents for the 95%% intervals (0: none)")
    seed: int = option(default=1)

    def __post_init__(self) -> None:
        check_required(self)
        object.__setattr__(self, "contrastive", tuple(self.contrastive or ()))
        if not self.contrastive and not self.evaluation:
            raise InputError(
                "give the decisions to measure: --contrastive SUMMARY.json (a `contrastive` run on "
                "SUITE/voita.json) and/or --evaluation RESULT.json (`testset evaluate --output`)",
                code=Code.OPTION_MISSING,
            )
        check_number("--bootstrap", self.bootstrap, minimum=0, maximum=MAX_BOOTSTRAP, integer=True)
        if 0 < self.bootstrap < MIN_BOOTSTRAP:
            raise InputError(
                f"--bootstrap must be 0 (no intervals) or at least {MIN_BOOTSTRAP} (got {self.bootstrap})",
                code=Code.OPTION_VALUE,
            )
        check_number("--seed", self.seed, minimum=0, integer=True)
        if self.plot is not None and not self.plot.lower().endswith(".png"):
            raise InputError(f"--plot {self.plot}: a .png file", code=Code.OPTION_VALUE)
        inputs = {os.path.realpath(p) for p in (*self.contrastive, self.evaluation, *self.suite_files()) if p}
        for flag, path in (("--output", self.output), ("--plot", self.plot)):
            if path is not None and os.path.realpath(path) in inputs:
                raise InputError(
                    f"{path}: {flag} would overwrite an input; write it elsewhere", code=Code.OUTPUT_IS_INPUT
                )
            if path is not None and os.path.realpath(path) in self.documents():
                raise InputError(
                    f"{path}: {flag} would overwrite the suite's documents (for the generative run); "
                    "write it elsewhere",
                    code=Code.OUTPUT_IS_INPUT,
                )

    def suite_files(self) -> List[str]:
        return [os.path.join(self.suite, n) for n in ("manifest.jsonl", "voita.json", "summary.json")]

    def documents(self) -> set:
        """The real paths of the suite's documents (source.en, reference.xx, docids): not read here,
        but the suite's all the same."""
        try:
            names = os.listdir(self.suite)
        except OSError:
            return set()
        return {
            os.path.realpath(os.path.join(self.suite, n))
            for n in names
            if n in ("source.en", "docids") or n.startswith("reference.")
        }


def _json(path: str) -> Any:
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON ({json_reason(e)})", code=Code.FORMAT) from None


@dataclass(frozen=True)
class Edited:
    """What the measures read of a manifest line."""

    base: int
    doc: str  # the original document
    phenomenon: str
    edit: str
    distance: int


def read_suite(options: CueOptions) -> Tuple[List[Edited], List[int], str]:
    """The manifest's edited groups, the correct candidate of each (voita.json) and the hash of
    voita.json; anything else is one line naming the file (and line)."""
    manifest, voita, summary_path = options.suite_files()
    if os.path.exists(options.suite) and not os.path.isdir(options.suite):
        raise InputError(
            f"--suite {options.suite}: a file, not the counterfactual folder of `testset build --counterfactual`",
            code=Code.OPTION_VALUE,
        )
    if not os.path.isdir(options.suite):
        raise InputError(
            f"--suite {options.suite}: not found (the counterfactual folder of `testset build --counterfactual`)",
            code=Code.NOT_FOUND,
        )
    for path in (manifest, voita, summary_path):
        check_input_file(path, "counterfactual suite")
    summary = _json(summary_path)
    if not isinstance(summary, dict) or summary.get("counterfactual") is not True:
        raise InputError(
            f"{summary_path}: not the summary of a counterfactual suite "
            "(build one with `testset build --counterfactual`)",
            code=Code.MISMATCH,
        )
    check_unchanged(summary_path, summary)
    edited, places, origins = [], [], []
    for n, text in enumerate(read_lines(manifest), start=1):
        if not text.strip():
            continue
        try:
            r = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"{manifest}:{n}: not JSON ({json_reason(e, line=False)})", code=Code.FORMAT) from None
        if not isinstance(r, dict) or r.get("edit") not in EDITS:
            raise InputError(
                f"{manifest}:{n}: not an edited group (its 'edit' is none of {', '.join(EDITS)})", code=Code.FORMAT
            )
        try:
            edited.append(
                Edited(int(r["base"]), str(r["source_doc"]), str(r["phenomenon"]), r["edit"], int(r["distance"]))
            )
            places.append(int(r["line"]))
            origins.append((n, int(r["source_line"])))
        except (KeyError, TypeError, ValueError):
            raise InputError(
                f"{manifest}:{n}: needs base, source_doc, source_line, phenomenon, distance and line", code=Code.FORMAT
            ) from None
    if not edited:
        raise InputError(
            f"{manifest}: no edited group (rebuild the suite with `testset build --counterfactual`)", code=Code.MISMATCH
        )
    entries = _json(voita)
    if not isinstance(entries, list) or len(entries) != len(edited) or summary.get("groups") != len(edited):
        raise InputError(
            f"{manifest}: {len(edited)} edited groups, but {voita} and {summary_path} are of another build "
            "(rebuild the suite)",
            code=Code.MISMATCH,
        )
    correct = []
    for n, (g, line, entry) in enumerate(zip(edited, places, entries, strict=True), start=1):
        ok = isinstance(entry, dict) and entry.get("true_ind") in (0, 1) and isinstance(entry.get("dst"), list)
        if not ok or len(entry["dst"]) != 2:
            raise InputError(
                f"{voita}: group {n} is not a two-candidate group with its true_ind (rebuild the suite)",
                code=Code.FORMAT,
            )
        # each manifest line describes the voita group at its place: a line edited, moved or of another build
        # would pair the wrong decisions (a cue flip measured as an original)
        described = (g.edit, g.phenomenon, g.distance, line)
        if (entry.get("edit"), entry.get("phenomenon"), entry.get("ctx_dist"), entry.get("line")) != described:
            raise InputError(
                f"{manifest}:{n}: a {g.phenomenon} {g.edit} at distance {g.distance} ending at line {line}, but group "
                f"{n} of {voita} is a {entry.get('phenomenon')} {entry.get('edit')} at distance "
                f"{entry.get('ctx_dist')} ending at line {entry.get('line')} (a manifest edited by hand or of another "
                "build: rebuild the suite)",
                code=Code.MISMATCH,
            )
        correct.append(int(entry["true_ind"]))
    _check_bases(manifest, edited, origins)
    return edited, correct, file_sha256(voita)


def _check_bases(manifest: str, edited: Sequence[Edited], origins: Sequence[Tuple[int, int]]) -> None:
    """Every edited group's ``base`` names its original: the build writes each original group
    (edit 'original') and then its edits, of the same document, line and phenomenon, under one
    base. The measures pair each edit with its original by it: a base moved to another group would
    pair the wrong decisions, one out of range would drop the group."""
    originals = {e.base: n for e, (n, _) in zip(edited, origins, strict=True) if e.edit == "original"}
    current: Optional[Tuple[int, int, Tuple[str, int, str]]] = None  # the original above: line, base, group
    seen: set = set()
    for e, (n, line) in zip(edited, origins, strict=True):
        group = (e.doc, line, e.phenomenon)
        if e.edit == "original":
            if e.base in seen:
                raise InputError(
                    f"{manifest}:{n}: a second original group of base {e.base}: a manifest edited by hand or of "
                    "another build (rebuild the suite)",
                    code=Code.MISMATCH,
                )
            seen.add(e.base)
            current = (n, e.base, group)
            continue
        if e.base not in originals:
            raise InputError(
                f"{manifest}:{n}: base {e.base} names no original group of the suite: a manifest edited by hand "
                "or of another build (rebuild the suite)",
                code=Code.MISMATCH,
            )
        if current is None or e.base != current[1] or group != current[2]:
            raise InputError(
                f"{manifest}:{n}: a {e.phenomenon} {e.edit} of {e.doc!r} line {line}, but its base {e.base} is the "
                f"original at line {originals[e.base]}, not the original of its group (the one above it): a "
                "manifest edited by hand or of another build (rebuild the suite)",
                code=Code.MISMATCH,
            )


@dataclass
class Decisions:
    name: str
    right: np.ndarray  # per edited group
    context: Optional[Tuple[int, int]] = None  # the model's source/target context sizes


def contrastive_decisions(
    path: str, correct: Sequence[int], voita_hash: str, voita: str, written: Sequence[Tuple[str, Optional[str]]] = ()
) -> Decisions:
    """Per edited group, the first lowest loss is the correct candidate (``contrastive``'s rule).
    ``written``: (flag, path) of this command's outputs, which must not be the scores file."""
    check_input_file(path, "contrastive summary")
    s = _json(path)
    fp = s.get("fingerprint") if isinstance(s, dict) else None
    if not isinstance(fp, dict) or not isinstance(s.get("scores"), str):
        raise InputError(
            f"{path}: not the --summary of a `contextual-mt contrastive` run with a model", code=Code.FORMAT
        )
    if fp.get("input") != voita_hash or s.get("format") != "voita":
        raise InputError(
            f"{path}: scores of another test set (its input is not {voita} of this build): score the suite with "
            f"`contrastive --format voita --input {voita}`",
            code=Code.MISMATCH,
        )
    scores, digest = s["scores"], s.get("scores_sha256")
    # the path as written (relative to where contrastive ran), else the file of that name beside the summary;
    # with the scores' hash (where the summary records it), the one whose content is that run's
    places = [scores] + (
        [os.path.join(os.path.dirname(path), os.path.basename(scores))] if not os.path.isabs(scores) else []
    )
    found = [p for p in dict.fromkeys(places) if os.path.isfile(p)]
    if isinstance(digest, str) and found:
        same = [p for p in found if file_sha256(p) == digest]
        if not same:
            raise InputError(
                f"{path}: its scores {found[0]} were since rewritten (by another `contrastive` run?): score the suite "
                "again",
                code=Code.MISMATCH,
            )
        found = same
    scores = found[0] if found else places[-1]
    for flag, out in written:
        if out is not None and os.path.realpath(out) == os.path.realpath(scores):
            raise InputError(
                f"{out}: {flag} would overwrite the scores of {path}; write it elsewhere", code=Code.OUTPUT_IS_INPUT
            )
    losses = read_scores(scores, 2 * len(correct))
    right = np.array([group_is_right(losses[2 * k : 2 * k + 2], c, "argmin") for k, c in enumerate(correct)])
    name = os.path.basename(path)
    for suffix in (".json", ".summary"):
        name = name[: -len(suffix)] if name.endswith(suffix) else name
    sizes = (s.get("source_context_size"), s.get("target_context_size"))
    return Decisions(name, right, sizes if all(isinstance(x, int) for x in sizes) else None)


def evaluation_decisions(path: str, manifest: str, groups: int) -> List[Decisions]:
    """Per system of a `testset evaluate` result: the expected form present ('correct')."""
    check_input_file(path, "testset evaluate result")
    r = _json(path)
    if not isinstance(r, dict) or not isinstance(r.get("systems"), dict) or not isinstance(r.get("manifest"), str):
        raise InputError(f"{path}: not the --output of `contextual-mt testset evaluate`", code=Code.FORMAT)
    if isinstance(r.get("manifest_sha256"), str):  # by content: a relative path was relative to where it ran
        same = r["manifest_sha256"] == file_sha256(manifest)
    else:  # a result written before the hash was recorded
        same = os.path.isfile(r["manifest"]) and file_sha256(r["manifest"]) == file_sha256(manifest)
    if not same or r.get("groups") != groups:
        raise InputError(
            f"{path}: the evaluation of another manifest ({r['manifest']}), not {manifest} of this build: "
            f"run `testset evaluate --manifest {manifest}`",
            code=Code.MISMATCH,
        )
    decisions = []
    for name, s in r["systems"].items():
        outcomes = s.get("group_outcomes") if isinstance(s, dict) else None
        if not isinstance(outcomes, list) or len(outcomes) != groups:
            raise InputError(f"{path}: system {name} has no outcome for each of the {groups} groups", code=Code.FORMAT)
        decisions.append(Decisions(name, np.array([o == "correct" for o in outcomes])))
    return decisions


# ----------------------------------------------------------------------------- measures
def _items(edited: Sequence[Edited], right: np.ndarray) -> List[Tuple[int, str, str, bool]]:
    """(edited group, phenomenon, cell, hit) of every measure an edited group counts in."""
    original = {e.base: k for k, e in enumerate(edited) if e.edit == "original"}
    with_distractor = {e.base for e in edited if e.edit == "distractor"}
    items = []
    for k, e in enumerate(edited):
        o = original.get(e.base)
        if o is None:  # nothing to pair with
            continue
        cells: List[Tuple[str, bool]] = []
        if e.edit == "original":
            cells.append(("original", bool(right[k])))
            if e.base in with_distractor:
                cells.append(("distractor_original", bool(right[k])))
        elif e.edit == "cue_flip":
            cells.append(("cue_following", bool(right[k] and right[o])))
        elif e.edit == "control":
            cells.append(("control_stability", bool(right[k] == right[o])))
        elif e.edit == "distractor":
            cells.append(("distractor", bool(right[k])))
        if e.edit in ("original", "distance"):
            cells.append((f"distance:{e.distance}", bool(right[k])))
        items += [(k, e.phenomenon, cell, hit) for cell, hit in cells]
    return items


def _ci(values: np.ndarray) -> List[float]:
    tail = (1 - CONFIDENCE) / 2 * 100
    with np.errstate(invalid="ignore"):
        return [float(x) for x in np.nanpercentile(values, [tail, 100 - tail])]


def measure(edited: Sequence[Edited], d: Decisions, docs: np.ndarray, samples: Optional[np.ndarray]) -> Dict:
    """The measures of one system: overall and per phenomenon, with intervals when resampled."""
    items = _items(edited, d.right)
    phenomena = list(dict.fromkeys(e.phenomenon for e in edited))
    distances = sorted({int(c.split(":")[1]) for _, _, c, _ in items if c.startswith("distance:")})
    names = [*MEASURES, *(f"distance:{x}" for x in distances)]
    cells = [f"{scope}|{m}" for scope in ["all", *phenomena] for m in names]
    where = {c: n for n, c in enumerate(cells)}
    counts = np.zeros((int(docs.max()) + 1, len(cells), 2), dtype=np.int64)
    for k, p, cell, hit in items:
        for scope in ("all", p):
            counts[docs[k], where[f"{scope}|{cell}"], 0 if hit else 1] += 1
    totals = counts.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = totals[..., 0] / totals.sum(-1)
    with warnings.catch_warnings():  # cells without groups in a resample (or at all): NaN, not a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        ci = _intervals(counts, samples)
    result: Dict[str, Any] = {"context": list(d.context) if d.context else None, "all": {}, "phenomena": {}}
    for scope in ["all", *phenomena]:
        entry: Dict[str, Any] = {}
        curve: Dict[str, Any] = {}
        for m in names:
            c = where[f"{scope}|{m}"]
            if not totals[c].sum():
                continue
            figure = {
                "value": float(values[c]),
                "n": int(totals[c].sum()),
                "ci": None if ci is None else [float(ci[0, c, 0]), float(ci[1, c, 0])],
            }
            if m.startswith("distance:"):
                curve[m.split(":")[1]] = figure
            else:
                entry[m] = figure
        if "cue_following" in entry and "control_stability" in entry:
            pair = [where[f"{scope}|cue_following"], where[f"{scope}|control_stability"]]
            score: Dict[str, Any] = {"value": float(values[pair[0]] + values[pair[1]] - 1), "ci": None}
            if samples is not None:
                resampled = _resampled_totals(counts[:, pair], samples)
                with np.errstate(invalid="ignore", divide="ignore"):
                    fractions = resampled[..., 0] / resampled.sum(-1)
                score["ci"] = _ci(fractions[:, 0] + fractions[:, 1] - 1)
            entry["cue_score"] = score
        entry["distance"] = curve
        if scope == "all":
            result["all"] = entry
        else:
            result["phenomena"][scope] = entry
    return result


def measure_cues(options: CueOptions) -> Dict:
    """Every system's measures; the JSON and the plot written together after every check."""
    with outputs(options.output, options.plot):
        edited, correct, voita_hash = read_suite(options)
        manifest, voita, _ = options.suite_files()
        written = (("--output", options.output), ("--plot", options.plot))
        systems = [contrastive_decisions(p, correct, voita_hash, voita, written) for p in options.contrastive]
        if options.evaluation:
            systems += evaluation_decisions(options.evaluation, manifest, len(edited))
        names = [s.name for s in systems]
        if len(set(names)) != len(names):
            raise InputError(
                f"two systems are named alike ({', '.join(names)}): give files of distinct names",
                code=Code.OPTION_VALUE,
            )
        index: Dict[str, int] = {}
        docs = np.array([index.setdefault(e.doc, len(index)) for e in edited], dtype=np.int64)
        samples = bootstrap_samples(len(index), options.bootstrap, options.seed) if options.bootstrap else None
        result = {
            "suite": options.suite,
            "groups": len(edited),
            "documents": len(index),
            "bootstrap": options.bootstrap,
            "seed": options.seed,
            "confidence": CONFIDENCE,
            "notes": list(NOTES),
            "systems": {s.name: measure(edited, s, docs, samples) for s in systems},
        }
        if options.plot:
            plot_distance(options.plot, result)
        if options.output:
            atomic_write_text(options.output, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return result


def plot_distance(path: str, result: Dict) -> None:
    """Accuracy by cue distance, one panel per phenomenon, one line per system (95% intervals);
    a dotted line at each model's target context size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = result["systems"]
    scopes = list(next(iter(systems.values()))["phenomena"])
    fig, axes = plt.subplots(1, len(scopes), figsize=(4.2 * len(scopes), 3.4), squeeze=False, sharey=True)
    for ax, scope in zip(axes[0], scopes, strict=True):
        for n, (name, s) in enumerate(systems.items()):
            curve = s["phenomena"][scope]["distance"]
            xs = sorted(curve, key=int)
            ys = [curve[x]["value"] for x in xs]
            color = f"C{n}"
            ax.plot([int(x) for x in xs], ys, marker="o", label=name, color=color)
            if all(curve[x]["ci"] for x in xs):
                ax.fill_between(
                    [int(x) for x in xs],
                    [curve[x]["ci"][0] for x in xs],
                    [curve[x]["ci"][1] for x in xs],
                    alpha=0.2,
                    color=color,
                )
            if s["context"]:
                ax.axvline(max(s["context"]), linestyle=":", color=color)
        ax.set_title(scope)
        ax.set_xlabel("cue distance (sentences back)")
        ax.set_ylim(-0.02, 1.02)
    axes[0][0].set_ylabel("accuracy")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    try:
        atomic_save_figure(fig, path)
    finally:
        plt.close(fig)


def _cell(entry: Dict, m: str, interval: bool = True) -> str:
    c = entry.get(m)
    if not c:
        return "-"
    text = f"{100 * c['value']:.1f}"
    return text + (f" [{100 * c['ci'][0]:.1f}-{100 * c['ci'][1]:.1f}]" if interval and c.get("ci") else "")


def format_cues_table(result: Dict) -> str:
    """Per system and phenomenon: the cue score and cue-following (with their intervals), control
    stability, the accuracy on the originals and with a distractor (intervals in the JSON); then
    the distance curve."""
    from contextual_mt.testsets.evaluate import _table

    header = ["system", "phenomenon", "cue score", "following", "control stable", "original", "distractor"]
    rows = []
    for name, s in result["systems"].items():
        for scope, entry in [("all", s["all"]), *s["phenomena"].items()]:
            rows.append(
                [
                    name,
                    scope,
                    *(_cell(entry, m) for m in ("cue_score", "cue_following")),
                    *(_cell(entry, m, interval=False) for m in ("control_stability", "original", "distractor")),
                ]
            )
    lines = ["% [95% CI]" if result["bootstrap"] else "%", *_table(header, rows)]
    lines.append("% accuracy by cue distance (sentences back), all phenomena:")
    for name, s in result["systems"].items():
        curve = s["all"]["distance"]
        lines.append(f"  {name}: " + ", ".join(f"{d}: {100 * curve[d]['value']:.1f}" for d in sorted(curve, key=int)))
    return "\n".join(lines)
