"""The imported suites' rows of the table (``make testset SUITE=...``: ``results/xx/suites/NAME/
summary.json``, pipeline/suite_stage.py): per language, suite, system and phenomenon, % correct
by the suite's rule with its 95% interval, the context model against the sentence model (paired
bootstrap) and the contrastive accuracy."""

from __future__ import annotations

import os
from typing import Any, Dict, List

from contextual_mt.pipeline.results_table.options import BASELINE, TableOptions


def suite_summary_files(options: TableOptions, lang: str) -> Dict[str, str]:
    """What the table reads of a language's suites, for its fingerprint: name -> summary.json."""
    from contextual_mt.pipeline.suite_stage import SUITES, SUMMARY

    folder = os.path.join(options.results_dir, lang, SUITES)
    if not os.path.isdir(folder):
        return {}
    names = sorted(n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n, SUMMARY)))
    return {f"{lang} suite {n}": os.path.join(folder, n, SUMMARY) for n in names}


def gather_suites(options: TableOptions) -> List[Dict[str, Any]]:
    """One row per language, suite, system and phenomenon."""
    from contextual_mt.pipeline.suite_stage import suite_summaries

    rows = []
    for lang in options.langs:
        for s in suite_summaries(os.path.join(options.results_dir, lang)):
            for system, r in s["systems"].items():
                compared = s.get("comparisons", {}).get(system)
                for phenomenon, cell in r["phenomena"].items():
                    test = compared["phenomena"].get(phenomenon) if compared else None
                    p = None if test is None else float(test["p"])
                    better = test is not None and float(test["difference"]) > 0
                    rows.append(
                        {
                            "language": lang,
                            "suite": s["suite"],
                            "category": s["category"],
                            "system": system,
                            "phenomenon": phenomenon,
                            "groups": cell["groups"],
                            "correct": cell["correct"],
                            "correct_ci": cell["correct_ci"],
                            "contrastive": r.get("contrastive"),
                            "contrastive_groups": s["contrastive_groups"],
                            "p": p,
                            "significant": better and p is not None and p < options.alpha,
                        }
                    )
    return rows


def suite_lines(table: Dict) -> List[str]:
    """table.md's section of the imported suites (none without them)."""
    rows = table.get("suites") or []
    if not rows:
        return []
    lines = [
        "",
        "## Imported test suites",
        "",
        "| language | suite | system | phenomenon | groups | % correct [95% CI] | contrastive |",
        "|---|---|---|---|---:|---:|---:|",
    ]
    for r in rows:
        ci = r["correct_ci"]
        text = f"{100 * r['correct']:.1f}" + (f" [{100 * ci[0]:.1f}-{100 * ci[1]:.1f}]" if ci else "")
        text = f"**{text}**" if r["significant"] else text
        contrastive = "-" if r["contrastive"] is None else f"{100 * r['contrastive']:.1f}"
        lines.append(
            f"| {r['language']} | {r['suite']} | {r['system']} | {r['phenomenon']} | {r['groups']} | {text} "
            f"| {contrastive} |"
        )
    lines += [
        "",
        "% correct: the translations of the suite's documents (each example with its context) by the "
        "suite's own rule (`make testset SUITE=...`, `testset evaluate`; 95% bootstrap intervals over the "
        f"examples); **bold**: significantly better than the `{BASELINE}` system (paired bootstrap, "
        f"p < {table['alpha']:g}). Contrastive: % of the examples with variants where the reference "
        "scores best (`-`: the suite has no variants). `RESULTS/xx/suites/NAME/summary.json`.",
    ]
    return lines
