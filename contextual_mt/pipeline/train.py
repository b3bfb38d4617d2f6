"""``make train LANG=xx [MODEL=sentence|context] PRESET=tiny|small|big``: the study's two models.

``sentence`` has no context; ``context`` is the P-CXMI model of Fernandes et al. 2023 (§3.1):
target context of 0-3 previous sentences with the size drawn per example, plus CoWord dropout.
The preset (``pipeline/presets.py``) is a Hydra config shipped in ``contextual_mt/hydra_configs/``
(``tiny``: CPU tests; ``small``: transformer-small from scratch; ``big``: fine-tunes a
sentence-level checkpoint; ``demo``: the offline demo's models). fairseq runs
on every visible GPU (torchrun when more than one, fp16 where the GPU has fast half precision)
or on CPU with the same command.

The stage's record, ``.stage/train.json`` in the checkpoint directory (a ``StageRecord``;
``pipeline/stages.py`` declares where): written when training starts, it holds what the
checkpoints are trained from (re-running resumes from ``checkpoint_last.pt`` only when that still
holds); written again when training ends, it marks a finished run and holds what the checkpoints
themselves say (``checkpoint_best.pt``'s sha256, the epochs and updates trained, the validation
losses), not what was asked. The stopping criterion is not part of what the checkpoints are
trained from: asked for more epochs or updates than a finished run has, training goes on from
``checkpoint_last.pt``; asked for fewer, the stage refuses (``--overwrite`` trains again). The
record keeps what was asked (``--max-epoch``, ``--max-update``): a rerun without them keeps those
values, and says so in one line, rather than training on to the preset's epochs.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from commandkit.errors import shown
from commandkit.options import option
from commandkit.text import file_sha256
from contextual_mt.backends.fairseq.checkpoint_file import read_training_figures, training_figures
from contextual_mt.backends.fairseq.training_probe import TrainingSplit
from contextual_mt.errors import Code, InputError, check_number
from contextual_mt.inference.model_args import overwrite_option, progress_option
from contextual_mt.pipeline.batch_plan import (
    BatchPlan,
    gpu_memory_gib,
    measure_memory,
    parse_batch,
    plan_batch,
    reference_of,
)
from contextual_mt.pipeline.layout import MODELS, SOURCE_LANG, PairLayout, require_data
from contextual_mt.pipeline.make_names import given, option_name, under_make
from contextual_mt.pipeline.presets import DEFAULT, PRESETS, config_dir, config_file, get_preset, preset_config
from contextual_mt.pipeline.stage_options import ROOT_HELP
from contextual_mt.pipeline.stages import record as stage_record
from contextual_mt.pipeline.train_progress import TrainProgress
from contextual_mt.stage_record import StageRecord, stale_error

USER_DIR = str(Path(__file__).resolve().parents[1])
# the model kinds of the study, as task overrides (the same keys for both, so neither inherits
# a preset's context settings by accident)
KINDS = {
    "sentence": [
        "task.source_context_size=0",
        "task.target_context_size=0",
        "task.sample_context_size=false",
        "task.coword_dropout=0.0",
    ],
    "context": [
        "task.source_context_size=0",
        "task.target_context_size=3",
        "task.sample_context_size=true",
        "task.coword_dropout=0.1",
    ],
}
LOG = "train.log"
# training on CPU: the batches are made in the training process (fairseq's one data-loader worker
# would be one more busy process on cores the training threads already fill)
CPU_OVERRIDES = ("dataset.num_workers=0",)


def done_record(layout: PairLayout, model: str) -> StageRecord:
    """The train stage's record of ``model``: what its checkpoints are trained from (written when
    training starts, with no output yet) and, once training finished, checkpoint_best.pt and the figures."""
    return stage_record("train", layout, model=model)


@dataclass
class TrainOptions:
    lang: str = option(required=True, help="target language (source: English)")
    # sentence | context; None (the command line's default): both, one TrainOptions each (per_model)
    model: str = option(choices=MODELS, help="default: both")
    preset: str = option(
        choices=sorted(PRESETS),
        default=DEFAULT,
        help="; ".join(f"{p.name}: {p.about}" for p in PRESETS.values()).replace("%", "%%"),
    )
    root: str = option(default=".", help=ROOT_HELP)
    # PRESET=big: the sentence-level checkpoint to fine-tune
    pretrained: Optional[str] = option(help="sentence-level checkpoint to fine-tune (--preset big)")
    gpus: Optional[int] = option(help="default: every visible GPU; 0 = CPU")  # None: every visible GPU
    fp16: Optional[bool] = option(
        action=argparse.BooleanOptionalAction, help="default: on GPUs with compute capability >= 7.0"
    )
    max_epoch: Optional[int] = option(help="default: the preset's (per model kind for the demo preset)")
    max_update: Optional[int] = option()
    # auto | preset | tokens per update (pipeline/batch_plan.py)
    batch: str = option(
        default="auto",
        metavar="auto|preset|N",
        help="tokens per update: auto (default; on a GPU as many as its memory holds, up to 8x the "
        "preset's, with the learning rate and warm-up scaled; on CPU the preset's), preset (the "
        "config's exact settings) or N tokens per update (scaled the same way); docs/explanations/batching.md",
    )
    # extra Hydra overrides, key=value
    overrides: List[str] = option(
        "--override",
        dest="override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Hydra override (repeatable), e.g. optimization.lr=[1e-3]",
    )
    # discard checkpoints trained from something else
    overwrite: bool = overwrite_option("discard checkpoints trained from other data or settings")
    progress: bool = progress_option()
    # None: PairLayout(lang, root), set when built (so typed as what it is after); the demo keeps its own folders
    layout: PairLayout = None  # type: ignore[assignment]  # set in __post_init__

    def __post_init__(self) -> None:
        self.layout = self.layout or PairLayout(self.lang, self.root)
        if self.model is not None and self.model not in MODELS:
            raise InputError(
                f"{shown('--model')} {self.model!r}: expected one of {', '.join(MODELS)}", code=Code.OPTION_VALUE
            )
        preset = get_preset(self.preset)
        check_number("--gpus", self.gpus, minimum=0, integer=True, optional=True)
        check_number("--max-epoch", self.max_epoch, minimum=1, integer=True, optional=True)
        check_number("--max-update", self.max_update, minimum=1, integer=True, optional=True)
        self.batch = parse_batch(self.batch, option_name("--batch"))
        for item in self.overrides:
            if "=" not in item or item.startswith("="):
                raise InputError(f"override {item!r}: expected a Hydra override key=value", code=Code.OPTION_VALUE)
        if preset.pretrained:
            if not self.pretrained:
                raise InputError(
                    f"{shown('--preset')} {self.preset} fine-tunes a sentence-level checkpoint: give it "
                    f"with {given('--pretrained', 'PATH')}",
                    code=Code.OPTION_MISSING,
                )
            if not os.path.isfile(self.pretrained):
                raise InputError(f"{self.pretrained}: pretrained checkpoint not found", code=Code.NOT_FOUND)
        elif self.pretrained:
            raise InputError(
                f"{shown('--pretrained')} is for {shown('--preset')} big (fine-tuning); "
                f"{shown('--preset')} {self.preset} trains from scratch",
                code=Code.OPTIONS_CONFLICT,
            )


def visible_gpus() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _fast_fp16() -> bool:
    import torch

    return all(torch.cuda.get_device_capability(i)[0] >= 7 for i in range(torch.cuda.device_count()))


def data_fingerprint(layout: PairLayout) -> Dict[str, str]:
    """The binarized data by content: the dictionaries, the index files (sentence sizes) and
    the document ids of every split."""
    out = {}
    for name in sorted(os.listdir(layout.bin)):
        if name.startswith("dict.") or name.endswith((".idx", ".docids")):
            out[name] = file_sha256(os.path.join(layout.bin, name))
    return out


def train_fingerprint(train: TrainOptions, plan: Optional[BatchPlan] = None) -> Dict:
    """What the checkpoints depend on. The stopping criterion is apart: training longer resumes.
    A batch plan other than the preset's own settings is part of it."""
    fp = {
        "data": data_fingerprint(train.layout),
        "preset": train.preset,
        "config": file_sha256(config_file(train.preset)),
        "model": train.model,
        "pretrained": file_sha256(train.pretrained) if train.pretrained else None,
        # the preset's own overrides first, as the command line has them
        "overrides": [*get_preset(train.preset).overrides, *train.overrides],
    }
    if plan is not None and plan.fingerprint() is not None:
        fp["batch"] = plan.fingerprint()
    return fp


