"""The plain-text table of a ``run_eval`` result, as ``muda eval`` prints it (and
``fairseq-generate --scoring muda`` at the end of generation)."""

from __future__ import annotations

from typing import Dict

from docalign.links import summary


def format_muda_table(result: Dict) -> str:
    """The table `muda eval` prints: BLEU (and COMET), f-measure per tag, reference word counts,
    then one line of p-values per pair of systems, and one line per document-level output of
    what its re-alignment found."""
    tags = result["tags"]
    names = list(result["systems"])
    width = max(12, *(len(n) for n in names))
    with_comet = any("comet" in s for s in result["systems"].values())
    head = f"{'system':<{width}} {'BLEU':>6}" + (" COMET " if with_comet else "")
    head += "".join(f" {t[:16]:>16}" for t in tags)
    lines = ["word f-measure per tag (precision/recall in the JSON)", head, "-" * len(head)]
    for name, s in result["systems"].items():
        row = f"{name:<{width}} {s['bleu']:6.2f}" + (f" {s['comet']:6.4f}" if "comet" in s else "")
        row += "".join(f" {s['tags'][t]['f']:16.3f}" for t in tags)
        lines.append(row)
    ref_counts = next(iter(result["systems"].values()))["tags"]
    lines.append(f"{'ref words':<{width}} {'':>6}" + "".join(f" {ref_counts[t]['ref_words']:16d}" for t in tags))
    for c in result["comparisons"]:
        sig = ", ".join(f"{t} {c['tags'][t]['f']:.3f}" for t in tags)
        comet = f"; COMET {c['comet_p']:.3f}" if "comet_p" in c else ""
        lines.append(f"{c['a']} vs {c['b']}: paired bootstrap p (BLEU {c['bleu_p']:.3f}{comet}; f-measure: {sig})")
    for name, s in result["systems"].items():
        if s.get("alignment"):
            lines.append(f"{name} (document-level output): {summary(s['alignment'])}")
    if result.get("not_tagged"):
        lines.append(f"not scored (not tagged): {', '.join(result['not_tagged'])}")
    return "\n".join(lines)
