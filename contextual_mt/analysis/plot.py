"""A PNG of mean P-CXMI per POS class (and per tag, when there are tags)."""

from __future__ import annotations

from typing import Sequence

from commandkit.outputs import atomic_save_figure
from contextual_mt.analysis.tables import Row


def plot_means(path: str, pos_rows: Sequence[Row], tag_rows: Sequence[Row], unit: str = "nats") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(title, rows) for title, rows in (("POS class", pos_rows), ("tag", tag_rows)) if rows]
    if not panels:
        panels = [("POS class", [])]
    height = max(3.0, 0.28 * max(len(rows) for _, rows in panels) + 1.2)
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), height), squeeze=False)
    for ax, (title, rows) in zip(axes[0], panels, strict=True):
        rows = list(reversed(rows))  # largest at the top
        values = [r.mean for r in rows]
        ax.barh(
            [f"{r.key} ({r.count})" for r in rows], values, color=["#c0392b" if v > 0 else "#2e86c1" for v in values]
        )
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_title(f"mean P-CXMI per {title}")
        ax.set_xlabel(f"P-CXMI ({unit})")
        ax.tick_params(axis="y", labelsize=8)
        if not rows:
            ax.text(0.5, 0.5, "no annotations", ha="center", va="center", transform=ax.transAxes)
    fig.tight_layout()
    try:
        atomic_save_figure(fig, path)
    finally:
        plt.close(fig)
