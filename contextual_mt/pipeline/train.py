"""``make train LANG=xx [MODEL=sentence|context] PRESET=tiny|small|big``: the study's two models.

``sentence`` has no context; ``context`` is the P-CXMI model of Fernandes et al. 2023 (§3.1):
target context of 0-3 previous sentences with the size drawn per example, plus CoWord dropout.
The preset (``pipeline/presets.py``) is a Hydra config shipped in ``contextual_mt/hydra_configs/``
(``tiny``: CPU tests; ``small``: transformer-small from scratch; ``big``: fine-tunes a
sentence-level checkpoint; ``demo``: the offline demo's models). fairseq runs
on every visible GPU (torchrun when more than one, fp16 where the GPU has fast half precision)
or on CPU with the same command.

Two stage records in the checkpoint directory (``pipeline/stages.py`` declares where): the one
written when training starts holds what the checkpoints are trained from (re-running resumes from
``checkpoint_last.pt`` only when that still holds), and the done-record marks a finished run
(nothing to do on the next call) with its figures.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from contextual_mt.errors import ContextualMTError, check_option
from contextual_mt.pipeline.batch_plan import BatchPlan, TrainingSplit, gpu_memory_gib, measure_memory, \
    parse_batch, plan_batch, reference_of
from contextual_mt.pipeline.layout import MODELS, SOURCE_LANG, PairLayout, require_data
from contextual_mt.pipeline.make_names import option_name
from contextual_mt.pipeline.presets import DEFAULT, config_dir, config_file, get_preset, preset_config
from contextual_mt.pipeline.train_progress import TrainProgress
from contextual_mt.pipeline.stages import record as stage_record
from contextual_mt.stage_record import StageRecord, stale_error
from commandkit.text import file_sha256
USER_DIR = str(Path(__file__).resolve().parents[1])
# the model kinds of the study, as task overrides (the same keys for both, so neither inherits
# a preset's context settings by accident)
KINDS = {
    "sentence": ["task.source_context_size=0", "task.target_context_size=0",
                 "task.sample_context_size=false", "task.coword_dropout=0.0"],
    "context": ["task.source_context_size=0", "task.target_context_size=3",
                "task.sample_context_size=true", "task.coword_dropout=0.1"],
}
RECORD, LOG = "train.json", "train.log"


def done_record(layout: PairLayout, model: str) -> StageRecord:
    """The train stage's done-record of ``model`` (the fingerprint, the checkpoint and the figures)."""
    return stage_record("train", layout, model=model)


def started_record(layout: PairLayout, model: str) -> StageRecord:
    """What the checkpoints in the save directory are being trained from (written when training starts)."""
    return StageRecord(os.path.join(layout.checkpoints(model), RECORD), "train")


@dataclass
class TrainOptions:
    lang: str
    model: str  # sentence | context
    preset: str = DEFAULT
    root: str = "."
    pretrained: Optional[str] = None  # PRESET=big: the sentence-level checkpoint to fine-tune
    gpus: Optional[int] = None  # None: every visible GPU (0 = CPU)
    fp16: Optional[bool] = None  # None: on GPUs with compute capability >= 7.0
    max_epoch: Optional[int] = None  # None: the preset's
    max_update: Optional[int] = None
    batch: str = "auto"  # auto | preset | tokens per update (pipeline/batch_plan.py)
    overrides: List[str] = field(default_factory=list)  # extra Hydra overrides, key=value
    overwrite: bool = False  # discard checkpoints trained from something else
    progress: bool = True
    layout: Optional[PairLayout] = None  # None: PairLayout(lang, root); the demo keeps its own folders

    def __post_init__(self) -> None:
        self.layout = self.layout or PairLayout(self.lang, self.root)
        if self.model not in MODELS:
            raise ContextualMTError(f"--model {self.model!r}: expected one of {', '.join(MODELS)}")
        preset = get_preset(self.preset)
        check_option("--gpus", self.gpus, minimum=0, integer=True, optional=True)
        check_option("--max-epoch", self.max_epoch, minimum=1, integer=True, optional=True)
        check_option("--max-update", self.max_update, minimum=1, integer=True, optional=True)
        self.batch = parse_batch(self.batch, option_name("--batch"))
        for item in self.overrides:
            if "=" not in item or item.startswith("="):
                raise ContextualMTError(f"override {item!r}: expected a Hydra override key=value")
        if preset.pretrained:
            if not self.pretrained:
                raise ContextualMTError(f"--preset {self.preset} fine-tunes a sentence-level checkpoint: give it "
                                        "with --pretrained PATH (make: PRETRAINED=PATH)")
            if not os.path.isfile(self.pretrained):
                raise ContextualMTError(f"{self.pretrained}: pretrained checkpoint not found")
        elif self.pretrained:
            raise ContextualMTError(f"--pretrained is for --preset big (fine-tuning); --preset {self.preset} "
                                    "trains from scratch")


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


