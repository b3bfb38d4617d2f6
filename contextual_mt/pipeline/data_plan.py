"""The data stage's plan and record (``make data LANG=xx``): the options, the fingerprint of the
inputs and settings, and ``output/.stage/data.json``, the stage's record (a ``StageRecord``) of the
finished steps (text, spm, bin) with their files' sha256, and of its outputs once the stage
finished; plus the folder lock. ``prepare.py`` runs the
steps.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

from commandkit.errors import shown
from commandkit.options import option
from commandkit.text import file_sha256
from contextual_mt.errors import Code, InputError, check_number
from contextual_mt.inference.model_args import overwrite_option, progress_option
from contextual_mt.pipeline import corpora
from contextual_mt.pipeline.corpora import SOURCE_LANG, SPLITS
from contextual_mt.pipeline.layout import check_lang
from contextual_mt.pipeline.make_names import given, option_name
from contextual_mt.pipeline.presets import PRESETS, get_preset
from contextual_mt.stage_record import StageRecord, digest, earlier_record, earlier_version, tree_hashes

FORMAT = 1  # of the state file and the outputs; a change invalidates earlier outputs
STATE = os.path.join(".stage", "data.json")  # the stage's record, in the output folder
SCRATCH = ".prepare-tmp"
SUMMARY = "summary.json"
STEPS = ("text", "spm", "bin")
_TEXT_SETTINGS = ("format", "source_lang", "target_lang", "input_kind", "input_sha256", "detokenize", "iwslt_sets")
STEP_SETTINGS = {
    "text": _TEXT_SETTINGS,
    "spm": (*_TEXT_SETTINGS, "spm"),
    "bin": (*_TEXT_SETTINGS, "spm", "dictionary"),
}
# what bin/dict.*.txt holds; data made before it held every piece recorded none, and is refused
DICTIONARY = "every piece of spm.model"
SPM_TYPES = ("bpe", "unigram")
CJK = {"ja", "zh", "ko"}  # character_coverage 0.9995 by default: rare characters become <unk>
INPUT_KINDS = ("ted", "iwslt", "text")
ENCODE_CHUNK = 20_000
PADDING_FACTOR = 8  # fairseq-preprocess pads the dictionary it builds to a multiple of this


def default_workers() -> int:
    return max(1, min(8, os.cpu_count() or 1))


DEFAULT_VOCAB_SIZE = 16000  # the papers' TED set-up
INPUT = "input (exactly one)"


@dataclass
class DataOptions:
    """What ``prepare_data`` reads and how. Exactly one of ``ted`` / ``iwslt`` / ``text``."""

    DESCRIPTION: ClassVar[str] = """\
Prepare one language pair (en -> LANG) from one corpus. Writes into OUTPUT:
  {train,valid,test}.{en,LANG,docids}  detokenized text, one document id per line
  spm.model, spm.vocab                 a joint sentencepiece model (train.en + train.LANG)
  bin/                                 fairseq-preprocess --joined-dictionary output, the dictionaries
                                       holding every piece of spm.model, <brk> and <mask>, and
                                       {split}.en-LANG.docids
  summary.json                         counts per split, settings, fingerprint, seconds per step
