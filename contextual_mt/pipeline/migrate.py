"""``contextual-mt pipeline migrate FOLDER``: the records that earlier versions left in a study
folder, rewritten once into the one shape ``StageRecord`` reads (``{"stage", "fingerprint",
"outputs": {file: sha256}, "base": "record"}`` in a ``.stage/`` folder), so that the stages they
finished stay up to date. Every other module reads that shape only; a stage that meets one of
these files says so in one line (``stage_record.earlier_version``).

What it rewrites, where the earlier versions kept it:

* data: ``.prepare-state.json`` beside ``summary.json`` -> ``.stage/data.json``;
* train: ``train.done`` (its figures and ``checkpoint_sha256``) and ``train.json`` (the fingerprint
  of a run under way) in the checkpoint folder -> ``.stage/train.json``;
* translate: ``translate.json`` (per system its fingerprint and output sha256) without the stage's
  record -> ``.stage/translate.json``;
* score: ``scores.json`` (its ``settings``) without the stage's record -> ``.stage/score.json``;
* testset, table: their ``summary.json`` / ``table.json`` -> a record of unknown inputs (the stage
  remakes them when next run; the plan counts them as done);
* a ``.stage/*.json`` record naming its outputs from where its stage ran -> named from its folder;
* an ``OUTPUT.partial`` whose first line names its fingerprint ``cxmi_fingerprint`` -> ``fingerprint``.

Each file is written atomically, the earlier file removed after; a file that cannot be rewritten
is one line naming it (and the command exits 1), the others are still rewritten.
"""

from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Tuple

from commandkit.outputs import atomic_write_text
from commandkit.text import file_sha256
from contextual_mt.errors import Code, InputError
from contextual_mt.pipeline.layout import SYSTEMS
from contextual_mt.stage_record import (
    EARLIER_PLACES,
    FINGERPRINT_KEY,
    RECORD_DIR,
    read_record,
    write_record,
)

DATA_STATE, TRAIN_DONE, TRAIN_STARTED = (EARLIER_PLACES[k] for k in ("data", "train", "train-started"))
PARTIAL_KEY = "cxmi_fingerprint"


def _record(stage: str, fingerprint: object, outputs: Dict[str, str], **fields: object) -> Dict:
    return {"stage": stage, "fingerprint": fingerprint, **fields, "outputs": outputs, "base": "record"}


def _hashes(record_dir: str, files: List[str]) -> Dict[str, str]:
    """file -> sha256, the files named from the record's folder (``.stage/``)."""
    return {os.path.relpath(f, record_dir): file_sha256(f) for f in files}


