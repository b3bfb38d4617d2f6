"""A contrastive test set built from the demo corpus's planted tokens, in Voita et al.'s format.

For every test sentence with planted tokens of a phenomenon (il/elle, tu/vous with its verb
form, banque/rive ...), the group holds the reference and the reference with those tokens
replaced by their context-dependent alternatives: both are fluent on their own, only the
previous sentences (up to 3, as in Voita et al.) tell them apart. The correct candidate's
position is drawn at random, and each entry carries its ``phenomenon``.
"""

from __future__ import annotations

import json
import random
from typing import Dict, List, Tuple

from commandkit.documents import document_starts, read_docids
from commandkit.outputs import atomic_write_text
from commandkit.text import read_lines
from contextual_mt.demo.corpus import WINDOW
from contextual_mt.demo.planted import read_planted

SEPARATOR = " _eos "


def planted_groups(
    sources: List[str], references: List[str], docids: List[str], planted: List[Dict], seed: int = 1
) -> List[Dict]:
    starts = document_starts(docids)
    by_sentence: Dict[Tuple[int, str], List[Dict]] = {}
    for rec in planted:
        by_sentence.setdefault((rec["line"] - 1, rec["phenomenon"]), []).append(rec)
    rng = random.Random(seed)
    entries = []
    for (i, phenomenon), recs in sorted(by_sentence.items()):
        first = max(int(starts[i]), i - WINDOW)
        words = references[i].split()
        for rec in recs:
            words[rec["index"]] = rec["alternative"]
        wrong = " ".join(words)
        candidates = [references[i], wrong]
        true_ind = rng.randrange(2)
        if true_ind:
            candidates.reverse()
        context_src, context_tgt = sources[first:i], references[first:i]
        entries.append(
            {
                "src": SEPARATOR.join([*context_src, sources[i]]),
                "dst": [SEPARATOR.join([*context_tgt, c]) for c in candidates],
                "true_ind": true_ind,
                "phenomenon": phenomenon,
                "line": i + 1,
            }
        )
    return entries


def write_planted_contrastive(data_dir: str, output: str, split: str = "test", seed: int = 1) -> int:
    """Write the set for ``split`` of the demo corpus in ``data_dir``; returns its size."""
    path = f"{data_dir}/{split}"
    entries = planted_groups(
        read_lines(f"{path}.en"),
        read_lines(f"{path}.fr"),
        read_docids(f"{path}.docids"),
        read_planted(f"{path}.planted.jsonl"),
        seed,
    )
    atomic_write_text(output, json.dumps(entries, ensure_ascii=False, indent=1) + "\n")
    return len(entries)