Each step is renamed into place when complete; a re-run with the same inputs and options skips
the finished steps, one with other inputs or options is refused unless --overwrite."""

    lang: str = option(required=True, help="target language code (the source is en), e.g. fr, de, pt-br")
    ted: Optional[str] = option(
        metavar="PATH",
        group=INPUT,
        help="the TED talks corpus of Qi et al. 2018: "
        "ted_talks.tar.gz or the folder it unpacks to (Moses-tokenized: detokenized with "
        "sacremoses)",
    )
    iwslt: Optional[str] = option(
        metavar="DIR", group=INPUT, help="an IWSLT17 en-XX release folder (train.tags.* and IWSLT17.TED.*.xml)"
    )
    text: Optional[str] = option(
        metavar="DIR", group=INPUT, help="a folder with {train,valid,test}.{en,XX,docids}, used as is"
    )
    output: str = option(required=True, metavar="DIR", help="folder to write (e.g. data/fr)")
    # None: the preset's, else DEFAULT_VOCAB_SIZE (set when built)
    vocab_size: int = option(
        help=f"sentencepiece pieces (default: the --preset's, else {DEFAULT_VOCAB_SIZE}, the papers' TED set-up)"
    )
    preset: Optional[str] = option(
        choices=sorted(PRESETS),
        help="the training preset the data is for (make: PRESET): its vocabulary size when --vocab-size "
        "is not given (" + ", ".join(f"{p.name} {p.vocab_size}" for p in PRESETS.values() if p.vocab_size) + ")",
    )
    # bpe: on TED-sized data it trains ~10x faster than unigram and gives ~15% shorter
    # sequences (documents with context are long); fairseq uses one fixed segmentation anyway
    spm_type: str = option(choices=SPM_TYPES, default="bpe", help="sentencepiece model type (default: bpe)")
    # None: 0.9995 for ja/zh/ko, else 1.0
    character_coverage: Optional[float] = option(
        help="sentencepiece character coverage (default: 0.9995 for ja/zh/ko, else 1.0)"
    )
    # spm trains on at most this many sentences (a random sample)
    input_sentence_size: int = option(
        default=1_000_000,
        help="sentencepiece trains on a random sample of at most this many sentences (default: 1000000)",
    )
    iwslt_dev: Optional[str] = option(  # None: dev2010
        metavar="SETS", help="IWSLT set(s) for the valid split, comma-separated (default: dev2010)"
    )
    iwslt_test: Optional[str] = option(  # None: tst2015 if present, else the newest tst set
        metavar="SETS",
        help="IWSLT set(s) for the test split, comma-separated (default: tst2015 if present, else the newest tst set)",
    )
    workers: int = option(  # 0: default_workers()
        default=0,
        help=lambda: f"processes for detokenization, encoding and binarization (default: {default_workers()})",
    )
    overwrite: bool = overwrite_option(
        "replace what OUTPUT holds (by default, a run with other inputs or "
        "options is refused, and a run with the same ones skips the finished "
        "steps)"
    )
    progress: bool = progress_option("no progress lines")
    seed: int = 1  # of the sentencepiece training sample

    def __post_init__(self) -> None:
        check_lang(self.lang)  # the same codes as the later stages
        inputs = [given(f"--{k}") for k in INPUT_KINDS if getattr(self, k)]
        if len(inputs) != 1:  # under make: TED=, IWSLT=, TEXT=
            raise InputError(
                f"give exactly one of {', '.join(given(f'--{k}') for k in INPUT_KINDS)} (got "
                + (" and ".join(inputs) or "none")
                + ")",
                code=Code.OPTION_MISSING,
            )
        if not self.output:
            raise InputError("--output: give the folder to write", code=Code.OPTION_MISSING)
        if self.kind != "iwslt":
            for flag, value in (("--iwslt-dev", self.iwslt_dev), ("--iwslt-test", self.iwslt_test)):
                if value is not None:
                    raise InputError(
                        f"{given(flag)} only applies to {given('--iwslt')} input (the input "
                        f"is {given('--' + self.kind)})",
                        code=Code.OPTIONS_CONFLICT,
                    )
        if self.vocab_size is None:
            preset = get_preset(self.preset).vocab_size if self.preset else None
            self.vocab_size = preset or DEFAULT_VOCAB_SIZE
        check_number(option_name("--vocab-size"), self.vocab_size, minimum=10, integer=True)
        if self.spm_type not in SPM_TYPES:
            raise InputError(
                f"--spm-type must be one of {', '.join(SPM_TYPES)} (got {self.spm_type!r})", code=Code.OPTION_VALUE
            )
        check_number("--character-coverage", self.character_coverage, minimum=0.5, maximum=1.0, optional=True)
        check_number("--input-sentence-size", self.input_sentence_size, minimum=100, integer=True)
        check_number("--workers", self.workers, minimum=0, integer=True)
        check_number("--seed", self.seed, integer=True)
        if self.workers == 0:
            self.workers = default_workers()

    @property
    def kind(self) -> str:
        return next(k for k in INPUT_KINDS if getattr(self, k))

    @property
    def input_path(self) -> str:
        return getattr(self, self.kind)

    @property
    def coverage(self) -> float:
        if self.character_coverage is not None:
            return float(self.character_coverage)
        return 0.9995 if corpora.base_language(self.lang) in CJK else 1.0


def remove_path(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def library_versions() -> Dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("sacremoses", "sentencepiece", "fairseq"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "not installed"
    return found


# ============================================================================ the plan
@dataclass
class Plan:
    options: DataOptions
    out: str
    files: List[str]  # the input files read
    settings: Dict[str, Any]  # everything the outputs depend on (hashed into the fingerprint)
    fingerprint: str
    iwslt_sets: Optional[Dict[str, List[str]]]
    created_root: Optional[str] = None

    def text_names(self) -> List[str]:
        lang = self.options.lang
        return [f"{split}.{ext}" for split in SPLITS for ext in (SOURCE_LANG, lang, "docids")]

    def step_outputs(self, step: str) -> List[str]:
        return {"text": self.text_names(), "spm": ["spm.model", "spm.vocab"], "bin": ["bin"]}[step]

    def all_outputs(self) -> List[str]:
        return [name for step in STEPS for name in self.step_outputs(step)] + [SUMMARY]


def make_plan(options: DataOptions) -> Plan:
    """Resolve the input files and compute the fingerprint; fails before anything is written."""
    kind, path, lang = options.kind, os.path.abspath(options.input_path), options.lang
    sets = None
    if kind == "ted":
        files = corpora.ted_files(path)
        languages = corpora.ted_languages(path)  # a header: fail now, not after hashing the corpus
        for code in (SOURCE_LANG, lang):
            if code not in languages:
                raise InputError(
                    f"{options.input_path}: the TED corpus has no '{code}' column; the "
                    f"languages are: {' '.join(languages)}",
                    code=Code.FORMAT,
                )
    elif kind == "iwslt":
        dev = options.iwslt_dev or "dev2010"
        sets = corpora.resolve_iwslt_sets(path, lang, dev, options.iwslt_test)
        files = corpora.iwslt_files(path, lang, dev, options.iwslt_test)
    else:
        files = corpora.text_files(path, lang)
        for f in files:
            if not os.path.isfile(f):
                raise InputError(
                    f"{f}: file not found ({shown('--text')} needs train/valid/test "
                    f".{SOURCE_LANG}, .{lang} and .docids)"
                    if not os.path.exists(f)
                    else f"{f}: not a file",
                    code=Code.NOT_FOUND if not os.path.exists(f) else Code.IS_DIRECTORY,
                )
    out = os.path.abspath(options.output)
    if os.path.exists(out) and not os.path.isdir(out):
        raise InputError(f"{options.output}: exists and is not a folder", code=Code.CANNOT_WRITE)
    if kind == "text" and os.path.realpath(path) == os.path.realpath(out):
        raise InputError(
            f"{options.output}: --output is the {shown('--text')} folder; write the prepared data elsewhere",
            code=Code.OUTPUT_IS_INPUT,
        )
    settings = {
        "format": FORMAT,
        "source_lang": SOURCE_LANG,
        "target_lang": lang,
        "input_kind": kind,
        # inputs by content: moving the corpus does not invalidate the outputs, editing it does
        "input_sha256": {os.path.relpath(f, path) if f != path else "(archive)": file_sha256(f) for f in files},
        "detokenize": kind == "ted",
        "iwslt_sets": sets,
        "spm": {
            "model_type": options.spm_type,
            "vocab_size": options.vocab_size,
            "character_coverage": options.coverage,
            "input_sentence_size": options.input_sentence_size,
            "seed": options.seed,
        },
        "dictionary": DICTIONARY,
    }
    fingerprint = digest(settings)
    return Plan(options, out, files, settings, fingerprint, sets)


def describe_change(old: Dict[str, Any], new: Dict[str, Any]) -> str:
    changes = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict) and key != "input_sha256":
            changes += [
                f"{key}.{k} {a.get(k)!r} -> {b.get(k)!r}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)
            ]
        elif key == "input_sha256":
            changes.append("the input files differ")
        else:
            changes.append(f"{key} {a!r} -> {b!r}")
    return "; ".join(changes[:4]) or "a different format"


# ============================================================================ state
class DataState:
    """``output/.stage/data.json``, the data stage's ``StageRecord``: the fingerprint, per finished
    step its files' sha256, its statistics and its seconds, and (``finished``) the outputs of the
    whole stage."""

    def __init__(self, plan: Plan, data: Optional[Dict[str, Any]] = None):
        self.plan = plan
        self.data = data or {"format": FORMAT, "fingerprint": plan.fingerprint, "settings": plan.settings, "steps": {}}

    @property
    def path(self) -> str:
        return os.path.join(self.plan.out, STATE)

    def done(self, step: str) -> Optional[Dict[str, Any]]:
        return self.data["steps"].get(step)

    def finished_step(self, step: str) -> Dict[str, Any]:
        """The record of a step that finished (one line if the state file lacks it)."""
        record = self.done(step)
        if record is None:
            raise InputError(
                f"{self.path}: no record of the finished step {step!r}; use --overwrite", code=Code.MISMATCH
            )
        return record

    def finish(self, step: str, stats: Dict[str, Any], seconds: Dict[str, float]) -> None:
        files = tree_hashes(self.plan.out, self.plan.step_outputs(step))
        self.data["steps"][step] = {"files": files, "stats": stats, "seconds": seconds}
        self.data["versions"] = library_versions()  # of the libraries that wrote the outputs
        self.save()

    def forget(self, steps: Sequence[str]) -> None:
        if any(self.data["steps"].pop(step, None) is not None for step in list(steps)):
            self.save()

    def save(self, outputs: Sequence[str] = ()) -> None:
        """``outputs``: the stage finished, these are its outputs (a step that is redone forgets them)."""
        fields = {k: v for k, v in self.data.items() if k not in ("stage", "fingerprint", "outputs", "base")}
        StageRecord(self.path, "data").save(
            self.data["fingerprint"], [os.path.join(self.plan.out, n) for n in outputs], **fields
        )

    def stale(self, step: str) -> Optional[str]:
        """The first output of a finished step that is missing or changed since, if any."""
        record = self.finished_step(step)
        now = tree_hashes(self.plan.out, self.plan.step_outputs(step))
        for name, recorded in record["files"].items():
            if now.get(name) != recorded:
                return name
        for name in now:
            if name not in record["files"]:
                return name
        return None


def state_record(out: str) -> StageRecord:
    """The data stage's record in ``out``."""
    return StageRecord(os.path.join(out, STATE), "data")


