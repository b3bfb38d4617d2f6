"""Reading one language's results (``eval.json`` of ``make muda-eval``, ``scores.json`` of
``make score``): every value the table uses is checked, and a bad file is one line naming it and
the make target that writes it."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from commandkit.errors import json_reason
from commandkit.text import check_input_file, read_lines
from contextual_mt.errors import Code, InputError
from contextual_mt.pipeline.results_table.options import BASELINE, NO_TAG, TableOptions


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
        raise InputError(message, code=e.code) from None
    if not text.strip():
        raise InputError(f"{path}: empty file; {again} again", code=Code.EMPTY)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(
            f"{path}:{e.lineno}: not valid JSON ({json_reason(e, line=False)}); {again} again", code=Code.FORMAT
        ) from None


# a document-level output's alignment statistics (contextual_mt.system_outputs), columns of the table
ALIGNMENT_FIGURES = ("merges", "splits", "omissions", "additions", "mean_link_score")


def _number(value: Any, path: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{path}: {where} is not a number (got {value!r})", code=Code.FORMAT)
    return float(value)


def _mapping(value: Any, path: str, where: str) -> Dict:
    if not isinstance(value, dict):
        raise InputError(f"{path}: {where} is not an object (got {type(value).__name__})", code=Code.FORMAT)
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
    muda: bool = True  # False: no eval.json (muda-eval not run): BLEU and COMET from scores.json, no tags
    cxmi: Optional[float] = None  # the context model's corpus CXMI (pcxmi.summary.json), when computed
    cxmi_unit: Optional[str] = None


def read_cxmi(options: TableOptions, lang: str) -> Tuple[Optional[float], Optional[str]]:
    """The context model's CXMI and its unit from ``make pcxmi``'s summary; (None, None) when
    P-CXMI was not computed for the language."""
    path = os.path.join(options.results_dir, lang, "pcxmi.summary.json")
    if not os.path.lexists(path):
        return None, None
    summary = _mapping(_read_json(path, f"make pcxmi LANG={lang}"), path, "the file")
    unit = summary.get("unit")
    if not isinstance(unit, str):
        raise InputError(
            f"{path}: no 'unit'; not a `contextual-mt cxmi` summary? run `make pcxmi LANG={lang}` again",
            code=Code.FORMAT,
        )
    return _number(summary.get("cxmi"), path, "'cxmi'"), unit


def muda_missing_note(lang: str) -> str:
    """What the table says of a language whose MuDA evaluation was not run."""
    return f"MuDA: not run for {lang} (make muda-eval LANG={lang})"


def read_language(options: TableOptions, lang: str) -> LanguageResults:
    """Read and check ``eval.json`` and ``scores.json`` of one language."""
    eval_path, scores_path = options.eval_path(lang), options.scores_path(lang)
    if not os.path.lexists(eval_path):  # not run (yet): the other columns are still worth a table
        return _without_muda(options, lang)
    ev = _mapping(_read_json(eval_path, f"make muda-eval LANG={lang}"), eval_path, "the file")
    sc = _mapping(_read_json(scores_path, f"make score LANG={lang}"), scores_path, "the file")
    again = f"run `make muda-eval LANG={lang}` again"
    for key in ("systems", "tags"):
        if key not in ev:
            raise InputError(f"{eval_path}: no {key!r}; not a `muda eval` result? {again}", code=Code.FORMAT)
    recorded = ev.get("language")
    if isinstance(recorded, str) and not _same_language(recorded, lang):
        raise InputError(
            f"{eval_path}: evaluates target language {recorded!r}, not {lang!r}; {again}", code=Code.MISMATCH
        )
    systems = _mapping(ev["systems"], eval_path, "'systems'")
    if not isinstance(ev["tags"], list) or not all(isinstance(t, str) for t in ev["tags"]):
        raise InputError(f"{eval_path}: 'tags' is not a list of tag names", code=Code.FORMAT)
    tags = [t for t in ev["tags"] if t != NO_TAG]

    eval_names: Dict[str, str] = {}
    for name, s in systems.items():
        key = system_key(name, lang)
        if key in eval_names:
            raise InputError(
                f"{eval_path}: systems {eval_names[key]!r} and {name!r} are both system {key!r}", code=Code.FORMAT
            )
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
        raise InputError(
            f"{eval_path}: no sentence-level baseline system {BASELINE!r} (or "
            f"'{BASELINE}.test.{lang}'); its systems are {', '.join(systems) or 'none'}; "
            f"evaluate {os.path.join(options.results_dir, lang, BASELINE)}.test.{lang} with the others "
            f"(`make muda-eval LANG={lang}`)",
            code=Code.NOT_FOUND,
        )
    keys = [BASELINE] + [system_key(n, lang) for n in systems if system_key(n, lang) != BASELINE]

    scored = _scored_systems(sc, scores_path, lang)
    if set(scored) != set(keys):
        only_eval = [k for k in keys if k not in scored]
        only_scores = [k for k in scored if k not in eval_names]
        differences = ([f"{', '.join(only_eval)} only in {eval_path}"] if only_eval else []) + (
            [f"{', '.join(only_scores)} only in {scores_path}"] if only_scores else []
        )
        raise InputError(
            f"{scores_path}: its systems ({', '.join(scored) or 'none'}) differ from those of "
            f"{eval_path} ({', '.join(keys)}): {'; '.join(differences)}; score and evaluate the "
            f"same systems (`make score LANG={lang}`, `make muda-eval LANG={lang}`)",
            code=Code.MISMATCH,
        )

    for key in keys:  # the same file both times: sacreBLEU's BLEU of it is the same number in both
        in_eval, in_scores = float(systems[eval_names[key]]["bleu"]), float(scored[key]["bleu"]["score"])
        if abs(in_eval - in_scores) > 0.005:
            raise InputError(
                f"{scores_path}: system {key!r} has BLEU {in_scores:.2f} but {in_eval:.2f} in {eval_path}: "
                f"they scored different files (an output made again in between?); score and evaluate it again "
                f"(`make score LANG={lang} HYPS=...`, `make muda-eval LANG={lang} HYPS=...`)",
                code=Code.MISMATCH,
            )

    baseline_tags = systems[eval_names[BASELINE]]["tags"]
    result = LanguageResults(
        lang,
        eval_path,
        scores_path,
        keys,
        eval_names,
        ev,
        scored,
        tags,
        {t: int(baseline_tags[t]["ref_words"]) for t in tags},
    )
    result.comparisons = _baseline_comparisons(ev, eval_path, eval_names, tags)
    result.cxmi, result.cxmi_unit = read_cxmi(options, lang)
    return result


def _scored_systems(sc: Any, scores_path: str, lang: str) -> Dict[str, Dict]:
    """scores.json's systems, every score the table uses checked."""
    if "systems" not in sc:
        raise InputError(f"{scores_path}: no 'systems'; run `make score LANG={lang}` again", code=Code.FORMAT)
    scored = _mapping(sc["systems"], scores_path, "'systems'")
    for key, r in scored.items():
        r = _mapping(r, scores_path, f"system {key!r}")
        for metric in ("bleu", "chrf", "d_bleu", "comet"):
            if metric in ("bleu", "chrf") or metric in r:
                m = _mapping(r.get(metric), scores_path, f"{metric!r} of system {key!r}")
                _number(m.get("score"), scores_path, f"the {metric} score of system {key!r}")
        if "alignment" in r:  # a document-level output's (make score HYPS=...)
            a = _mapping(r["alignment"], scores_path, f"the alignment of system {key!r}")
            for what in ALIGNMENT_FIGURES:
                if what != "mean_link_score" or a.get(what) is not None:
                    _number(a.get(what), scores_path, f"the alignment's {what} of system {key!r}")
    return scored


