"""The demo corpus in the layout of the multilingual TED talks release (Qi et al. 2018), so the
whole study (``make all LANG=fr TED=...``) can be tried and tested offline.

``all_talks_{train,dev,test}.tsv``: a header, a ``talk_name`` column and one column per
language (``en``, ``fr`` and an unused ``de``); Moses-tokenized and escaped text as in the
release; a few inserted rows with a missing translation (``__NULL__`` or ``_ _ NULL _ _``),
which the data stage drops; talks of 1-6 consecutive demo documents, so of different lengths.
"""

from __future__ import annotations

import csv
import os
import random
import tarfile
import tempfile
from typing import Dict, List

from commandkit.documents import read_docids
from commandkit.text import read_lines
from contextual_mt.stage_record import partial_path

TED_SPLITS = {"train": "train", "valid": "dev", "test": "test"}


def _talks(ids: List[str], rng: random.Random) -> List[int]:
    """Talk number per line: runs of 1-6 consecutive documents become one talk."""
    names, talk, left, previous = [], -1, 0, None
    for doc in ids:
        if doc != previous:
            previous = doc
            if left == 0:
                talk, left = talk + 1, rng.randint(1, 6)
            left -= 1
        names.append(talk)
    return names


def write_ted_layout(demo_dir: str, tarball: str, seed: int = 3, null_rate: float = 0.05) -> Dict[str, int]:
    """Write the demo corpus in ``demo_dir`` as a TED-layout ``tarball`` (``.tar.gz``, one leading
    folder). Returns per split the number of inserted missing-translation rows. Deterministic."""
    from sacremoses import MosesTokenizer

    rng = random.Random(seed)
    tok = {lang: MosesTokenizer(lang=lang) for lang in ("en", "fr")}
    nulls: Dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "ted_talks")
        os.makedirs(folder)
        for split, ted_split in TED_SPLITS.items():
            lines = {lang: read_lines(os.path.join(demo_dir, f"{split}.{lang}")) for lang in ("en", "fr")}
            talks = _talks(read_docids(os.path.join(demo_dir, f"{split}.docids")), rng)
            rows, nulls[split] = [], 0
            for k, talk in enumerate(talks):
                name = f"{ted_split}_talk_{talk:03d}"
                if rng.random() < null_rate:  # a missing translation on one side or the other
                    en, fr = ("__NULL__", "Bonjour .") if rng.random() < 0.5 else ("Hello .", "_ _ NULL _ _")
                    rows.append([name, en, fr, "__NULL__"])
                    nulls[split] += 1
                rows.append(
                    [
                        name,
                        tok["en"].tokenize(lines["en"][k], return_str=True, escape=True),
                        tok["fr"].tokenize(lines["fr"][k], return_str=True, escape=True),
                        "Hallo .",
                    ]
                )
            with open(os.path.join(folder, f"all_talks_{ted_split}.tsv"), "w", encoding="utf-8", newline="") as f:
                writer = csv.writer(f, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
                writer.writerow(["talk_name", "en", "fr", "de"])
                writer.writerows(rows)
        partial = partial_path(tarball)
        with tarfile.open(partial, "w:gz") as tar:
            tar.add(folder, arcname="ted_talks")
        os.replace(partial, tarball)
    return nulls