def batch_plan(train: TrainOptions, gpus: int) -> BatchPlan:
    """Tokens per update and the learning-rate rule for this run (pipeline/batch_plan.py)."""
    config = preset_config(train.preset, (*KINDS[train.model], *train.overrides))
    task = dict(config.get("task") or {})

    def estimate():
        return measure_memory(config.get("model") or {}, os.path.join(train.layout.bin, f"dict.{train.lang}.txt"), task)

    split: Dict[str, TrainingSplit] = {}

    def training_split() -> TrainingSplit:  # read only when auto sizes a GPU batch or N is given
        if "train" not in split:
            split["train"] = TrainingSplit(task, train.layout.bin, SOURCE_LANG, train.lang)
        return split["train"]

    flag = option_name("--batch")
    plan = plan_batch(
        train.batch,
        reference_of(config),
        gpus,
        gpu_memory_gib(gpus),
        estimate,
        train.overrides,
        flag=flag,
        batches_at=lambda max_tokens: training_split().batches_at(max_tokens),
    )
    if train.batch not in ("auto", "preset"):
        longest = training_split().longest
        if plan.max_tokens < longest:  # fairseq would drop every longer example, or find no batch at all
            raise InputError(
                f"{flag} {train.batch}: {plan.max_tokens} tokens per forward{' on each GPU' if gpus > 1 else ''} are "
                f"fewer than the longest training example ({longest} tokens, its context included); give at "
                f"least {longest * plan.processes * plan.update_freq}",
                code=Code.OPTION_VALUE,
            )
    return plan


