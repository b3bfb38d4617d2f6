"""``contextual-mt pipeline table`` (``make table LANGS="de fr ja"``): the cross-language results
table of the study, laid out like Table 10 of the MuDA paper (Fernandes et al., 2023) with its
rows and columns swapped: one row per language and system, with BLEU, COMET and the word
f-measure per MuDA tag, a value significantly better than the sentence-level system of the same
language (paired bootstrap, p < alpha) marked, and chrF and d-BLEU as extra columns.

Inputs, per target language ``xx`` (the source is English):

- ``RESULTS/xx/muda/eval.json`` (``make muda-eval LANG=xx``): BLEU, COMET, per-tag word
  precision/recall/f-measure of each system, and the paired-bootstrap p-values of every pair;
- ``RESULTS/xx/scores.json`` (``make score LANG=xx``): sacreBLEU BLEU, chrF, d-BLEU (and COMET)
  of each system, from ``contextual_mt.metrics.score_files``.

``muda eval`` names a system by its hypothesis file (``sentence.test.xx``) unless given
``--names``; both name the same system here (``sentence``). Outputs, in ``output_dir``:
``table.md``, ``table.csv``, ``table.json`` and ``table.png`` (a figure like the paper's
Figure 2), written together through ``muda.io.outputs`` (all of them, or none on failure).
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from contextual_mt.errors import ContextualMTError, InputError, check_option
from muda.io import atomic_save_figure, atomic_write_text, check_input_file, outputs, read_lines

BASELINE = "sentence"  # the sentence-level system every other system is compared with
OUTPUT_FILES = ("table.md", "table.csv", "table.json", "table.png")
NO_TAG = "no tag"  # muda eval's count of untagged words: not a phenomenon
_LANG_CODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


# ----------------------------------------------------------------------------- options
@dataclass
class TableOptions:
    """The languages to gather (``LANGS``), where their results are, where to write the table,
    and the significance level. Validated when built, before any file is read."""

    langs: Sequence[str]
    results_dir: str = "results"
    output_dir: Optional[str] = None  # default: RESULTS_DIR/table
    alpha: float = 0.05  # a p-value below this, with a better value, is marked

    def __post_init__(self) -> None:
        self.langs = _language_list(self.langs)
        if not isinstance(self.results_dir, str) or not self.results_dir:
            raise ContextualMTError(f"--results-dir: give a directory (got {self.results_dir!r})")
        if self.output_dir is None:
            self.output_dir = os.path.join(self.results_dir, "table")
        if not isinstance(self.output_dir, str) or not self.output_dir:
            raise ContextualMTError(f"--output-dir: give a directory (got {self.output_dir!r})")
        check_option("--alpha", self.alpha, minimum=0, maximum=1)
        if self.alpha == 0:
            raise ContextualMTError("--alpha must be > 0 (got 0: no difference could be significant)")

    def eval_path(self, lang: str) -> str:
        return os.path.join(self.results_dir, lang, "muda", "eval.json")

    def scores_path(self, lang: str) -> str:
        return os.path.join(self.results_dir, lang, "scores.json")

    def output_path(self, name: str) -> str:
        return os.path.join(self.output_dir, name)


def _language_list(langs: Any) -> List[str]:
    """LANGS as a list of codes: a list, or one string of codes separated by spaces or commas
    (``--langs "de fr"`` quoted). Empty lists and repeated codes are errors."""
    if isinstance(langs, str):
        langs = [langs]
    if not isinstance(langs, (list, tuple)) or not all(isinstance(x, str) for x in langs):
        raise ContextualMTError(f"--langs: give a list of target language codes (got {langs!r})")
    codes = [code for item in langs for code in re.split(r"[\s,]+", item) if code]
    if not codes:
        raise ContextualMTError('--langs: no target language given; list the pairs to gather, e.g. '
                                'make table LANGS="de fr ja"')
    seen = set()
    for code in codes:
        if not _LANG_CODE.match(code):
            raise ContextualMTError(f"--langs: {code!r} is not a language code (it names the directory "
                                    f"RESULTS_DIR/{code})")
        if code in seen:
            raise ContextualMTError(f"--langs: language {code!r} given twice ({' '.join(codes)})")
        seen.add(code)
    return codes


# ----------------------------------------------------------------------------- reading
def _read_json(path: str, make_target: str) -> Any:
    """A results file, or one line naming it (and the line of a JSON error, and the make target
    that writes it)."""
    again = f"run `{make_target}` to produce it"
    try:
        check_input_file(path, "results file")
        text = "\n".join(read_lines(path))
    except InputError as e:
        message = str(e)
        if message.endswith("not found"):
            message += f"; {again}"
        raise ContextualMTError(message) from None
    if not text.strip():
        raise ContextualMTError(f"{path}: empty file; {again} again")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ContextualMTError(f"{path}:{e.lineno}: not valid JSON ({e.msg}, column {e.colno}); {again} "
                                f"again") from None


def _number(value: Any, path: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ContextualMTError(f"{path}: {where} is not a number (got {value!r})")
    return float(value)


def _mapping(value: Any, path: str, where: str) -> Dict:
    if not isinstance(value, dict):
        raise ContextualMTError(f"{path}: {where} is not an object (got {type(value).__name__})")
    return value


def system_key(name: str, lang: str) -> str:
    """The system a ``muda eval`` name stands for: the hypothesis file name without its
    ``.test.xx`` (or ``.xx``) ending, so ``sentence.test.de`` and ``sentence`` are one system."""
    for suffix in (f".test.{lang}", f".{lang}"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _same_language(a: str, b: str) -> bool:
    from muda.languages import get_language

    try:
        return get_language(a).code == get_language(b).code
    except InputError:
        return a.lower().replace("_", "-") == b.lower().replace("_", "-")


@dataclass
class LanguageResults:
    """One language's results, checked: systems by their key, baseline first."""

    lang: str
    eval_path: str
    scores_path: str
    systems: List[str]  # keys, the baseline first, then as muda eval lists them
    eval_names: Dict[str, str]  # key -> the name in eval.json
    evaluation: Dict  # eval.json
    scores: Dict[str, Dict]  # key -> score_files' result
    tags: List[str]  # eval.json's tags (phenomena only)
    ref_words: Dict[str, int]  # tagged reference words per tag
    comparisons: Dict[str, Dict] = field(default_factory=dict)  # key -> its comparison with the baseline


