"""Tokens per update for ``make train`` (``BATCH=auto|preset|N``), and the learning-rate rule.

The presets carry the papers' settings: ``max_tokens`` 4096 on one GPU, update_freq 1. On a
GPU with tens of GiB that leaves the device mostly idle (fairseq's per-update overhead of
~70-80 ms dominates), so by default (``auto``) a GPU run packs more tokens into each update:

- **Per-GPU batch**: the preset's ``max_tokens`` times a power of two (1/8 .. 8), the largest
  whose estimated memory fits ``MEMORY_FRACTION`` of the smallest visible GPU, with the total
  tokens per update (all GPUs) at most ``MAX_SCALE`` times the preset's. The estimate is measured,
  not guessed: the model of the preset is built on CPU with the data's dictionary and one
  forward/backward of the loss is run; the tensors autograd saves give the activation bytes per
  token (float32; a float16 run saves no more, except softmax copies, which the margin covers),
  plus 20 bytes per parameter for weights, gradients, Adam's moments and fp16 copies.
- **Enough updates**: a larger batch means fewer updates per epoch, and with too few a run
  ends (or its patience runs out) before the model has learned: at the demo's scale (65 updates
  per epoch at the preset's batch) 8x the batch trails the preset's settings far behind after
  the same tokens (bench/RESULTS.md, "Batch size"). So ``auto`` only grows the batch while an
  epoch of the training split keeps at least ``MIN_UPDATES_PER_EPOCH`` updates, counted by
  batching the split as fairseq will.
- **A smaller GPU**: a fraction of the preset's batch per forward, with ``update_freq``
  accumulating back to the preset's tokens per update.
- **Learning rate** (``k`` = tokens per update / the preset's): square-root scaling, as for
  Adam (Malladi et al. 2022, "On the SDEs and scaling rules for adaptive gradient algorithms"),
  at most ``LR_CAP`` times the preset's (Ott et al. 2018 train at 16x the tokens per update
  with 2x the learning rate). The warm-up covers the same number of tokens: ``warmup / k``
  updates. With the inverse-sqrt schedule, the learning rate after the same number of tokens is
  then ``min(sqrt(k), LR_CAP)`` times the preset's throughout.
- **CPU**: ``auto`` keeps the preset's batch (nothing to fill).
- **Data workers** (GPU runs, any mode): ``dataset.num_workers`` = the CPU cores per GPU less
  one, at most ``MAX_DATA_WORKERS``. One worker builds ~50k current-sentence target tokens/s of
  the context model's batches (bench/studies/train_batch_scaling.py --data), less than a GPU trains at
  8x the preset's batch. Examples are a function of (seed, epoch, index) only, so the number of
  workers does not change what is trained on (not part of the fingerprint).

``preset`` keeps the config's values exactly (the papers' settings; with several GPUs each
takes ``max_tokens``, as fairseq does). ``N`` asks for N tokens per update and applies the
same rule. Hydra overrides of the batch or learning rate (``--override dataset.max_tokens=...``)
are the user's own choice: they are refused together with an explicit ``--batch``, and
``auto`` then keeps the preset's batch.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from typing import Callable, Dict, List, Optional, Sequence

from contextual_mt.errors import Code, InputError

MEMORY_FRACTION = 0.5  # of the smallest GPU: the rest for the allocator, workspaces, longer rows
MAX_SCALE = 8  # auto: at most 8x the preset's tokens per update (validated at the demo's scale)
LR_CAP = 2.0
MAX_DATA_WORKERS = 6
MAX_TOKENS_PER_UPDATE = 10**9  # beyond, fairseq overflows a C long; no GPU holds it anyway
MIN_UPDATES_PER_EPOCH = 250  # auto grows the batch only while an epoch keeps this many updates
SCALES = (8, 4, 2, 1, 1 / 2, 1 / 4, 1 / 8)  # per-GPU max_tokens as multiples of the preset's
STATE_BYTES_PER_PARAM = 20  # fp32 weights 4 + grads 4 + Adam 8, fp16 weights and grads 2 + 2
PROBE_ROW = 256  # tokens per row in the memory probe (attention grows with the row length)
PROBE_TOKENS = 1024
# the overrides that set the batch or the schedule themselves
BATCH_KEYS = (
    "dataset.max_tokens",
    "dataset.batch_size",
    "optimization.update_freq",
    "optimization.lr",
    "lr_scheduler.warmup_updates",
)


@dataclass(frozen=True)
class Reference:
    """The preset's own batch and schedule (from its Hydra config and overrides)."""

    max_tokens: int
    update_freq: int
    lr: float
    warmup_updates: Optional[int]

    @property
    def tokens_per_update(self) -> int:
        return self.max_tokens * self.update_freq


