"""One record of "this stage is done", for every stage of every command.

A stage is up to date when the record it wrote holds the same *fingerprint* (what its outputs
depend on, by content: sha256 of the input files, the settings, and the project version where
the code decides the numbers) and its outputs are still the files it wrote. This module owns:

* the fingerprint helpers (``file_hashes``, ``tree_hashes``, ``digest``, ``differences``);
* the done-record (``StageRecord``: JSON in a ``.stage/`` folder, written atomically, read in one
  shape with a one-line error; the files of earlier versions are recognised, and left to
  ``contextual-mt pipeline migrate``), and ``SummaryRecord``, the done-record of a command whose
  summary carries its fingerprint;
* the ``.partial`` resume rule (``PartialFile``, ``resumable_records``): a stage that streams
  records keeps them in ``OUTPUT.partial`` behind a fingerprint line, and a rerun resumes only
  when that fingerprint is this computation's;
* the one refusal for outputs made from something else (``stale_error``, ``OVERWRITE_HINT``):
  ``--overwrite`` (make: ``OVERWRITE=1``) discards them, everywhere.

The rule every stage follows: a finished output whose fingerprint is not this run's is made
again (translations, scores, the report, muda-eval, finished CXMI records); what a stage builds on
or resumes from (a prepared data folder, checkpoints, an interrupted run's ``.partial``) is
refused when it was made from something else, until ``--overwrite`` discards it.

It sits below analysis/, contrastive/ and pipeline/ and imports only errors and commandkit.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, TextIO, Tuple, Union

from commandkit.outputs import atomic_write_lines, atomic_write_text, writing
from commandkit.text import file_sha256
from contextual_mt.errors import Code, InputError

# what every refusal of earlier outputs ends with: the one way to discard them
OVERWRITE_HINT = "use --overwrite (make: OVERWRITE=1) to discard them"
# the first line of OUTPUT.partial: {"fingerprint": {...}}
FINGERPRINT_KEY = "fingerprint"
RECORD_DIR = ".stage"  # the folder of the done-records, beside the stage's outputs
# the files earlier versions kept in place of a record (relative to the record's folder's parent),
# and the partial files' fingerprint key of theirs: recognised only to say "migrate"
# (contextual_mt/pipeline/migrate.py rewrites them)
EARLIER_PLACES = {
    "data": ".prepare-state.json",
    "train": "train.done",
    "train-started": "train.json",
    "partial-key": "cxmi_fingerprint",
}
_EARLIER_BY_RECORD = {"data.json": ("data",), "train.json": ("train", "train-started")}


def stale_error(path: str, what: str = "made from other inputs or settings", hint: str = OVERWRITE_HINT) -> InputError:
    """The refusal of outputs at ``path`` that this run did not make: one line, naming the path."""
    return InputError(f"{path}: {what}; {hint}", code=Code.MISMATCH)


# ============================================================================ fingerprints
def digest(value: object) -> str:
    """sha256 of a JSON value (keys sorted): a fingerprint in one string."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def file_hashes(paths: Mapping[str, Optional[str]]) -> Dict[str, Optional[str]]:
    """name -> sha256 of the file (None for an option not given)."""
    return {name: (file_sha256(path) if path else None) for name, path in paths.items()}


def tree_hashes(root: str, names: Sequence[str]) -> Dict[str, str]:
    """sha256 of the files at ``names`` (relative to ``root``; a folder: every file in it); what
    is absent is left out."""
    hashes: Dict[str, str] = {}
    for name in names:
        path = os.path.join(root, name)
        if os.path.isdir(path):
            for folder, _dirs, files in os.walk(path):
                for f in sorted(files):
                    full = os.path.join(folder, f)
                    hashes[os.path.relpath(full, root)] = file_sha256(full)
        elif os.path.isfile(path):
            hashes[name] = file_sha256(path)
    return hashes


def project_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("contextual-mt")
    except PackageNotFoundError:
        return "unknown"