def _without_muda(options: TableOptions, lang: str) -> LanguageResults:
    """A language with scores.json but no eval.json: its rows from scores.json alone (BLEU, chrF,
    d-BLEU, COMET when scored; nothing tested), its MuDA columns marked missing."""
    eval_path, scores_path = options.eval_path(lang), options.scores_path(lang)
    try:
        sc = _mapping(_read_json(scores_path, f"make score LANG={lang}"), scores_path, "the file")
    except InputError as e:  # neither file: both make targets are to run
        raise InputError(f"{e} (and `make muda-eval LANG={lang}` for the MuDA columns)", code=e.code) from None
    scored = _scored_systems(sc, scores_path, lang)
    if BASELINE not in scored:
        raise InputError(
            f"{scores_path}: no sentence-level baseline system {BASELINE!r}; its systems are "
            f"{', '.join(scored) or 'none'}; score it with the others (`make score LANG={lang}`)",
            code=Code.NOT_FOUND,
        )
    keys = [BASELINE] + [k for k in scored if k != BASELINE]
    result = LanguageResults(
        lang,
        eval_path,
        scores_path,
        keys,
        {k: k for k in keys},
        {"systems": {k: {} for k in keys}},
        scored,
        [],
        {},
        muda=False,
    )
    result.cxmi, result.cxmi_unit = read_cxmi(options, lang)
    return result


def _baseline_comparisons(ev: Dict, path: str, eval_names: Dict[str, str], tags: Sequence[str]) -> Dict[str, Dict]:
    """Each system's comparison with the baseline (either order in eval.json's pairs)."""
    comparisons = ev.get("comparisons") or []
    if not isinstance(comparisons, list):
        raise InputError(f"{path}: 'comparisons' is not a list", code=Code.FORMAT)
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
            raise InputError(
                f"{path}: comparison {n} names system {other!r}, which is not in 'systems'", code=Code.FORMAT
            )
        where = f"comparison {n} ({c.get('a')} vs {c.get('b')})"
        _number(c.get("bleu_p"), path, f"the BLEU p-value of {where}")
        if "comet_p" in c:
            _number(c["comet_p"], path, f"the COMET p-value of {where}")
        ctags = _mapping(c.get("tags"), path, f"the tags of {where}")
        for t in tags:
            _number(
                _mapping(ctags.get(t), path, f"tag {t!r} of {where}").get("f"),
                path,
                f"the f-measure p-value of tag {t!r} of {where}",
            )
        found[by_name[other]] = c
    return found
