"""The numbers of the table (what table.json holds): its columns, each language's values and
p-values against the sentence-level system, and which values are significantly better."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from contextual_mt.errors import Code, InputError
from contextual_mt.pipeline.layout import SYSTEMS
from contextual_mt.pipeline.results_table.options import BASELINE, OUTPUT_FILES, TableOptions
from contextual_mt.pipeline.results_table.read import ALIGNMENT_FIGURES, LanguageResults


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


def _significant(p: Optional[float], value: Optional[float], baseline: Optional[float], alpha: float) -> bool:
    """Better than the baseline, with a p-value below ``alpha`` (False where a figure is missing)."""
    return p is not None and p < alpha and value is not None and baseline is not None and value > baseline


def gather(options: TableOptions, languages: Sequence[LanguageResults]) -> Dict:
    """The numbers of the table (what table.json holds)."""
    tags = _tag_columns(languages)
    with_comet = any(_comet(lr, k)[0] is not None for lr in languages for k in lr.systems)
    with_dbleu = any("d_bleu" in lr.scores[k] for lr in languages for k in lr.systems)
    with_alignment = any("alignment" in lr.scores[k] for lr in languages for k in lr.systems)
    columns = [Column("bleu", "BLEU", 2, True, "eval.json")]
    if with_comet:
        columns.append(Column("comet", "COMET", 4, True, "eval.json (scores.json when eval.json has none)"))
    columns += [Column(t, t, 3, True, "eval.json") for t in tags]
    columns.append(Column("chrf", "chrF", 2, False, "scores.json"))
    if with_dbleu:
        columns.append(Column("d_bleu", "d-BLEU", 2, False, "scores.json"))
    if with_alignment:  # a document-level system output, scored through its alignment to the references
        source = "scores.json: the alignment of a document-level output to the references"
        columns += [
            Column(
                key,
                "link chrF" if key == "mean_link_score" else key,
                2 if key == "mean_link_score" else 0,
                False,
                source,
            )
            for key in ALIGNMENT_FIGURES
        ]
    units = {lr.cxmi_unit for lr in languages if lr.cxmi is not None}
    if len(units) > 1:
        raise InputError(
            "the languages' CXMI are in different units ("
            + ", ".join(f"{lr.lang} {lr.cxmi_unit}" for lr in languages if lr.cxmi is not None)
            + "); run `make pcxmi` again",
            code=Code.MISMATCH,
        )
    with_cxmi = bool(units)
    if with_cxmi:
        columns.append(
            Column(
                "cxmi",
                f"CXMI ({units.pop()})",
                4,
                False,
                "pcxmi.summary.json: the context model's, on the rows of its translations",
            )
        )

    rows, langs_info = [], {}
    for lr in languages:
        comet_from = {k: _comet(lr, k)[1] for k in lr.systems}
        values = {k: _values(lr, k, tags, with_comet, with_dbleu, with_cxmi, with_alignment) for k in lr.systems}
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
            significant = {
                col.key: _significant(p[col.key], values[k][col.key], base[col.key], options.alpha) for col in columns
            }
            rows.append(
                {
                    "language": lr.lang,
                    "system": k,
                    "eval_name": lr.eval_names[k],
                    "baseline": k == BASELINE,
                    "values": values[k],
                    "p": p,
                    "significant": significant,
                }
            )
        tested = lr.muda and all(k in lr.comparisons for k in lr.systems if k != BASELINE)
        langs_info[lr.lang] = {
            "eval": lr.eval_path,
            "scores": lr.scores_path,
            "systems": lr.systems,
            "bootstrap": lr.evaluation.get("bootstrap"),
            "tested": tested,
            "tags": lr.tags,
            "ref_words": lr.ref_words,
            "comet_from": sorted({v for v in comet_from.values() if v}),
            "muda": lr.muda,
        }
    return {
        "langs": list(options.langs),
        "baseline": BASELINE,
        "alpha": options.alpha,
        "results_dir": options.results_dir,
        "tags": tags,
        "columns": [vars(c) for c in columns],
        "rows": rows,
        "languages": langs_info,
        "files": {name: options.output_path(name) for name in OUTPUT_FILES},
    }


def _values(
    lr: LanguageResults,
    key: str,
    tags: Sequence[str],
    with_comet: bool,
    with_dbleu: bool,
    with_cxmi: bool = False,
    with_alignment: bool = False,
) -> Dict[str, Optional[float]]:
    s, r = lr.evaluation["systems"][lr.eval_names[key]], lr.scores[key]
    # without MuDA results, sacreBLEU's BLEU of scores.json (the same corpus BLEU, untested)
    values: Dict[str, Optional[float]] = {"bleu": float(s["bleu"] if lr.muda else r["bleu"]["score"])}
    if with_comet:
        values["comet"] = _comet(lr, key)[0]
    for t in tags:  # None: the tag does not apply here (no tagged reference words)
        values[t] = float(s["tags"][t]["f"]) if t in lr.tags and lr.ref_words[t] > 0 else None
    values["chrf"] = float(r["chrf"]["score"])
    if with_dbleu:
        values["d_bleu"] = float(r["d_bleu"]["score"]) if "d_bleu" in r else None
    if with_cxmi:  # a property of the context model: on the rows of the systems it translated
        values["cxmi"] = lr.cxmi if SYSTEMS.get(key, (None,))[0] == "context" else None
    if with_alignment:  # None ('-'): a line-aligned output
        a = r.get("alignment") or {}
        values.update({f: None if a.get(f) is None else float(a[f]) for f in ALIGNMENT_FIGURES})
    return values