def differences(old: Dict, new: Dict, labels: Tuple[str, str], ignore: Sequence[str] = ()) -> List[str]:
    """The fields that differ, with both values (named by ``labels``) where they are short
    (not content hashes)."""
    out = []
    for key in sorted(set(old) | set(new)):
        if key in ignore or old.get(key) == new.get(key):
            continue
        a, b = old.get(key), new.get(key)
        short = all(
            v is None or isinstance(v, (bool, int, float)) or (isinstance(v, str) and len(v) < 20) for v in (a, b)
        )
        out.append(f"{key} ({labels[0]} {a!r}, {labels[1]} {b!r})" if short else key)
    return out


# ============================================================================ done-records
def read_record(path: str) -> Optional[Dict]:
    """A JSON record, or None when absent; a broken one is an error naming it."""
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(
            f"{path}: unreadable state file ({e}); delete it to start that stage again", code=Code.FORMAT
        ) from None
    if not isinstance(value, dict):
        raise _misshapen(path, f"a JSON {_json_type(value)}, not an object")
    return value


def _json_type(value: object) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _misshapen(path: str, why: str) -> InputError:
    return InputError(
        f"{path}: not a state file this project writes ({why}); delete it to start that stage again", code=Code.FORMAT
    )


# the fields every done-record has, and their JSON types (a stage's own fields are its own); the
# fingerprint is a dict of what the outputs depend on (the data stage's: their digest; none: outputs
# of unknown inputs, which the stage remakes when it runs)
_RECORD_FIELDS: Dict[str, Tuple[type, ...]] = {"stage": (str,), "outputs": (dict,), "base": (str,)}
FINGERPRINT_TYPES: Dict[str, Tuple[type, ...]] = {"data": (str, type(None))}


def check_record_shape(path: str, record: Optional[Dict], stage: str = "") -> Optional[Dict]:
    """``record`` (read at ``path``) when its common fields have their types; else one line naming
    the file (what a record of another shape would otherwise break, far from here)."""
    if record is None:
        return None
    if not isinstance(record, dict):
        raise _misshapen(path, f"a JSON {_json_type(record)}, not an object")
    fingerprint = FINGERPRINT_TYPES.get(stage, (dict, type(None)))
    for key, types in {**_RECORD_FIELDS, "fingerprint": fingerprint}.items():
        if key in record and not isinstance(record[key], types):
            raise _misshapen(path, f"its {key!r} is a JSON {_json_type(record[key])}")
    outputs = record.get("outputs", {})
    if not all(isinstance(k, str) and isinstance(h, str) for k, h in outputs.items()):
        raise _misshapen(path, "its 'outputs' are not file -> sha256 strings")
    return record


def write_record(path: str, data: Dict, transactional: bool = False) -> None:
    """Atomically (``transactional``: inside the running output transaction)."""
    atomic_write_text(path, json.dumps(data, indent=2) + "\n", transactional=transactional)


class StageRecord:
    """A stage's done-record at ``path``: ``{"stage", "fingerprint", "outputs": {file: sha256}}`` and
    the stage's own ``fields`` (figures that its readers use), its outputs named relative to its
    folder (``"base": "record"``). The stage is done when the fingerprint (and the ``same`` fields)
    is this run's and every output is still the file it wrote."""

    def __init__(self, path: str, stage: str):
        self.path, self.stage = path, stage

    def read(self) -> Optional[Dict]:
        """The record as written; None when there is none; an earlier version's is one line saying
        to migrate the folder."""
        record = check_record_shape(self.path, read_record(self.path), self.stage)
        if record is None:
            earlier = earlier_record(self.path)
            if earlier is not None:
                raise earlier_version(earlier)
        elif record.get("base") != "record":
            raise earlier_version(self.path)
        return record

    def _intact(self, record: Dict) -> bool:
        """``outputs_intact``, the outputs named relative to the record's folder."""
        folder = os.path.dirname(self.path)
        outputs = record.get("outputs", {})
        return outputs_intact({"outputs": {os.path.normpath(os.path.join(folder, p)): h for p, h in outputs.items()}})

    def current(self, fingerprint: object, **same: object) -> Optional[Dict]:
        """The record when its stage made its outputs from ``fingerprint`` (and ``same``) and they
        are all still there; else None."""
        record = self.read()
        if not isinstance(record, dict) or record.get("fingerprint") != fingerprint or not record.get("outputs"):
            return None
        if any(record.get(k) != v for k, v in same.items()):
            return None
        return record if self._intact(record) else None

    def finished(self) -> bool:
        """Whether the stage finished (whatever its settings: the job chain's question; the stage
        itself asks ``current``): the record is there and every output it lists is intact."""
        try:
            record = self.read()
        except InputError:
            return False  # unreadable: not finished; the stage reruns and says what is wrong
        if not isinstance(record, dict) or not record.get("outputs"):
            return False  # none, or a stage under way (the data stage's finished steps)
        return self._intact(record)

    def save(
        self,
        fingerprint: object,
        outputs: Union[Iterable[str], Mapping[str, str]],
        transactional: bool = False,
        **fields: object,
    ) -> Dict:
        """Write the record (its outputs, or output -> sha256 where the stage has them, named relative
        to its folder: it holds wherever the study folder is reached from) and return it."""
        folder = os.path.dirname(self.path)
        made = dict(outputs) if isinstance(outputs, Mapping) else {p: file_sha256(p) for p in outputs}
        record = {
            "stage": self.stage,
            "fingerprint": fingerprint,
            **fields,
            "outputs": {os.path.relpath(p, folder or "."): h for p, h in made.items()},
            "base": "record",
        }
        write_record(self.path, record, transactional=transactional)
        return record

    def forget(self) -> None:
        """Remove the record."""
        if os.path.exists(self.path):
            os.unlink(self.path)