def train_command(train: TrainOptions, gpus: int, fp16: bool, plan: Optional[BatchPlan] = None) -> List[str]:
    bin_dir = Path(sys.executable).parent
    save = os.path.abspath(train.layout.checkpoints(train.model))
    preset = get_preset(train.preset)
    cmd = [
        str(bin_dir / "fairseq-hydra-train"),
        "--config-dir",
        config_dir(),
        "--config-name",
        preset.config,
        f"task.data={os.path.abspath(train.layout.bin)}",
        f"task.source_lang={SOURCE_LANG}",
        f"task.target_lang={train.lang}",
        f"common.user_dir={USER_DIR}",
        f"checkpoint.save_dir={save}",
        f"hydra.run.dir={os.path.join(save, 'hydra')}",
        "hydra.output_subdir=null",
        *KINDS[train.model],
        *preset.overrides,
    ]
    if gpus == 0:
        cmd.append("common.cpu=true")
        if not preset.cpu_threads:  # its threads fill every core (a preset of fixed threads leaves the worker one)
            cmd += CPU_OVERRIDES
    if fp16:
        cmd.append("common.fp16=true")
    max_epoch = _max_epoch_option(train)
    if max_epoch is not None:
        cmd.append(f"optimization.max_epoch={max_epoch}")
    if train.max_update is not None:
        cmd.append(f"optimization.max_update={train.max_update}")
    if train.pretrained:
        cmd.append(f"checkpoint.finetune_from_model={os.path.abspath(train.pretrained)}")
    if plan is not None:
        cmd += plan.overrides()
    cmd += train.overrides
    if gpus > 1:  # one process per GPU; fairseq reads the rank from torchrun's environment
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={gpus}", *cmd]
    return cmd


def _max_epoch_option(train: TrainOptions) -> Optional[int]:
    """The max_epoch the command gives: the option's, else the preset's for the model kind (else
    the Hydra config's own)."""
    return train.max_epoch if train.max_epoch is not None else get_preset(train.preset).max_epoch.get(train.model)