def read_language(options: TableOptions, lang: str) -> LanguageResults:
    """Read and check ``eval.json`` and ``scores.json`` of one language."""
    eval_path, scores_path = options.eval_path(lang), options.scores_path(lang)
    ev = _mapping(_read_json(eval_path, f"make muda-eval LANG={lang}"), eval_path, "the file")
    sc = _mapping(_read_json(scores_path, f"make score LANG={lang}"), scores_path, "the file")
    again = f"run `make muda-eval LANG={lang}` again"
    for key in ("systems", "tags"):
        if key not in ev:
            raise ContextualMTError(f"{eval_path}: no {key!r}; not a `muda eval` result? {again}")
    recorded = ev.get("language")
    if isinstance(recorded, str) and not _same_language(recorded, lang):
        raise ContextualMTError(f"{eval_path}: evaluates target language {recorded!r}, not {lang!r}; {again}")
    systems = _mapping(ev["systems"], eval_path, "'systems'")
    if not isinstance(ev["tags"], list) or not all(isinstance(t, str) for t in ev["tags"]):
        raise ContextualMTError(f"{eval_path}: 'tags' is not a list of tag names")
    tags = [t for t in ev["tags"] if t != NO_TAG]

    eval_names: Dict[str, str] = {}
    for name, s in systems.items():
        key = system_key(name, lang)
        if key in eval_names:
            raise ContextualMTError(f"{eval_path}: systems {eval_names[key]!r} and {name!r} are both system "
                                    f"{key!r}")
        eval_names[key] = name
        s = _mapping(s, eval_path, f"system {name!r}")
        _number(s.get("bleu"), eval_path, f"the BLEU of system {name!r}")
        if "comet" in s:
            _number(s["comet"], eval_path, f"the COMET of system {name!r}")
        stags = _mapping(s.get("tags"), eval_path, f"the tags of system {name!r}")
        for t in tags:
            score = _mapping(stags.get(t), eval_path, f"tag {t!r} of system {name!r}")
            _number(score.get("f"), eval_path, f"the f-measure of tag {t!r} of system {name!r}")
            _number(score.get("ref_words"), eval_path, f"the reference words of tag {t!r} of system {name!r}")
    if BASELINE not in eval_names:
        raise ContextualMTError(f"{eval_path}: no sentence-level baseline system {BASELINE!r} (or "
                                f"'{BASELINE}.test.{lang}'); its systems are {', '.join(systems) or 'none'}; "
                                f"evaluate {os.path.join(options.results_dir, lang, BASELINE)}.test.{lang} with the others (`make muda-eval "
                                f"LANG={lang}`)")
    keys = [BASELINE] + [system_key(n, lang) for n in systems if system_key(n, lang) != BASELINE]

    if "systems" not in sc:
        raise ContextualMTError(f"{scores_path}: no 'systems'; run `make score LANG={lang}` again")
    scored = _mapping(sc["systems"], scores_path, "'systems'")
    if set(scored) != set(keys):
        only_eval = [k for k in keys if k not in scored]
        only_scores = [k for k in scored if k not in eval_names]
        differences = ([f"{', '.join(only_eval)} only in {eval_path}"] if only_eval else []) + \
                      ([f"{', '.join(only_scores)} only in {scores_path}"] if only_scores else [])
        raise ContextualMTError(f"{scores_path}: its systems ({', '.join(scored) or 'none'}) differ from those of "
                                f"{eval_path} ({', '.join(keys)}): {'; '.join(differences)}; score and evaluate the "
                                f"same systems (`make score LANG={lang}`, `make muda-eval LANG={lang}`)")
    for key, r in scored.items():
        r = _mapping(r, scores_path, f"system {key!r}")
        for metric in ("bleu", "chrf", "d_bleu", "comet"):
            if metric in ("bleu", "chrf") or metric in r:
                m = _mapping(r.get(metric), scores_path, f"{metric!r} of system {key!r}")
                _number(m.get("score"), scores_path, f"the {metric} score of system {key!r}")

    baseline_tags = systems[eval_names[BASELINE]]["tags"]
    result = LanguageResults(lang, eval_path, scores_path, keys, eval_names, ev, scored, tags,
                             {t: int(baseline_tags[t]["ref_words"]) for t in tags})
    result.comparisons = _baseline_comparisons(ev, eval_path, eval_names, tags)
    return result