def record_finished(path: str, stage: str = "") -> bool:
    """Whether the done-record at ``path`` (in a ``.stage/`` folder) says its stage finished
    (``StageRecord.finished``), or the summary at ``path`` (elsewhere) is there."""
    if os.path.basename(os.path.dirname(path)) == RECORD_DIR:
        return StageRecord(path, stage).finished()
    try:
        return isinstance(read_record(path), dict)
    except InputError:
        return False


def outputs_intact(record: Dict) -> bool:
    """Every output a record lists (``outputs``: file -> sha256) is still the file it wrote."""
    made = record.get("outputs", {})
    return isinstance(made, dict) and all(os.path.isfile(p) and file_sha256(p) == h for p, h in made.items())


class SummaryRecord:
    """The done-record of a command that streams records into ``output`` (cxmi, contrastive,
    attribute): its summary, which holds the fingerprint and counts the records. ``current`` is
    the summary when ``output`` and the summary were made from exactly this fingerprint (and
    ``same`` fields) and ``output`` has as many records as the summary's ``count_key`` says (and
    ``expected``, when given); else None."""

    def __init__(self, output: str, summary: str, count_key: str):
        self.output, self.summary, self.count_key = output, summary, count_key

    def current(self, fingerprint: Dict, expected: Optional[int] = None, **same: object) -> Optional[Dict]:
        if not (os.path.isfile(self.output) and os.path.isfile(self.summary)):
            return None
        try:
            with open(self.summary, encoding="utf-8") as f:
                value = json.load(f)
            with open(self.output, encoding="utf-8") as f:
                n = sum(1 for line in f if line.strip())
        except (OSError, ValueError):
            return None
        if not isinstance(value, dict) or value.get("fingerprint") != fingerprint:
            return None
        if any(value.get(k) != v for k, v in same.items()) or value.get(self.count_key) != n:
            return None
        return value if expected is None or n == expected else None


# ============================================================================ .partial files
def partial_path(output: str) -> str:
    """Where a stage keeps what it has of ``output`` until ``output`` is in place: ``OUTPUT.partial``
    (the resumable records of a streaming stage, or a file being written)."""
    return output + ".partial"


def earlier_record(path: str) -> Optional[str]:
    """The file an earlier version kept in place of the record at ``path``, when one is there."""
    folder = os.path.dirname(os.path.dirname(path))
    for kind in _EARLIER_BY_RECORD.get(os.path.basename(path), ()):
        earlier = os.path.join(folder, EARLIER_PLACES[kind])
        if os.path.isfile(earlier):
            return earlier
    return None


def earlier_version(path: str) -> InputError:
    """The one line for a record of an earlier version met by a stage."""
    folder = os.path.dirname(path) or "."
    if os.path.basename(folder) == RECORD_DIR:
        folder = os.path.dirname(folder) or "."
    return InputError(
        f"{path}: a record of an earlier version; run `contextual-mt pipeline migrate {folder}`", code=Code.FORMAT
    )


