"""The study's three systems on the test set, what ``make translate`` (``translate_stage``) and
``make score`` (``score_stage``) share: ``sentence`` (the sentence-level model), ``context`` (the
context model with its own previous translations as target context) and ``context-gold`` (the
context model with the references as target context); their test files, finished checkpoints and
what each translation is made from, by content (recorded per system in ``results/xx/translate.json``).
"""

from __future__ import annotations

import os
from typing import Dict, Tuple

from commandkit.text import file_sha256
from contextual_mt.errors import Code, InputError
from contextual_mt.pipeline.layout import SOURCE_LANG, SYSTEMS, PairLayout

TRANSLATE_RECORD = "translate.json"


def read_translations_record(layout: PairLayout) -> Dict[str, Dict]:
    """``results/xx/translate.json``: per system, the ``fingerprint`` (a dict) its translation was made
    from and the ``output``'s sha256; {} when there is none; one line naming the file when it is of
    another shape."""
    from contextual_mt.stage_record import read_record

    path = os.path.join(layout.results, TRANSLATE_RECORD)
    record = read_record(path) or {}
    for system, made in record.items():
        if not (
            isinstance(made, dict)
            and isinstance(made.get("fingerprint", {}), dict)
            and isinstance(made.get("output", ""), str)
        ):
            raise InputError(
                f"{path}: not a state file this project writes (system {system!r} is not "
                '{"fingerprint": {...}, "output": sha256}); delete it to translate again',
                code=Code.FORMAT,
            )
    return record


def test_files(layout: PairLayout) -> Dict[str, str]:
    files = {
        "source": layout.text("test", SOURCE_LANG),
        "reference": layout.text("test", layout.lang),
        "docids": layout.text("test", "docids"),
    }
    for path in files.values():
        if not os.path.isfile(path):
            raise InputError(
                f"{path}: not found; prepare the data first ('make data LANG={layout.lang} ...')", code=Code.NOT_FOUND
            )
    return files


def finished_checkpoint(layout: PairLayout, model: str) -> Tuple[str, str]:
    """The model's checkpoint and its content hash, when its training finished on the data now
    in ``data/xx`` and the file is still the one it wrote."""
    from contextual_mt.pipeline.train import data_fingerprint, done_record

    path = layout.checkpoint(model)
    done = done_record(layout, model).read()
    if not os.path.isfile(path) or done is None or "checkpoint_sha256" not in done:  # none, or under way
        raise InputError(
            f"{path}: no finished training; train it first ('make train LANG={layout.lang} MODEL={model}')",
            code=Code.NOT_FOUND,
        )
    if done.get("fingerprint", {}).get("data") != data_fingerprint(layout):
        raise InputError(
            f"{path}: trained on other data than {layout.bin} holds now; train it again "
            f"('make train LANG={layout.lang} MODEL={model} OVERWRITE=1')",
            code=Code.MISMATCH,
        )
    sha = file_sha256(path)
    if done.get("checkpoint_sha256") != sha:
        raise InputError(
            f"{path}: changed since its training finished; train it again "
            f"('make train LANG={layout.lang} MODEL={model} OVERWRITE=1')",
            code=Code.MISMATCH,
        )
    return path, sha


def system_inputs(layout: PairLayout, system: str, files: Dict[str, str]) -> Dict:
    """What a system's translation is made from, by content (without the decoding options)."""
    model, context = SYSTEMS[system]
    ckpt, sha = finished_checkpoint(layout, model)
    return {
        "checkpoint": sha,
        "spm": file_sha256(layout.spm),
        "dictionaries": {
            n: file_sha256(os.path.join(os.path.dirname(ckpt), n))
            for n in sorted(os.listdir(os.path.dirname(ckpt)))
            if n.startswith("dict.")
        },
        "source": file_sha256(files["source"]),
        "docids": file_sha256(files["docids"]),
        "target_context": file_sha256(files["reference"]) if context == "gold" else "predicted",
    }