def _baseline_comparisons(ev: Dict, path: str, eval_names: Dict[str, str], tags: Sequence[str]) -> Dict[str, Dict]:
    """Each system's comparison with the baseline (either order in eval.json's pairs)."""
    comparisons = ev.get("comparisons") or []
    if not isinstance(comparisons, list):
        raise ContextualMTError(f"{path}: 'comparisons' is not a list")
    base = eval_names[BASELINE]
    by_name = {name: key for key, name in eval_names.items()}
    found: Dict[str, Dict] = {}
    for n, c in enumerate(comparisons, start=1):
        c = _mapping(c, path, f"comparison {n}")
        pair = {c.get("a"), c.get("b")}
        if base not in pair or len(pair) != 2:
            continue
        other = (pair - {base}).pop()
        if other not in by_name:
            raise ContextualMTError(f"{path}: comparison {n} names system {other!r}, which is not in 'systems'")
        where = f"comparison {n} ({c.get('a')} vs {c.get('b')})"
        _number(c.get("bleu_p"), path, f"the BLEU p-value of {where}")
        if "comet_p" in c:
            _number(c["comet_p"], path, f"the COMET p-value of {where}")
        ctags = _mapping(c.get("tags"), path, f"the tags of {where}")
        for t in tags:
            _number(_mapping(ctags.get(t), path, f"tag {t!r} of {where}").get("f"), path,
                    f"the f-measure p-value of tag {t!r} of {where}")
        found[by_name[other]] = c
    return found