def stop_limits(train: TrainOptions) -> Tuple[Optional[int], Optional[int]]:
    """The max_epoch and max_update fairseq runs with (None: no limit), as the command sets them
    over the preset's config (an ``--override`` of them last, as on the command line)."""
    max_epoch = _max_epoch_option(train)
    given_limits = ([f"optimization.max_epoch={max_epoch}"] if max_epoch is not None else []) + (
        [f"optimization.max_update={train.max_update}"] if train.max_update is not None else []
    )
    optimization = preset_config(train.preset, (*given_limits, *train.overrides)).get("optimization") or {}
    return optimization.get("max_epoch") or None, optimization.get("max_update") or None


def _asked(train: TrainOptions, want: int, unit: str) -> str:
    """Where a limit of ``want`` epochs or updates comes from, in the user's words."""
    flag, value = ("--max-epoch", train.max_epoch) if unit == "epochs" else ("--max-update", train.max_update)
    key = "optimization.max_epoch" if unit == "epochs" else "optimization.max_update"
    if any(item.split("=", 1)[0] == key for item in train.overrides):
        return f"--override {key}={want}"
    return given(flag, want) if value == want else f"{given('--preset', train.preset)} ({want} {unit})"


def _past_limits(train: TrainOptions, trained: Dict, limits: Tuple[Optional[int], Optional[int]]) -> Optional[str]:
    """The refusal when the checkpoints were trained for more epochs or updates than asked."""
    for have, want, unit in zip(
        (trained.get("epochs"), trained.get("num_updates")), limits, ("epochs", "updates"), strict=True
    ):
        if have is not None and want is not None and have > want:
            return (
                f"{train.layout.checkpoints(train.model)} was trained for {have} {unit}; "
                f"{_asked(train, want, unit)} asks for "
                f"fewer: {'OVERWRITE=1' if under_make() else '--overwrite'} retrains"
            )
    return None


def _more_to_do(trained: Dict, limits: Tuple[Optional[int], Optional[int]]) -> bool:
    """Whether fairseq, resuming from checkpoints this far, trains on (below both limits)."""
    return all(
        want is None or have is None or have < want
        for have, want in zip((trained.get("epochs"), trained.get("num_updates")), limits, strict=True)
    )


def _plan(train: TrainOptions, fp: Dict, limits: Tuple[Optional[int], Optional[int]]) -> Tuple[str, Optional[Dict]]:
    """What this call does: ``("done", record)`` nothing (the finished run's record);
    ``("record", None)`` record checkpoints that reached the limits before their run was recorded;
    ``("train", record)`` train, from checkpoint_last.pt where there is one (``record``: the
    finished run it goes on from, or None). Checkpoints from other data or settings, damaged ones,
    or ones trained past the limits are an error; ``overwrite`` removes them and training starts
    from scratch."""
    save, best = train.layout.checkpoints(train.model), train.layout.checkpoint(train.model)
    done = done_record(train.layout, train.model).current(fp)
    # a record of 0 updates (a resumed run that trained nothing, issue 50) is not trusted: the checkpoints decide
    trusted = done is not None and done.get("num_updates") != 0
    if (
        trusted
        and done is not None
        and (done.get("max_epoch"), done.get("max_update")) == (train.max_epoch, train.max_update)
    ):
        return "done", done  # the run as it was asked for
    if not os.path.isdir(save):
        return "train", None
    problem, trained = (None, None) if train.overwrite and done is None else _resume_problem(train, fp)
    if not problem and trained is None and done is not None:  # no checkpoint_last.pt: the best is as far as it went
        trained = read_training_figures(best)
    if train.overwrite and (done is None or problem or (trained and _past_limits(train, trained, limits))):
        shutil.rmtree(save)
        return "train", None
    if problem:
        raise stale_error(
            save,
            f"{problem}; resuming would build on them",
            "re-run with --overwrite (make: OVERWRITE=1) to train again from scratch",
        )
    if trained is not None:
        refusal = _past_limits(train, trained, limits)
        if refusal:
            raise InputError(refusal, code=Code.OPTION_VALUE)
        if not _more_to_do(trained, limits):
            if trusted:
                return "done", done  # the limits the run reached, asked for in other words
            if os.path.isfile(best):
                return "record", None
    return "train", done


