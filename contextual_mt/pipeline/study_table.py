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

A language without ``eval.json`` (MuDA not run) still gets its rows, from ``scores.json``: its
MuDA columns are marked missing, with a note in table.md and a warning on stderr.

``muda eval`` names a system by its hypothesis file (``sentence.test.xx``) unless given
``--names``; both name the same system here (``sentence``). Outputs, in ``output_dir``:
``table.md``, ``table.csv``, ``table.json`` and ``table.png`` (a figure like the paper's
Figure 2), written together through ``commandkit.outputs.outputs`` (all of them, or none on failure).

This module is the command; reading, gathering, the text formats and the figure are in
``results_table/`` (their public names are importable from here too).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Dict

from commandkit.outputs import atomic_write_text, outputs
from contextual_mt.pipeline.results_table.gather import gather
from contextual_mt.pipeline.results_table.markdown_csv import format_csv, format_markdown
from contextual_mt.pipeline.results_table.options import BASELINE, OUTPUT_FILES, TableOptions
from contextual_mt.pipeline.results_table.plot import plot_table
from contextual_mt.pipeline.results_table.read import LanguageResults, muda_missing_note, read_language, system_key
from contextual_mt.pipeline.results_table.suites import gather_suites, suite_summary_files
from contextual_mt.stage_record import StageRecord, file_hashes, project_version


def table_fingerprint(table: TableOptions) -> Dict:
    """What the table is made from: every language's results files, by content, and the options."""
    files = {
        f"{lang} {kind}": path
        for lang in table.langs
        for kind, path in (("scores", table.scores_path(lang)), ("eval", table.eval_path(lang)))
    }
    for lang in table.langs:  # the imported suites run for the pair (make testset SUITE=...)
        files.update(suite_summary_files(table, lang))
    return {
        "inputs": file_hashes({k: p if os.path.isfile(p) else None for k, p in files.items()}),
        "langs": list(table.langs),
        "alpha": table.alpha,
        "version": project_version(),
    }


def build_table(options: TableOptions) -> Dict:
    """Read every language's results and write table.md, table.csv, table.json and table.png
    into ``options.output_dir`` (checked writable before anything is read; all four files, or
    none on any error). Returns what table.json holds."""
    record = StageRecord(os.path.join(options.table_dir, ".stage", "table.json"), "table")
    fp = table_fingerprint(options)
    if record.current(fp):
        print(f"table: up to date ({record.path})", file=sys.stderr)
        with open(options.output_path("table.json"), encoding="utf-8") as f:
            return json.load(f)
    with outputs(*(options.output_path(name) for name in OUTPUT_FILES), record.path, directories=[options.output_dir]):
        languages = [read_language(options, lang) for lang in options.langs]
        for lr in languages:
            if not lr.muda:  # built anyway, but said where it is seen: on stderr
                print(
                    f"warning: {lr.eval_path} not found: {muda_missing_note(lr.lang)}; its MuDA columns "
                    "are marked missing",
                    file=sys.stderr,
                )
        table = gather(options, languages)
        table["suites"] = gather_suites(options)
        atomic_write_text(options.output_path("table.md"), format_markdown(table))
        atomic_write_text(options.output_path("table.csv"), format_csv(table))
        atomic_write_text(options.output_path("table.json"), json.dumps(table, indent=2, ensure_ascii=False) + "\n")
        plot_table(options.output_path("table.png"), table)
        record.save(fp, [options.output_path(name) for name in OUTPUT_FILES], transactional=True)
        return table


__all__ = [
    "BASELINE",
    "OUTPUT_FILES",
    "LanguageResults",
    "TableOptions",
    "build_table",
    "format_csv",
    "format_markdown",
    "gather",
    "plot_table",
    "read_language",
    "system_key",
]