# ----------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class Column:
    key: str  # in table.json and table.csv
    label: str  # in table.md
    digits: int
    tested: bool  # has a significance test (from eval.json's comparisons)
    source: str


def _tag_columns(languages: Sequence[LanguageResults]) -> List[str]:
    """MuDA tags with tagged reference words in some language: the registry's order, then any
    other tag the results name."""
    from muda.phenomena.registry import phenomenon_names

    order = phenomenon_names()
    applying = {t for lr in languages for t in lr.tags if lr.ref_words.get(t, 0) > 0}
    return [t for t in order if t in applying] + sorted(applying - set(order))


def _comet(lr: LanguageResults, key: str) -> Tuple[Optional[float], Optional[str]]:
    """A system's COMET: muda eval's (tested), else score_files' (untested), else none."""
    s = lr.evaluation["systems"][lr.eval_names[key]]
    if "comet" in s:
        return float(s["comet"]), "eval.json"
    if "comet" in lr.scores[key]:
        return float(lr.scores[key]["comet"]["score"]), "scores.json"
    return None, None


def gather(options: TableOptions, languages: Sequence[LanguageResults]) -> Dict:
    """The numbers of the table (what table.json holds)."""
    tags = _tag_columns(languages)
    with_comet = any(_comet(lr, k)[0] is not None for lr in languages for k in lr.systems)
    with_dbleu = any("d_bleu" in lr.scores[k] for lr in languages for k in lr.systems)
    columns = [Column("bleu", "BLEU", 2, True, "eval.json")]
    if with_comet:
        columns.append(Column("comet", "COMET", 4, True, "eval.json (scores.json when eval.json has none)"))
    columns += [Column(t, t, 3, True, "eval.json") for t in tags]
    columns.append(Column("chrf", "chrF", 2, False, "scores.json"))
    if with_dbleu:
        columns.append(Column("d_bleu", "d-BLEU", 2, False, "scores.json"))

    rows, langs_info = [], {}
    for lr in languages:
        comet_from = {k: _comet(lr, k)[1] for k in lr.systems}
        values = {k: _values(lr, k, tags, with_comet, with_dbleu) for k in lr.systems}
        base = values[BASELINE]
        for k in lr.systems:
            p: Dict[str, Optional[float]] = {c.key: None for c in columns}
            c = lr.comparisons.get(k)
            if k != BASELINE and c is not None:
                p["bleu"] = float(c["bleu_p"])
                if with_comet and comet_from[k] == "eval.json" and comet_from[BASELINE] == "eval.json":
                    p["comet"] = float(c["comet_p"]) if "comet_p" in c else None
                for t in tags:
                    if values[k][t] is not None:
                        p[t] = float(c["tags"][t]["f"])
            significant = {col.key: bool(p[col.key] is not None and p[col.key] < options.alpha
                                         and values[k][col.key] is not None and base[col.key] is not None
                                         and values[k][col.key] > base[col.key]) for col in columns}
            rows.append({"language": lr.lang, "system": k, "eval_name": lr.eval_names[k], "baseline": k == BASELINE,
                         "values": values[k], "p": p, "significant": significant})
        tested = all(k in lr.comparisons for k in lr.systems if k != BASELINE)
        langs_info[lr.lang] = {
            "eval": lr.eval_path, "scores": lr.scores_path, "systems": lr.systems,
            "bootstrap": lr.evaluation.get("bootstrap"), "tested": tested,
            "tags": lr.tags, "ref_words": lr.ref_words,
            "comet_from": sorted({v for v in comet_from.values() if v})}
    return {"langs": list(options.langs), "baseline": BASELINE, "alpha": options.alpha,
            "results_dir": options.results_dir, "tags": tags,
            "columns": [vars(c) for c in columns], "rows": rows, "languages": langs_info,
            "files": {name: options.output_path(name) for name in OUTPUT_FILES}}