def keep_asked_limits(train: TrainOptions, fp: Dict) -> None:
    """``--max-epoch`` / ``--max-update`` (make: EPOCHS, MAX_UPDATE) not given: the values the run
    of these very checkpoints was asked for (its record, same fingerprint), said in one line, so
    that a later ``make all`` or ``make table`` without them does not quietly train a short run on
    to the preset's epochs. A value given replaces the one asked before; ``--overwrite`` starts
    over with what this call gives."""
    record = None if train.overwrite else done_record(train.layout, train.model).read()
    if not isinstance(record, dict) or record.get("fingerprint") != fp:
        return  # no run of these settings yet: the preset's limits
    if record.get("outputs") and record.get("num_updates") == 0:
        return  # a record of a resumed run that trained nothing (issue 50): not what the checkpoints had
    kept = []
    for attr, flag in (("max_epoch", "--max-epoch"), ("max_update", "--max-update")):
        asked = record.get(attr)
        if getattr(train, attr) is None and isinstance(asked, int) and not isinstance(asked, bool) and asked > 0:
            setattr(train, attr, asked)
            kept.append((flag, asked))
    if kept:
        print(
            f"[train {train.lang} {train.model}] {' and '.join(given(f, v) for f, v in kept)} "
            "as the earlier run was asked "
            f"(its record); give {' or '.join(given(f, 'N') for f, _ in kept)} to change it",
            file=sys.stderr,
        )


def _resume_problem(train: TrainOptions, fp: Dict) -> Tuple[Optional[str], Optional[Dict]]:
    """Why the checkpoints in the save directory cannot be resumed from, if they cannot; and what
    checkpoint_last.pt says of its training (``training_figures``; None when there is none)."""
    save = train.layout.checkpoints(train.model)
    record = done_record(train.layout, train.model).read()
    last = os.path.join(save, "checkpoint_last.pt")
    if record is None:
        return (
            "the checkpoints there have no record of what they were trained from" if os.path.exists(last) else None
        ), None
    if record.get("fingerprint") != fp:
        old = record.get("fingerprint") or {}
        changed = ", ".join(k for k in sorted(set(fp) | set(old)) if fp.get(k) != old.get(k))
        return f"the checkpoints there were trained from other data or settings (changed: {changed})", None
    best = train.layout.checkpoint(train.model)
    if record.get("outputs") and (not os.path.exists(best) or record.get("checkpoint_sha256") != file_sha256(best)):
        return f"{os.path.basename(best)} is missing or was changed since training finished", None
    if not os.path.exists(last):
        return None, None
    import torch

    try:  # fairseq would fail on it after start-up, with a message that names no file
        state = torch.load(last, map_location="cpu", weights_only=False)
    except Exception as e:  # torch raises many types for a damaged file
        return f"{last} is unreadable ({str(e).splitlines()[0][:120]})", None
    return None, training_figures(state) if isinstance(state, dict) else None


def per_model(options: TrainOptions) -> List[TrainOptions]:
    """One TrainOptions per model the options train (``model`` None: both), each checked."""
    return [replace(options, model=m) for m in ([options.model] if options.model else MODELS)]


