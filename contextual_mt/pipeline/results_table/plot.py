"""table.png: the gathered table as a figure like Figure 2 of the MuDA paper."""

from __future__ import annotations

import math
from typing import Dict, List

from commandkit.outputs import atomic_save_figure
from contextual_mt.pipeline.results_table.gather import Column


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
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(max(4.5, 1.3 * len(langs) + 1.5) * ncols, 3.4 * nrows), squeeze=False
    )
    width = 0.8 / max(len(systems), 1)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    x = np.arange(len(langs))
    # strict=False: the grid's last row may have spare axes
    for ax, col in zip(axes.flat, panels, strict=False):
        scale = 100.0 if col.key == "bleu" else 1.0
        shown: List[float] = []
        for k, system in enumerate(systems):
            offset = (k - (len(systems) - 1) / 2) * width
            for j, lang in enumerate(langs):
                row = rows.get((lang, system))
                value = None if row is None else row["values"][col.key]
                if row is None or value is None:
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
        ax.set_title(
            "BLEU / 100" if col.key == "bleu" else col.label if col.key == "comet" else f"{col.label} (word f-measure)",
            fontsize=10,
        )
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[k % len(colors)]) for k in range(len(systems))]
    fig.legend(handles, systems, loc="upper right", ncol=len(systems), fontsize=9, frameon=False)
    fig.suptitle(
        f"* p < {table['alpha']:g} better than {table['baseline']} (paired bootstrap); ∅ the tag does not apply",
        fontsize=10,
        x=0.02,
        ha="left",
    )
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    try:
        atomic_save_figure(fig, path)
    finally:
        plt.close(fig)