def state_exists(out: str) -> bool:
    return os.path.exists(os.path.join(out, STATE))


def remove_state(out: str) -> None:
    """The stage's record, and its folder when that is empty."""
    remove_path(os.path.join(out, STATE))
    folder = os.path.join(out, os.path.dirname(STATE))
    if os.path.isdir(folder) and not os.listdir(folder):
        os.rmdir(folder)


def load_state(plan: Plan) -> Tuple[Optional[DataState], Optional[str]]:
    """The state in the output folder, or (None, why it cannot be used)."""
    path = state_record(plan.out).path
    earlier = earlier_record(path)
    if earlier is not None and not os.path.exists(path):
        raise earlier_version(earlier)
    if not os.path.exists(path):
        return None, None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        fingerprint, settings, steps = data["fingerprint"], data["settings"], data["steps"]
        if not (isinstance(steps, dict) and isinstance(settings, dict)):
            raise TypeError("steps")
    except (OSError, ValueError, KeyError, TypeError):
        return None, f"{path} is unreadable"
    if not steps:  # nothing finished: nothing to keep or to protect
        return None, None
    if data.get("format") != FORMAT:
        return None, f"it was written by another version of this command (format {data.get('format')})"
    if fingerprint != plan.fingerprint:
        changed = {k for k in set(settings) | set(plan.settings) if settings.get(k) != plan.settings.get(k)}
        affected = [step for step in STEPS if step in steps and changed & set(STEP_SETTINGS[step])]
        if affected:
            return None, f"it holds the data of other inputs or options ({describe_change(settings, plan.settings)})"
        # only settings of steps that never finished changed (e.g. a --vocab-size that failed):
        # the finished steps stand, under the new fingerprint
        data = {**data, "fingerprint": plan.fingerprint, "settings": plan.settings}
    return DataState(plan, data), None