@dataclass(frozen=True)
class MemoryEstimate:
    """What one training process needs on a GPU: ``state_gib + tokens * kib_per_token``."""

    parameters: int
    kib_per_token: float
    state_gib: float

    def gib(self, tokens: int) -> float:
        return self.state_gib + tokens * self.kib_per_token / 2**20


@dataclass(frozen=True)
class BatchPlan:
    mode: str  # auto | preset | tokens
    max_tokens: int  # per process and forward
    update_freq: int
    processes: int  # GPUs, or 1 on CPU
    lr: float
    warmup_updates: Optional[int]
    reference: Reference
    why: str  # one line: how the batch was chosen
    gpu_memory_gib: Optional[float] = None
    memory: Optional[MemoryEstimate] = None
    num_workers: Optional[int] = None  # data workers per process; None: the config's
    sentence_cap: bool = False  # dataset.batch_size overridden: tokens per update is only an upper bound

    @property
    def tokens_per_update(self) -> int:
        return self.max_tokens * self.update_freq * self.processes

    @property
    def scale(self) -> float:
        return self.tokens_per_update / self.reference.tokens_per_update

    @property
    def changes_preset(self) -> bool:
        r = self.reference
        return (self.max_tokens, self.update_freq, self.lr, self.warmup_updates) != (
            r.max_tokens,
            r.update_freq,
            r.lr,
            r.warmup_updates,
        )

    def overrides(self) -> List[str]:
        """The Hydra overrides that set this plan (none for the preset's own settings)."""
        workers = [] if self.num_workers is None else [f"dataset.num_workers={self.num_workers}"]
        if not self.changes_preset:
            return workers
        out = [
            *workers,
            f"dataset.max_tokens={self.max_tokens}",
            f"optimization.update_freq=[{self.update_freq}]",
            f"optimization.lr=[{self.lr:.6g}]",
        ]
        if self.warmup_updates is not None:
            out.append(f"lr_scheduler.warmup_updates={self.warmup_updates}")
        return out

    def fingerprint(self) -> Optional[Dict]:
        """What the checkpoints depend on: None when the preset's settings are used (so records
        written before batch plans existed still match)."""
        if not self.changes_preset:
            return None
        return {
            "max_tokens": self.max_tokens,
            "update_freq": self.update_freq,
            "processes": self.processes,
            "lr": self.lr,
            "warmup_updates": self.warmup_updates,
        }

    def as_record(self) -> Dict:
        record = {
            "mode": self.mode,
            "tokens_per_update": None if self.sentence_cap else self.tokens_per_update,
            "max_tokens": self.max_tokens,
            "update_freq": self.update_freq,
            "processes": self.processes,
            "lr": self.lr,
            "warmup_updates": self.warmup_updates,
            "scale": round(self.scale, 4),
            "num_workers": self.num_workers,
            "reference": asdict(self.reference),
            "why": self.why,
        }
        if self.gpu_memory_gib is not None:
            record["gpu_memory_gib"] = round(self.gpu_memory_gib, 2)
        if self.memory is not None:
            record["estimated_gib"] = round(self.memory.gib(self.max_tokens), 2)
            record["memory_estimate"] = asdict(self.memory)
        return record

    def summary(self) -> str:
        r = self.reference
        where = f"{self.processes} GPU{'s' if self.processes > 1 else ''}" if self.gpu_memory_gib is not None else "CPU"
        warmup = f", warm-up {self.warmup_updates} updates" if self.warmup_updates is not None else ""
        return (
            f"{self.tokens_per_update} tokens per update (max_tokens {self.max_tokens} x update_freq "
            f"{self.update_freq} x {where}), lr {self.lr:.3g}{warmup}; the preset's: {r.tokens_per_update} "
            f"tokens, lr {r.lr:.3g}; {self.why}"
        )


def parse_batch(value: str, flag: str = "--batch") -> str:
    """``auto``, ``preset`` or a positive number of tokens per update (as text)."""
    text = str(value).strip()
    if text in ("auto", "preset"):
        return text
    try:
        number = int(text)
    except ValueError:
        raise InputError(
            f"{flag} must be auto, preset or a number of tokens per update (got {value!r})", code=Code.OPTION_VALUE
        ) from None
    if number < 1:
        raise InputError(f"{flag} must be >= 1 tokens per update (got {number})", code=Code.OPTION_VALUE)
    if number > MAX_TOKENS_PER_UPDATE:
        raise InputError(
            f"{flag} must be <= {MAX_TOKENS_PER_UPDATE} tokens per update (got {number})", code=Code.OPTION_VALUE
        )
    return str(number)