def train_fingerprint(o: TrainOptions, plan: Optional[BatchPlan] = None) -> Dict:
    """What the checkpoints depend on. The stopping criterion is apart: training longer resumes.
    A batch plan other than the preset's own settings is part of it."""
    fp = {
        "data": data_fingerprint(o.layout),
        "preset": o.preset,
        "config": file_sha256(config_file(o.preset)),
        "model": o.model,
        "pretrained": file_sha256(o.pretrained) if o.pretrained else None,
        # the preset's own overrides first, as the command line has them
        "overrides": [*get_preset(o.preset).overrides, *o.overrides],
    }
    if plan is not None and plan.fingerprint() is not None:
        fp["batch"] = plan.fingerprint()
    return fp


def batch_plan(o: TrainOptions, gpus: int) -> BatchPlan:
    """Tokens per update and the learning-rate rule for this run (pipeline/batch_plan.py)."""
    config = preset_config(o.preset, (*KINDS[o.model], *o.overrides))
    task = dict(config.get("task") or {})

    def estimate():
        return measure_memory(config.get("model") or {}, os.path.join(o.layout.bin, f"dict.{o.lang}.txt"), task)

    split: Dict[str, TrainingSplit] = {}

    def training_split() -> TrainingSplit:  # read only when auto sizes a GPU batch or N is given
        if "train" not in split:
            split["train"] = TrainingSplit(task, o.layout.bin, SOURCE_LANG, o.lang)
        return split["train"]

    flag = option_name("--batch")
    plan = plan_batch(o.batch, reference_of(config), gpus, gpu_memory_gib(gpus), estimate, o.overrides,
                      flag=flag, batches_at=lambda max_tokens: training_split().batches_at(max_tokens))
    if o.batch not in ("auto", "preset"):
        longest = training_split().longest
        if plan.max_tokens < longest:  # fairseq would drop every longer example, or find no batch at all
            raise ContextualMTError(
                f"{flag} {o.batch}: {plan.max_tokens} tokens per forward{' on each GPU' if gpus > 1 else ''} are "
                f"fewer than the longest training example ({longest} tokens, its context included); give at "
                f"least {longest * plan.processes * plan.update_freq}")
    return plan


def train_command(o: TrainOptions, gpus: int, fp16: bool, plan: Optional[BatchPlan] = None) -> List[str]:
    bin_dir = Path(sys.executable).parent
    save = os.path.abspath(o.layout.checkpoints(o.model))
    preset = get_preset(o.preset)
    cmd = [str(bin_dir / "fairseq-hydra-train"), "--config-dir", config_dir(), "--config-name", preset.config,
           f"task.data={os.path.abspath(o.layout.bin)}", f"task.source_lang={SOURCE_LANG}",
           f"task.target_lang={o.lang}", f"common.user_dir={USER_DIR}", f"checkpoint.save_dir={save}",
           f"hydra.run.dir={os.path.join(save, 'hydra')}", "hydra.output_subdir=null", *KINDS[o.model],
           *preset.overrides]
    if gpus == 0:
        cmd.append("common.cpu=true")
    if fp16:
        cmd.append("common.fp16=true")
    max_epoch = o.max_epoch if o.max_epoch is not None else preset.max_epoch.get(o.model)
    if max_epoch is not None:
        cmd.append(f"optimization.max_epoch={max_epoch}")
    if o.max_update is not None:
        cmd.append(f"optimization.max_update={o.max_update}")
    if o.pretrained:
        cmd.append(f"checkpoint.finetune_from_model={os.path.abspath(o.pretrained)}")
    if plan is not None:
        cmd += plan.overrides()
    cmd += o.overrides
    if gpus > 1:  # one process per GPU; fairseq reads the rank from torchrun's environment
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={gpus}", *cmd]
    return cmd