def clear_outputs(plan: Plan, old_names: Sequence[str] = ()) -> None:
    for name in [*plan.all_outputs(), *old_names, SCRATCH]:
        remove_path(os.path.join(plan.out, name))
    remove_state(plan.out)


def old_output_names(plan: Plan) -> List[str]:
    """What an earlier run (another target language) recorded in the state file."""
    try:
        with open(state_record(plan.out).path, encoding="utf-8") as f:
            data = json.load(f)
        names = set()
        for record in data.get("steps", {}).values():
            for rel in record.get("files", {}):
                name = rel.split("/")[0]
                if re.fullmatch(r"(train|valid|test)\.[A-Za-z0-9_-]+|spm\.(model|vocab)|bin", name):
                    names.add(name)  # only what this command writes: the state file may be edited
        return sorted(names)
    except (OSError, ValueError, AttributeError):
        return []


@dataclass
class FolderLock:
    fd: int


def lock_folder(out: str) -> FolderLock:
    fd = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise InputError(
            f"{out}: another data run is writing this folder; wait for it to end", code=Code.CANNOT_WRITE
        ) from None
    return FolderLock(fd)


def unlock_folder(lock: FolderLock) -> None:
    fcntl.flock(lock.fd, fcntl.LOCK_UN)
    os.close(lock.fd)
