"""A PNG bar chart of word f-measure per tag per system (like Figure 2 of the MuDA paper), with
'*' over tags where a pair of systems differs significantly (paired bootstrap, p < 0.05)."""

from __future__ import annotations

from typing import Dict

import numpy as np

from commandkit.outputs import atomic_save_figure


def plot_fmeasure(path: str, result: Dict, alpha: float = 0.05) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tags, names = result["tags"], list(result["systems"])
    width = 0.8 / max(len(names), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(tags) + 2), 4))
    x = np.arange(len(tags))
    for k, name in enumerate(names):
        values = [result["systems"][name]["tags"][t]["f"] for t in tags]
        ax.bar(x + (k - (len(names) - 1) / 2) * width, values, width, label=name)
    for j, t in enumerate(tags):
        if any(c["tags"][t]["f"] < alpha for c in result["comparisons"]):
            top = max(result["systems"][n]["tags"][t]["f"] for n in names)
            ax.text(x[j], top + 0.02, "*", ha="center", fontsize=14)
    ax.set_xticks(x)
    ax.set_xticklabels(tags, rotation=20)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("word f-measure")
    ax.set_title(f"MuDA ({result['language']}); * p < {alpha} (paired bootstrap)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    try:
        atomic_save_figure(fig, path)
    finally:
        plt.close(fig)