def train_model(options: TrainOptions) -> Dict:
    """Train (or resume, or skip) one model of the study; returns its done-record."""
    if options.model is None:
        raise InputError("--model: not given (per_model makes one TrainOptions per model)", code=Code.OPTION_MISSING)
    require_data(options.layout)
    gpus = visible_gpus() if options.gpus is None else options.gpus
    if gpus > visible_gpus():
        raise InputError(f"{shown('--gpus')} {gpus}: only {visible_gpus()} GPU(s) visible", code=Code.OPTION_VALUE)
    fp16 = (gpus > 0 and _fast_fp16()) if options.fp16 is None else options.fp16
    if fp16 and gpus == 0:
        raise InputError("--fp16 needs a GPU", code=Code.OPTION_VALUE)
    plan = batch_plan(options, gpus)
    fp = train_fingerprint(options, plan)
    keep_asked_limits(options, fp)
    action, earlier = _plan(options, fp, stop_limits(options))
    save = options.layout.checkpoints(options.model)
    if action == "done" and earlier is not None:
        print(
            f"{options.model} model: already trained ({options.layout.checkpoint(options.model)}); nothing to do",
            file=sys.stderr,
        )
        return earlier
    record = done_record(options.layout, options.model)
    cmd, stats = train_command(options, gpus, fp16, plan), {}
    if action == "train":
        if options.progress:
            print(f"[train {options.lang} {options.model}] batch: {plan.summary()}", file=sys.stderr)
        os.makedirs(save, exist_ok=True)
        for name in os.listdir(options.layout.bin):  # translate and cxmi find the dictionaries beside the checkpoint
            if name.startswith("dict."):
                shutil.copy(os.path.join(options.layout.bin, name), os.path.join(save, name))
        # under way: not done until this run ends; what was asked, kept for a rerun without it
        record.save(fp, [], max_epoch=options.max_epoch, max_update=options.max_update)
        stats = _run(cmd, os.path.join(save, LOG), options)
        if earlier:  # went on from a finished run: its validations first
            curve = stats.get("valid_curve") or []
            stats["valid_curve"] = [
                p for p in earlier.get("valid_curve") or [] if not curve or p[0] < curve[0][0]
            ] + curve
    if not os.path.exists(options.layout.checkpoint(options.model)):
        raise InputError(
            f"{save}: training ended without checkpoint_best.pt; see {os.path.join(save, LOG)}", code=Code.MODEL
        )
    figures = checkpoint_figures(options)
    return record.save(
        fp,
        [options.layout.checkpoint(options.model)],
        max_epoch=options.max_epoch,
        max_update=options.max_update,
        preset=options.preset,
        # the preset's output-length bound as trained: make translate decodes this model with it
        max_len=get_preset(options.preset).max_len,
        model=options.model,
        gpus=gpus,
        fp16=fp16,
        batch=plan.as_record(),
        tokens_per_update=plan.tokens_per_update,
        command=cmd if action == "train" else None,
        checkpoint_sha256=file_sha256(options.layout.checkpoint(options.model)),
        **{**stats, **figures, **_health(options, figures)},
    )  # the checkpoints' figures over the log's


def checkpoint_figures(train: TrainOptions) -> Dict:
    """What the checkpoints say of their training, for the record: the epochs (and the epoch it
    stopped in part-way, by max_update), updates and last validation loss of checkpoint_last.pt
    (of checkpoint_best.pt when there is no other), the epoch and validation loss of
    checkpoint_best.pt, and the label smoothing."""
    best = read_training_figures(train.layout.checkpoint(train.model))
    path = os.path.join(train.layout.checkpoints(train.model), "checkpoint_last.pt")
    last = read_training_figures(path) if os.path.exists(path) else best
    return {
        "epochs": last["epochs"],
        "stopped_in_epoch": last["stopped_in_epoch"],
        "num_updates": last["num_updates"],
        "valid_loss": last["valid_loss"],
        "best_epoch": best["epochs"],
        "best_valid_loss": best["valid_loss"],
        "label_smoothing": best["label_smoothing"],
    }


