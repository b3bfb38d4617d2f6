"""table.md and table.csv from the gathered table."""

from __future__ import annotations

import csv
import io
from typing import Dict

from contextual_mt.pipeline.results_table.gather import Column
from contextual_mt.pipeline.results_table.read import muda_missing_note
from contextual_mt.pipeline.results_table.suites import suite_lines

MISSING = "—"  # a MuDA column of a language whose MuDA evaluation was not run (not: does not apply)


def _is_missing(table: Dict, row: Dict, c: Column) -> bool:
    return c.key in table["tags"] and not table["languages"][row["language"]].get("muda", True)


def format_markdown(table: Dict) -> str:
    """table.md: the table, the legend, the counts of tagged reference words."""
    columns = [Column(**c) for c in table["columns"]]
    alpha = table["alpha"]
    lines = [
        f"# Context-aware MT, English to {', '.join(table['langs'])}",
        "",
        "| language | system | " + " | ".join(c.label for c in columns) + " |",
        "|---|---|" + "---:|" * len(columns),
    ]
    for row in table["rows"]:
        cells = []
        for c in columns:
            value = row["values"][c.key]
            text = MISSING if _is_missing(table, row, c) else "-" if value is None else f"{value:.{c.digits}f}"
            cells.append(f"**{text}**" if row["significant"][c.key] else text)
        lines.append(f"| {row['language']} | {row['system']} | " + " | ".join(cells) + " |")
    tagged = "; ".join(
        f"{lang}: "
        + (
            "MuDA not run"
            if not info.get("muda", True)
            else ", ".join(f"{t} {n}" for t, n in info["ref_words"].items()) or "none"
        )
        for lang, info in table["languages"].items()
    )
    lines += [
        "",
        f"**Bold**: significantly better than the `{table['baseline']}` system of the same language "
        f"(paired bootstrap over documents, p < {alpha:g}, from `muda eval`). "
        "Tag columns: word f-measure per MuDA tag; `-`: the tag does not apply to the language "
        "(no tagged reference words), or the metric was not computed.",
        "BLEU, COMET and word f-measure: `RESULTS/xx/muda/eval.json`; chrF and d-BLEU: "
        "`RESULTS/xx/scores.json` (no significance test)."
        + (
            " CXMI: the context model's corpus CXMI (mean over sentences; `RESULTS/xx/pcxmi.summary.json`, "
            "`make pcxmi`), on the rows of the systems that model translated."
            if any(c.key == "cxmi" for c in columns)
            else ""
        )
        + (
            " merges, splits, omissions, additions, link chrF: the alignment of a document-level system "
            "output to the references, through which it was scored (`make score HYPS=...`; `-`: a "
            "line-aligned output)."
            if any(c.key == "mean_link_score" for c in columns)
            else ""
        ),
        "",
        f"Tagged reference words: {tagged}.",
    ]
    no_muda = [lang for lang, info in table["languages"].items() if not info.get("muda", True)]
    for lang in no_muda:
        lines.append(
            f"{muda_missing_note(lang)}: `{MISSING}` in its MuDA columns; its BLEU (and COMET) from "
            "scores.json, untested."
        )
    untested = [lang for lang, info in table["languages"].items() if not info["tested"] and lang not in no_muda]
    if untested:
        lines.append(
            f"No paired bootstrap in eval.json (`muda eval --bootstrap 0`) for {', '.join(untested)}: "
            "nothing marked there."
        )
    lines += suite_lines(table)
    lines += ["", "![BLEU, COMET and word f-measure per tag](table.png)", ""]
    return "\n".join(lines)


def format_csv(table: Dict) -> str:
    """table.csv: one row per language and system; each value at full precision ('-': does not
    apply; 'missing': MuDA not run for the language), and beside each tested value a ``_sig``
    column ('*': significantly better)."""
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
            cells.append("missing" if _is_missing(table, row, c) else "-" if value is None else repr(value))
            if c.tested:
                cells.append("*" if row["significant"][c.key] else "")
        writer.writerow(cells)
    return out.getvalue()