def _values(lr: LanguageResults, key: str, tags: Sequence[str], with_comet: bool,
            with_dbleu: bool) -> Dict[str, Optional[float]]:
    s, r = lr.evaluation["systems"][lr.eval_names[key]], lr.scores[key]
    values: Dict[str, Optional[float]] = {"bleu": float(s["bleu"])}
    if with_comet:
        values["comet"] = _comet(lr, key)[0]
    for t in tags:  # None: the tag does not apply here (no tagged reference words)
        values[t] = float(s["tags"][t]["f"]) if t in lr.tags and lr.ref_words[t] > 0 else None
    values["chrf"] = float(r["chrf"]["score"])
    if with_dbleu:
        values["d_bleu"] = float(r["d_bleu"]["score"]) if "d_bleu" in r else None
    return values


# ----------------------------------------------------------------------------- formats
def format_markdown(table: Dict) -> str:
    """table.md: the table, the legend, the counts of tagged reference words."""
    columns = [Column(**c) for c in table["columns"]]
    alpha = table["alpha"]
    lines = [f"# Context-aware MT, English to {', '.join(table['langs'])}", "",
             "| language | system | " + " | ".join(c.label for c in columns) + " |",
             "|---|---|" + "---:|" * len(columns)]
    for row in table["rows"]:
        cells = []
        for c in columns:
            value = row["values"][c.key]
            text = "-" if value is None else f"{value:.{c.digits}f}"
            cells.append(f"**{text}**" if row["significant"][c.key] else text)
        lines.append(f"| {row['language']} | {row['system']} | " + " | ".join(cells) + " |")
    tagged = "; ".join(f"{lang}: " + (", ".join(f"{t} {n}" for t, n in info["ref_words"].items()) or "none")
                       for lang, info in table["languages"].items())
    lines += ["", f"**Bold**: significantly better than the `{table['baseline']}` system of the same language "
                  f"(paired bootstrap over documents, p < {alpha:g}, from `muda eval`). "
                  "Tag columns: word f-measure per MuDA tag; `-`: the tag does not apply to the language "
                  "(no tagged reference words), or the metric was not computed.",
              "BLEU, COMET and word f-measure: `RESULTS/xx/muda/eval.json`; chrF and d-BLEU: "
              "`RESULTS/xx/scores.json` (no significance test).", "",
              f"Tagged reference words: {tagged}."]
    untested = [lang for lang, info in table["languages"].items() if not info["tested"]]
    if untested:
        lines.append(f"No paired bootstrap in eval.json (`muda eval --bootstrap 0`) for {', '.join(untested)}: "
                     "nothing marked there.")
    lines += ["", "![BLEU, COMET and word f-measure per tag](table.png)", ""]
    return "\n".join(lines)


def format_csv(table: Dict) -> str:
    """table.csv: one row per language and system; each value at full precision ('-': does not
    apply), and beside each tested value a ``_sig`` column ('*': significantly better)."""
    columns = [Column(**c) for c in table["columns"]]
    header = ["language", "system"]
    for c in columns:
        header += [c.key, f"{c.key}_sig"] if c.tested else [c.key]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in table["rows"]:
        cells = [row["language"], row["system"]]
        for c in columns:
            value = row["values"][c.key]
            cells.append("-" if value is None else repr(value))
            if c.tested:
                cells.append("*" if row["significant"][c.key] else "")
        writer.writerow(cells)
    return out.getvalue()