def _health(train: TrainOptions, figures: Dict) -> Dict:
    """Warn when checkpoint_best.pt is no better than a unigram model of the target (the loader
    warns again on every later load); the figures go into the done-record."""
    from contextual_mt.backends.fairseq.checkpoint_file import dictionary_counts
    from contextual_mt.inference.model_health import warn_if_untrained

    counts = dictionary_counts(os.path.join(train.layout.checkpoints(train.model), f"dict.{train.lang}.txt"))
    check = warn_if_untrained(
        train.layout.checkpoint(train.model), figures["best_valid_loss"], counts, figures.get("label_smoothing") or 0.0
    )
    return {"unigram_loss": check.unigram_loss, "looks_untrained": check.looks_untrained}


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity: a container's or a Slurm job's share)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def cpu_thread_env(preset: str, gpus: int) -> Dict[str, str]:
    """The CPU threads of training on CPU: the preset's fixed count (the weights depend on it),
    else the cores this process may use, and no dynamic thread counts, which OpenMP and MKL may
    lower under load. Not more threads than cores: on 2 cores torch's own count (and a data-loader
    worker beside it: ``CPU_OVERRIDES``) spent most of a context model's epoch in the kernel."""
    if gpus:
        return {}
    threads = get_preset(preset).cpu_threads or usable_cores()
    return {
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        "OMP_DYNAMIC": "FALSE",
        "MKL_DYNAMIC": "FALSE",
    }


def _run(cmd: List[str], log_path: str, train: TrainOptions) -> Dict:
    """fairseq-hydra-train with its log in ``log_path``; on the terminal a bar per epoch and one
    line per validation (``train_progress``)."""
    start = time.time()
    progress = TrainProgress(f"[train {train.lang} {train.model}]", max_epoch=_max_epoch(cmd), show=train.progress)
    gpus = visible_gpus() if train.gpus is None else train.gpus
    env = dict(os.environ, HYDRA_FULL_ERROR="1", **cpu_thread_env(train.preset, gpus))
    try:
        with open(log_path, "a", encoding="utf-8") as log:
            log.write("$ " + " ".join(cmd) + "\n")
            log.flush()
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
            assert proc.stdout is not None  # stdout=PIPE
            for line in proc.stdout:
                log.write(line)
                progress.feed(line)
            proc.wait()
    finally:
        progress.close()
    if proc.returncode != 0:
        tail = _last_error(log_path)
        if _failed_saving(log_path):  # fairseq's own error names neither the folder nor the cause
            save = train.layout.checkpoints(train.model)
            free = shutil.disk_usage(save).free / 2**30
            raise InputError(
                f"{save}: saving a checkpoint failed ({tail or 'see the log'}); is the disk full "
                f"({free:.1f} GiB free now)? Free space there and re-run: training resumes from "
                f"checkpoint_last.pt; see {log_path}",
                code=Code.CANNOT_WRITE,
            )
        raise InputError(
            f"training the {train.model} model failed{': ' + tail if tail else ''}; see {log_path}", code=Code.MODEL
        )
    stats = progress.stats.as_dict()
    stats["seconds"] = round(time.time() - start, 1)
    return stats


def _max_epoch(cmd: List[str]) -> Optional[int]:
    """The command's max_epoch, until fairseq logs the one it uses (the preset's when not given)."""
    found = [int(a.split("=", 1)[1]) for a in cmd if a.startswith("optimization.max_epoch=")]
    return found[-1] if found else None


# how a failed checkpoint write ends fairseq's log: torch's writer errors, or an OSError of a full disk
_SAVE_ERRORS = (
    "No space left on device",
    "Errno 28",
    "PytorchStreamWriter failed",
    "file write failed",
    "unexpected pos",
    "Disk quota exceeded",
)
_SAVE_FRAME = re.compile(r'checkpoint_utils\.py", line \d+, in (save_checkpoint|_?torch_persistent_save)')


def _failed_saving(log_path: str) -> bool:
    """Whether fairseq's run ended in writing a checkpoint: its traceback passes through
    ``checkpoint_utils``' save, or the error is one of a full disk."""
    with open(log_path, encoding="utf-8", errors="replace") as f:
        tail = f.readlines()[-80:]
    text = "".join(tail)
    return any(e in text for e in _SAVE_ERRORS) or bool(_SAVE_FRAME.search(text))


def _last_error(log_path: str) -> str:
    with open(log_path, encoding="utf-8", errors="replace") as f:
        lines = [line.strip() for line in f if line.strip()]
    for line in reversed(lines[-40:]):
        if line.startswith("error:") or "Error" in line.split(":")[0]:
            return line[:300]
    return ""