def _state(o: TrainOptions, fp: Dict) -> Optional[Dict]:
    """The finished run's record when it matches; None when there is training to do. Checkpoints
    from other data or settings, or damaged ones, are an error; ``overwrite`` removes them and
    training starts from scratch."""
    save = o.layout.checkpoints(o.model)
    done = done_record(o.layout, o.model).current(fp, max_epoch=o.max_epoch, max_update=o.max_update)
    if done is not None:
        return done
    if not os.path.isdir(save):
        return None
    if o.overwrite:
        shutil.rmtree(save)
        return None
    problem = _resume_problem(o, fp)
    if problem:
        raise stale_error(save, f"{problem}; resuming would build on them",
                          "re-run with --overwrite (make: OVERWRITE=1) to train again from scratch")
    return None


def _resume_problem(o: TrainOptions, fp: Dict) -> Optional[str]:
    """Why the checkpoints in the save directory cannot be resumed from, if they cannot."""
    save = o.layout.checkpoints(o.model)
    record = started_record(o.layout, o.model).read()
    last = os.path.join(save, "checkpoint_last.pt")
    if record is None:
        return "the checkpoints there have no record of what they were trained from" if os.path.exists(last) else None
    if record.get("fingerprint") != fp:
        old = record.get("fingerprint", {})
        changed = ", ".join(k for k in sorted(set(fp) | set(old)) if fp.get(k) != old.get(k))
        return f"the checkpoints there were trained from other data or settings (changed: {changed})"
    done = done_record(o.layout, o.model).read()
    best = o.layout.checkpoint(o.model)
    if done is not None and (not os.path.exists(best) or done.get("checkpoint_sha256") != file_sha256(best)):
        return f"{os.path.basename(best)} is missing or was changed since training finished"
    if os.path.exists(last):
        import torch

        try:  # fairseq would fail on it after start-up, with a message that names no file
            torch.load(last, map_location="cpu", weights_only=False)
        except Exception as e:  # noqa: BLE001 (torch raises many types for a damaged file)
            return f"{last} is unreadable ({str(e).splitlines()[0][:120]})"
    return None


def train_model(options: TrainOptions) -> Dict:
    """Train (or resume, or skip) one model of the study; returns its done-record."""
    o = options
    require_data(o.layout)
    gpus = visible_gpus() if o.gpus is None else o.gpus
    if gpus > visible_gpus():
        raise ContextualMTError(f"--gpus {gpus}: only {visible_gpus()} GPU(s) visible")
    fp16 = (gpus > 0 and _fast_fp16()) if o.fp16 is None else o.fp16
    if fp16 and gpus == 0:
        raise ContextualMTError("--fp16 needs a GPU")
    plan = batch_plan(o, gpus)
    fp = train_fingerprint(o, plan)
    done = _state(o, fp)
    save = o.layout.checkpoints(o.model)
    if done is not None:
        print(f"{o.model} model: already trained ({o.layout.checkpoint(o.model)}); nothing to do", file=sys.stderr)
        return done
    if o.progress:
        print(f"[train {o.lang} {o.model}] batch: {plan.summary()}", file=sys.stderr)
    os.makedirs(save, exist_ok=True)
    for name in os.listdir(o.layout.bin):  # translate and cxmi find the dictionaries beside the checkpoint
        if name.startswith("dict."):
            shutil.copy(os.path.join(o.layout.bin, name), os.path.join(save, name))
    finished = done_record(o.layout, o.model)
    finished.forget()  # training longer: not done until this run ends
    started_record(o.layout, o.model).save(fp, [])
    cmd = train_command(o, gpus, fp16, plan)
    stats = _run(cmd, os.path.join(save, LOG), o, gpus)
    if not os.path.exists(o.layout.checkpoint(o.model)):
        raise ContextualMTError(f"{save}: training ended without checkpoint_best.pt; see {os.path.join(save, LOG)}")
    return finished.save(fp, [o.layout.checkpoint(o.model)], max_epoch=o.max_epoch, max_update=o.max_update,
                         preset=o.preset, model=o.model, gpus=gpus, fp16=fp16, batch=plan.as_record(),
                         tokens_per_update=plan.tokens_per_update, command=cmd,
                         checkpoint_sha256=file_sha256(o.layout.checkpoint(o.model)), **stats, **_health(o, stats))