def plot_table(path: str, table: Dict) -> None:
    """table.png, like Figure 2 of the paper: one panel per metric (BLEU / 100, COMET, the word
    f-measure of each tag), bars per language and system, '*' over a value significantly better
    than the sentence-level system, '∅' where the tag does not apply."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    panels = [Column(**c) for c in table["columns"] if c["tested"]]
    langs = list(table["languages"])
    systems: List[str] = []
    for row in table["rows"]:
        if row["system"] not in systems:
            systems.append(row["system"])
    rows = {(r["language"], r["system"]): r for r in table["rows"]}
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(max(4.5, 1.3 * len(langs) + 1.5) * ncols, 3.4 * nrows),
                             squeeze=False)
    width = 0.8 / max(len(systems), 1)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    x = np.arange(len(langs))
    for ax, col in zip(axes.flat, panels):
        scale = 100.0 if col.key == "bleu" else 1.0
        shown: List[float] = []
        for k, system in enumerate(systems):
            offset = (k - (len(systems) - 1) / 2) * width
            for j, lang in enumerate(langs):
                row = rows.get((lang, system))
                value = None if row is None else row["values"][col.key]
                if value is None:
                    continue
                v = value / scale
                shown.append(v)
                ax.bar(x[j] + offset, v, width, color=colors[k % len(colors)])
                if row["significant"][col.key]:
                    ax.text(x[j] + offset, max(v, 0) + 0.02, "*", ha="center", fontsize=13)
        for j, lang in enumerate(langs):
            if all((rows.get((lang, s)) or {"values": {col.key: None}})["values"][col.key] is None for s in systems):
                ax.text(x[j], 0.05, "∅", ha="center", fontsize=13)
        low = min([0.0, *shown])
        ax.set_ylim(low - (0.05 if low < 0 else 0), max([1.0, *shown]) + 0.15)
        ax.set_xlim(-0.5, len(langs) - 0.5)
        ax.set_xticks(x)
        ax.set_xticklabels(langs)
        ax.set_title("BLEU / 100" if col.key == "bleu" else col.label if col.key == "comet"
                     else f"{col.label} (word f-measure)", fontsize=10)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[k % len(colors)]) for k in range(len(systems))]
    fig.legend(handles, systems, loc="upper right", ncol=len(systems), fontsize=9, frameon=False)
    fig.suptitle(f"* p < {table['alpha']:g} better than {table['baseline']} (paired bootstrap); "
                 "∅ the tag does not apply", fontsize=10, x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    try:
        atomic_save_figure(fig, path)
    finally:
        plt.close(fig)


# ----------------------------------------------------------------------------- the command
def build_table(options: TableOptions) -> Dict:
    """Read every language's results and write table.md, table.csv, table.json and table.png
    into ``options.output_dir`` (checked writable before anything is read; all four files, or
    none on any error). Returns what table.json holds."""
    o = options
    try:
        with outputs(*(o.output_path(name) for name in OUTPUT_FILES), directories=[o.output_dir]):
            languages = [read_language(o, lang) for lang in o.langs]
            table = gather(o, languages)
            atomic_write_text(o.output_path("table.md"), format_markdown(table))
            atomic_write_text(o.output_path("table.csv"), format_csv(table))
            atomic_write_text(o.output_path("table.json"), json.dumps(table, indent=2, ensure_ascii=False) + "\n")
            plot_table(o.output_path("table.png"), table)
            return table
    except ContextualMTError:
        raise
    except InputError as e:  # muda's (an output that cannot be written): one error type for callers
        raise ContextualMTError(str(e)) from None


def _table_command(args: argparse.Namespace) -> int:
    table = build_table(TableOptions(args.langs, args.results_dir, args.output_dir, args.alpha))
    print(format_markdown(table))
    print("wrote " + ", ".join(table["files"].values()))
    return 0


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``table`` subcommand (``contextual-mt pipeline table``)."""
    p = subparsers.add_parser("table", help="the cross-language results table (BLEU, COMET, word f-measure per "
                              "MuDA tag; significance against the sentence-level system)")
    p.add_argument("--langs", nargs="+", required=True, help="target languages, e.g. --langs de fr ja")
    p.add_argument("--results-dir", default="results",
                   help="where RESULTS/xx/muda/eval.json and RESULTS/xx/scores.json are (default: results)")
    p.add_argument("--output-dir", default=None,
                   help="where table.md, table.csv, table.json and table.png go (default: RESULTS_DIR/table, "
                        "i.e. results/table)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    p.set_defaults(func=_table_command, output_dir_args=("output_dir",))
    return p


__all__ = ["TableOptions", "build_table", "add_parser", "read_language", "gather", "format_markdown",
           "format_csv", "plot_table", "system_key", "LanguageResults", "BASELINE", "OUTPUT_FILES"]