def _partial_fingerprint(path: str, first: object) -> Optional[Dict]:
    """The fingerprint on a partial file's first line."""
    if isinstance(first, dict) and EARLIER_PLACES["partial-key"] in first and FINGERPRINT_KEY not in first:
        raise earlier_version(path)
    return first.get(FINGERPRINT_KEY) if isinstance(first, dict) else None


def read_partial(path: str, command: str) -> Tuple[Optional[Dict], List[Dict]]:
    """The fingerprint and the complete records of an interrupted run (a cut-off last line is
    dropped; a file with no complete line holds nothing). A complete line that is not a record is
    damage no interruption makes (it writes whole lines, then a cut-off one): refused, naming the
    line, rather than resumed up to it. ``command`` names who writes it."""
    if not os.path.exists(path):
        return None, []
    if os.path.isdir(path):
        raise InputError(
            f"{path}: is a directory, not the partial records of an interrupted run; move it away",
            code=Code.IS_DIRECTORY,
        )
    header, records = None, []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f):
                if not line.endswith("\n"):
                    break
                try:
                    value = json.loads(line)
                except json.JSONDecodeError:
                    value = None
                if n == 0:
                    header = _partial_fingerprint(path, value)
                    if not isinstance(header, dict):
                        raise InputError(
                            f"{path}: has no fingerprint on its first line (left by an older version, or not by "
                            f"`contextual-mt {command}`), so it cannot be trusted; "
                            "rerun with --overwrite to discard it",
                            code=Code.MISMATCH,
                        )
                elif isinstance(value, dict) and isinstance(value.get("line"), int):
                    records.append(value)
                else:
                    raise InputError(
                        f"{path}:{n + 1}: damaged (not a record of `contextual-mt {command}`), so the file cannot be "
                        "trusted; rerun with --overwrite to discard it",
                        code=Code.FORMAT,
                    )
    except UnicodeDecodeError:
        raise InputError(
            f"{path}: not a partial {command} run (not UTF-8 text); rerun with --overwrite to discard it",
            code=Code.NOT_UTF8,
        ) from None
    return header, records


def resumable_records(path: str, fp: Dict, lines: Iterable[int], command: str = "cxmi") -> List[Dict]:
    """The records of ``path`` to keep, if it was left by this very computation; an error
    naming what differs if it was not. ``lines``: the 1-based lines this run computes."""
    header, records = read_partial(path, command)
    if header is None:
        return []
    differ = differences(header, fp, ("partial", "now"))
    if differ:
        raise InputError(
            f"{path}: left by a different computation (differs in: {', '.join(differ)}); "
            "rerun with --overwrite to discard it",
            code=Code.MISMATCH,
        )
    wanted, kept = set(lines), {}
    for r in records:
        if r["line"] in wanted:
            kept[r["line"]] = r
    return list(kept.values())


def remove_partial(output: str) -> None:
    """After the outputs are in place, the partial file has served."""
    partial = partial_path(output)
    if os.path.exists(partial):
        os.unlink(partial)


class PartialFile:
    """``OUTPUT.partial``: the fingerprint line, then records as batches finish. It lives outside
    the output transaction on purpose (it must survive an interruption, for resuming), and is
    created only when the first records arrive, so a run failing before scoring leaves none."""

    def __init__(self, path: str, fp: Dict, resumed: Sequence[Dict]):
        self.path, self.fp, self.resumed = path, fp, list(resumed)
        self.file: Optional[TextIO] = None

    def write(self, records: Sequence[Dict]) -> None:
        lines = [json.dumps(r, ensure_ascii=False) for r in records]
        if self.file is None:
            # replaces any earlier file: the fingerprint, what was resumed (without a cut-off line)
            head = [json.dumps({FINGERPRINT_KEY: self.fp})] + [json.dumps(r, ensure_ascii=False) for r in self.resumed]
            atomic_write_lines(self.path, head + lines, transactional=False)
            with writing(self.path):
                self.file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115  (kept open: records are appended as they come)
            return
        with writing(self.path):  # a full disk: one line naming the file
            self.file.write("".join(line + "\n" for line in lines))
            self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            with writing(self.path):  # the last buffered records (after a failed write: again)
                self.file.close()