def _health(o: TrainOptions, stats: Dict) -> Dict:
    """Warn when checkpoint_best.pt is no better than a unigram model of the target (the loader
    warns again on every later load); the figures go into the done-record."""
    from contextual_mt.inference.model_health import dictionary_counts, warn_if_untrained

    loss = stats["best_valid_loss"] if stats.get("best_valid_loss") is not None else stats.get("valid_loss")
    counts = dictionary_counts(os.path.join(o.layout.checkpoints(o.model), f"dict.{o.lang}.txt"))
    check = warn_if_untrained(o.layout.checkpoint(o.model), loss, counts, stats.get("label_smoothing") or 0.0)
    return {"unigram_loss": check.unigram_loss, "looks_untrained": check.looks_untrained}


def cpu_thread_env(preset: str, gpus: int) -> Dict[str, str]:
    """A preset's fixed CPU thread count for training on CPU (the weights depend on it), and no
    dynamic thread counts, which OpenMP and MKL may lower under load."""
    threads = get_preset(preset).cpu_threads
    if gpus or not threads:
        return {}
    return {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), "OMP_DYNAMIC": "FALSE",
            "MKL_DYNAMIC": "FALSE"}


def _run(cmd: List[str], log_path: str, o: TrainOptions, gpus: int) -> Dict:
    """fairseq-hydra-train with its log in ``log_path``; on the terminal a bar per epoch and one
    line per validation (``train_progress``)."""
    start = time.time()
    progress = TrainProgress(f"[train {o.lang} {o.model}]", max_epoch=_max_epoch(cmd), show=o.progress)
    env = dict(os.environ, HYDRA_FULL_ERROR="1", **cpu_thread_env(o.preset, gpus))
    try:
        with open(log_path, "a", encoding="utf-8") as log:
            log.write("$ " + " ".join(cmd) + "\n")
            log.flush()
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
            for line in proc.stdout:
                log.write(line)
                progress.feed(line)
            proc.wait()
    finally:
        progress.close()
    if proc.returncode != 0:
        tail = _last_error(log_path)
        raise ContextualMTError(f"training the {o.model} model failed{': ' + tail if tail else ''}; see {log_path}")
    stats = progress.stats.as_dict()
    stats["seconds"] = round(time.time() - start, 1)
    return stats


def _max_epoch(cmd: List[str]) -> Optional[int]:
    """The command's max_epoch, until fairseq logs the one it uses (the preset's when not given)."""
    found = [int(a.split("=", 1)[1]) for a in cmd if a.startswith("optimization.max_epoch=")]
    return found[-1] if found else None


def _last_error(log_path: str) -> str:
    with open(log_path, encoding="utf-8", errors="replace") as f:
        lines = [line.strip() for line in f if line.strip()]
    for line in reversed(lines[-40:]):
        if line.startswith("error:") or "Error" in line.split(":")[0]:
            return line[:300]
    return ""