def scaled_schedule(ref: Reference, tokens_per_update: int) -> tuple:
    """(lr, warmup_updates) for ``tokens_per_update``: the rule of the module docstring."""
    k = tokens_per_update / ref.tokens_per_update
    lr = ref.lr * min(math.sqrt(k), LR_CAP)
    warmup = None if ref.warmup_updates is None else max(1, round(ref.warmup_updates / k))
    return lr, warmup


def plan_batch(
    batch: str,
    ref: Reference,
    gpus: int,
    gpu_memory_gib: Optional[float] = None,
    estimate: Optional[Callable[[], MemoryEstimate]] = None,
    user_overrides: Sequence[str] = (),
    flag: str = "--batch",
    cpus: Optional[int] = None,
    batches_at: Optional[Callable[[int], int]] = None,
) -> BatchPlan:
    """The batch of a run on ``gpus`` GPUs (0: CPU) with ``gpu_memory_gib`` on the smallest.
    ``estimate`` measures the model's memory; it is only called when a GPU batch is sized.
    ``batches_at(max_tokens)``: batches in an epoch of the training split (auto's guard).
    ``cpus``: the cores for data workers (default: this machine's)."""
    plan = _plan(batch, ref, gpus, gpu_memory_gib, estimate, user_overrides, flag, batches_at)
    if gpus == 0 or any(o.split("=", 1)[0].lstrip("+") == "dataset.num_workers" for o in user_overrides):
        return plan
    cores = cpus if cpus is not None else (os.cpu_count() or 1)
    return BatchPlan(**{**plan.__dict__, "num_workers": max(1, min(MAX_DATA_WORKERS, cores // gpus - 1))})


def _plan(
    batch: str,
    ref: Reference,
    gpus: int,
    gpu_memory_gib: Optional[float],
    estimate: Optional[Callable[[], MemoryEstimate]],
    user_overrides: Sequence[str],
    flag: str,
    batches_at: Optional[Callable[[int], int]],
) -> BatchPlan:
    batch = parse_batch(batch, flag)
    processes = max(gpus, 1)
    preset_plan = BatchPlan(
        batch,
        ref.max_tokens,
        ref.update_freq,
        processes,
        ref.lr,
        ref.warmup_updates,
        ref,
        "",
        gpu_memory_gib if gpus else None,
    )
    overridden = [o.split("=", 1)[0] for o in user_overrides if o.split("=", 1)[0].lstrip("+") in BATCH_KEYS]
    if overridden and batch == "preset":
        raise InputError(
            f"{flag} preset keeps the preset's own values, and the override of "
            f"{', '.join(overridden)} changes them: not both (leave {flag} at auto, and the "
            "overrides decide)",
            code=Code.OPTIONS_CONFLICT,
        )
    if overridden and batch != "auto":
        raise InputError(
            f"{flag} {batch} and the override of {', '.join(overridden)}: not both (the batch plan sets them)",
            code=Code.OPTIONS_CONFLICT,
        )
    if batch == "preset":
        return _why(preset_plan, "the preset's settings (" + flag + " preset)")
    if overridden:
        capped = any(o.lstrip("+") == "dataset.batch_size" for o in overridden)
        why = f"the preset's batch: the overrides set {', '.join(overridden)}" + (
            " (dataset.batch_size caps the sentences per batch: tokens per update not known beforehand, at most "
            f"{preset_plan.tokens_per_update})"
            if capped
            else ""
        )
        return BatchPlan(**{**preset_plan.__dict__, "why": why, "sentence_cap": capped})
    if batch == "auto" and gpus == 0:
        return _why(preset_plan, "the preset's batch (on CPU)")
    memory = estimate() if (gpus and estimate is not None) else None
    budget = None if gpu_memory_gib is None or memory is None else MEMORY_FRACTION * gpu_memory_gib

    def fits(tokens: int) -> bool:
        return budget is None or memory is None or memory.gib(tokens) <= budget

    if batch == "auto":
        target = ref.tokens_per_update * MAX_SCALE
        for scale in SCALES:
            per = int(ref.max_tokens * scale)
            if not fits(per) or (scale > 1 and per * ref.update_freq * processes > target):
                continue  # (many GPUs at the preset's batch each may exceed the target: accepted)
            if (
                scale > 1
                and batches_at is not None
                and batches_at(per) / (processes * ref.update_freq) < MIN_UPDATES_PER_EPOCH
            ):
                continue  # too few updates per epoch
            # a fraction of the preset's batch per forward: accumulate back to the preset's per update
            freq = ref.update_freq * max(1, math.ceil(ref.tokens_per_update / (per * ref.update_freq * processes)))
            why = (
                f"auto: the largest batch of at most {MAX_SCALE}x the preset's whose estimated "
                f"{memory.gib(per):.1f} GiB fits {MEMORY_FRACTION:.0%} of {gpu_memory_gib:.0f} GiB"
                if budget is not None and memory is not None
                else f"auto: {processes} GPU(s), at most {MAX_SCALE}x the preset's"
            )
            if batches_at is not None:
                why += (
                    f" and keeps >= {MIN_UPDATES_PER_EPOCH} updates per epoch ({batches_at(per) // (processes * freq)})"
                )
            return _scaled(batch, per, freq, processes, ref, why, gpu_memory_gib, memory)
        raise _too_small(ref, memory, gpu_memory_gib)
    tokens = int(batch)
    for freq in (1, 2, 4, 8, 16, 32, 64):
        per = tokens // (processes * freq)
        if per < 1:
            break
        if fits(per):
            why = f"{flag} {tokens}" + (
                f": {per} tokens per forward fit {MEMORY_FRACTION:.0%} of {gpu_memory_gib:.0f} GiB"
                if budget is not None
                else ""
            )
            return _scaled("tokens", per, freq, processes, ref, why, gpu_memory_gib if gpus else None, memory)
    raise _too_small(ref, memory, gpu_memory_gib, tokens)


def _why(plan: BatchPlan, why: str) -> BatchPlan:
    return BatchPlan(**{**plan.__dict__, "why": why})


def _scaled(
    mode: str,
    per: int,
    freq: int,
    processes: int,
    ref: Reference,
    why: str,
    gpu_memory_gib: Optional[float],
    memory: Optional[MemoryEstimate],
) -> BatchPlan:
    lr, warmup = scaled_schedule(ref, per * freq * processes)
    return BatchPlan(mode, per, freq, processes, lr, warmup, ref, why, gpu_memory_gib, memory)


def _too_small(
    ref: Reference, memory: Optional[MemoryEstimate], gib: Optional[float], tokens: Optional[int] = None
) -> InputError:
    need = f"{memory.gib(max(1, ref.max_tokens // 8)):.1f} GiB" if memory else "?"
    return InputError(
        f"the GPU's {gib or 0:.1f} GiB are too small for this model even at "
        f"{ref.max_tokens // 8} tokens per forward (estimated {need}); use a smaller "
        "preset or model",
        code=Code.OUT_OF_MEMORY,
    )


# ---------------------------------------------------------------- reading the preset and measuring
def reference_of(config: Dict) -> Reference:
    """The preset's batch and schedule from its Hydra config (with the preset's overrides applied)."""
    dataset, optimization = config.get("dataset") or {}, config.get("optimization") or {}
    scheduler = config.get("lr_scheduler") or {}
    lr = optimization.get("lr", 0.25)
    freq = optimization.get("update_freq", 1)
    if not dataset.get("max_tokens"):
        raise InputError("the preset's config has no dataset.max_tokens: the batch plan needs it", code=Code.FORMAT)
    return Reference(
        max_tokens=int(dataset["max_tokens"]),
        update_freq=int(freq[0] if isinstance(freq, list) else freq),
        lr=float(lr[0] if isinstance(lr, list) else lr),
        warmup_updates=int(scheduler["warmup_updates"]) if "warmup_updates" in scheduler else None,
    )


def measure_memory(model_config: Dict, dictionary_path: str, task_config: Optional[Dict] = None) -> MemoryEstimate:
    """Build the model of ``model_config`` (the Hydra ``model`` section) with the data's target
    dictionary on CPU and measure the activations saved by one forward/backward of the loss
    (``backends/fairseq/training_probe``)."""
    from contextual_mt.backends.fairseq.training_probe import saved_activations

    rows = PROBE_TOKENS // PROBE_ROW
    parameters, saved_bytes = saved_activations(model_config, dictionary_path, task_config, rows, PROBE_ROW)
    return MemoryEstimate(
        parameters=parameters,
        kib_per_token=round(saved_bytes / PROBE_TOKENS / 1024, 2),
        state_gib=round(parameters * STATE_BYTES_PER_PARAM / 2**30, 4),
    )


def gpu_memory_gib(gpus: int) -> Optional[float]:
    """Total memory of the smallest of the first ``gpus`` visible GPUs (None on CPU)."""
    if gpus < 1:
        return None
    import torch

    return min(torch.cuda.get_device_properties(i).total_memory for i in range(gpus)) / 2**30