class Migration:
    """The rewrites of one folder: ``done`` the files written, ``bad`` one line per file left as it was."""

    def __init__(self, folder: str):
        self.folder = folder
        self.done: List[str] = []
        self.bad: List[str] = []

    def write(self, path: str, record: Dict, *earlier: str) -> None:
        write_record(path, record)
        for old in earlier:
            if os.path.isfile(old):
                os.unlink(old)
        self.done.append(path)

    def read(self, path: str) -> Optional[Dict]:
        try:
            return read_record(path)
        except InputError as e:
            self.bad.append(str(e))
            return None

    # ------------------------------------------------------------------ per kind of file
    def data(self, folder: str) -> None:
        old = os.path.join(folder, DATA_STATE)
        new = os.path.join(folder, RECORD_DIR, "data.json")
        record = self.read(old)
        if record is None:
            return
        if not isinstance(record.get("steps"), dict) or "fingerprint" not in record:
            self.bad.append(f"{old}: not the data stage's state of an earlier version (no 'fingerprint' and 'steps')")
            return
        # finished (its summary.json was written last): its outputs, the dictionaries the models are built with
        dicts = sorted(
            os.path.join(folder, "bin", f)
            for f in (os.listdir(os.path.join(folder, "bin")) if os.path.isdir(os.path.join(folder, "bin")) else ())
            if f.startswith("dict.") and f.endswith(".txt")
        )
        finished = os.path.isfile(os.path.join(folder, "summary.json")) and len(dicts) >= 2
        outputs = _hashes(os.path.dirname(new), dicts) if finished else {}
        fields = {k: v for k, v in record.items() if k not in ("stage", "fingerprint", "outputs", "base")}
        self.write(new, _record("data", record["fingerprint"], outputs, **fields), old)

    def train(self, folder: str) -> None:
        done, started = os.path.join(folder, TRAIN_DONE), os.path.join(folder, TRAIN_STARTED)
        new = os.path.join(folder, RECORD_DIR, "train.json")
        if os.path.exists(new):  # this version's record replaced them: they are left-overs
            for old in (done, started):
                if os.path.isfile(old):
                    os.unlink(old)
            return
        if os.path.exists(done):
            record = self.read(done)
            if record is None:
                return
            if record.get("base") == "record" and isinstance(record.get("outputs"), dict):
                outputs = {os.path.normpath(os.path.join("..", p)): h for p, h in record["outputs"].items()}
            elif isinstance(record.get("checkpoint_sha256"), str):
                outputs = {os.path.join("..", "checkpoint_best.pt"): record["checkpoint_sha256"]}
            else:
                self.bad.append(f"{done}: not a training record of an earlier version (no 'checkpoint_sha256')")
                return
            fields = {k: v for k, v in record.items() if k not in ("stage", "fingerprint", "outputs", "base")}
            self.write(new, _record("train", record.get("fingerprint"), outputs, **fields), done, started)
            return
        record = self.read(started)  # a run under way: what its checkpoints are trained from, no output yet
        if record is not None:
            self.write(new, _record("train", record.get("fingerprint"), {}), started)

    def translate(self, folder: str) -> None:
        path = os.path.join(folder, "translate.json")
        new = os.path.join(folder, RECORD_DIR, "translate.json")
        record = self.read(path)
        if record is None or os.path.exists(new):
            return
        lang = os.path.basename(os.path.normpath(folder))
        made = {s: v for s, v in record.items() if isinstance(v, dict) and isinstance(v.get("output"), str)}
        if set(made) != set(SYSTEMS):  # an interrupted run of this version: not finished, nothing to rewrite
            return
        outputs = {os.path.join("..", f"{s}.test.{lang}"): v["output"] for s, v in made.items()}
        outputs[os.path.join("..", "translate.json")] = file_sha256(path)
        self.write(new, _record("translate", {s: v.get("fingerprint") for s, v in made.items()}, outputs))

    def score(self, folder: str) -> None:
        path = os.path.join(folder, "scores.json")
        new = os.path.join(folder, RECORD_DIR, "score.json")
        record = self.read(path)
        if record is None or os.path.exists(new) or "settings" not in record:
            return
        self.write(new, _record("score", record["settings"], _hashes(os.path.dirname(new), [path])))

    def unknown_inputs(self, stage: str, output: str, new: str) -> None:
        """An output whose stage kept no record (testset, table): finished, made from unknown inputs."""
        if os.path.exists(new) or self.read(output) is None:
            return
        self.write(new, _record(stage, None, _hashes(os.path.dirname(new), [output])))

    def rebase(self, path: str) -> None:
        """A record naming its outputs from where its stage ran: named from its folder instead."""
        record = self.read(path)
        if record is None or record.get("base") == "record" or not isinstance(record.get("outputs"), dict):
            return
        here = os.path.dirname(path)
        outputs = {}
        for name, sha in record["outputs"].items():
            found = _find_from(here, name)
            if found is None:
                self.bad.append(f"{path}: its output {name} is in none of its folder's parents; delete the record")
                return
            outputs[os.path.relpath(found, here)] = sha
        self.write(path, {**record, "outputs": outputs, "base": "record"})

    def partial(self, path: str) -> None:
        try:
            with open(path, encoding="utf-8") as f:
                first, rest = f.readline(), f.read()
            header = json.loads(first)
        except (OSError, UnicodeDecodeError, ValueError) as e:
            self.bad.append(f"{path}: unreadable ({e})")
            return
        if isinstance(header, dict) and PARTIAL_KEY in header and FINGERPRINT_KEY not in header:
            atomic_write_text(
                path, json.dumps({FINGERPRINT_KEY: header[PARTIAL_KEY]}) + "\n" + rest, transactional=False
            )
            self.done.append(path)


def _find_from(folder: str, name: str) -> Optional[str]:
    """``name`` (as the stage was given it) resolved from ``folder`` or one of its parents."""
    if os.path.isabs(name):
        return name if os.path.isfile(name) else None
    here = os.path.abspath(folder)
    while True:
        candidate = os.path.join(here, name)
        if os.path.isfile(candidate):
            return os.path.normpath(candidate)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def migrate(folder: str) -> Tuple[List[str], List[str]]:
    """Rewrite every earlier record under ``folder``: (the files written, one line per bad file)."""
    if not os.path.isdir(folder):
        raise InputError(
            f"{folder}: not a folder (give the study folder holding data/, checkpoints/, results/)", code=Code.NOT_FOUND
        )
    m = Migration(folder)
    for here, dirs, files in os.walk(folder):
        dirs.sort()
        names = set(files)
        if DATA_STATE in names:
            m.data(here)
        in_checkpoints = any(f.startswith("dict.") for f in names) and os.path.basename(here) != RECORD_DIR
        if TRAIN_DONE in names or (TRAIN_STARTED in names and in_checkpoints):
            m.train(here)
        if "translate.json" in names:
            m.translate(here)
        if "scores.json" in names:
            m.score(here)
        if os.path.basename(here) == "testset" and "summary.json" in names:
            new = os.path.normpath(os.path.join(here, "..", RECORD_DIR, "testset.json"))
            m.unknown_inputs("testset", os.path.join(here, "summary.json"), new)
        if os.path.basename(here) == "table" and "table.json" in names:
            m.unknown_inputs("table", os.path.join(here, "table.json"), os.path.join(here, RECORD_DIR, "table.json"))
        if os.path.basename(here) == RECORD_DIR:
            for name in sorted(f for f in files if f.endswith(".json")):
                m.rebase(os.path.join(here, name))
        for name in sorted(f for f in files if f.endswith(".partial")):
            m.partial(os.path.join(here, name))
    return m.done, m.bad
