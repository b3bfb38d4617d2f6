"""``contextual-mt pipeline train`` (pipeline/train.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import List, Optional

from commandkit.options import from_namespace, option
from contextual_mt.cli.common import command, overwrite_option, quiet_option
from contextual_mt.cli.pipeline.options import ROOT_HELP
from contextual_mt.pipeline.presets import DEFAULT, PRESETS
from contextual_mt.pipeline.train import MODELS, TrainOptions, train_model


@dataclass
class TrainArgs:
    lang: str = option(required=True, help="target language (source: English)")
    model: Optional[str] = option(choices=MODELS, help="default: both")
    preset: str = option(
        choices=sorted(PRESETS),
        default=DEFAULT,
        help="; ".join(f"{p.name}: {p.about}" for p in PRESETS.values()).replace("%", "%%"),
    )
    root: str = option(default=TrainOptions.root, help=ROOT_HELP)
    pretrained: Optional[str] = option(help="sentence-level checkpoint to fine-tune (--preset big)")
    gpus: Optional[int] = option(type=int, help="default: every visible GPU; 0 = CPU")
    fp16: Optional[bool] = option(
        action=argparse.BooleanOptionalAction, help="default: on GPUs with compute capability >= 7.0"
    )
    max_epoch: Optional[int] = option(type=int, help="default: the preset's (per model kind for the demo preset)")
    max_update: Optional[int] = option(type=int)
    batch: str = option(
        default=TrainOptions.batch,
        metavar="auto|preset|N",
        help="tokens per update: auto (default; on a GPU as many as its memory holds, up to 8x the "
        "preset's, with the learning rate and warm-up scaled; on CPU the preset's), preset (the "
        "config's exact settings) or N tokens per update (scaled the same way); docs/explanations/batching.md",
    )
    override: List[str] = option(
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Hydra override (repeatable), e.g. optimization.lr=[1e-3]",
    )
    overwrite: bool = overwrite_option("discard checkpoints trained from other data or settings")
    quiet: bool = quiet_option()


def train(args: argparse.Namespace) -> int:
    models = [args.model] if args.model else list(MODELS)
    options = [
        from_namespace(TrainOptions, args, model=m, overrides=args.override, progress=not args.quiet) for m in models
    ]  # every option checked before anything trains
    for o in options:
        record = train_model(o)
        print(f"{o.model} model: {o.layout.checkpoint(o.model)} ({figures(record)})")
    return 0


def figures(record: dict) -> str:
    """What the record says of the checkpoints (read from them): ``10 epochs, 230 updates, valid
    loss 4.213 (best 4.180)``, or ``stopped in epoch 1 after 0 full epochs, 190 updates, ...`` when an
    update limit ended training part-way through an epoch (after the validation of that epoch,
    which fairseq runs when it stops); a figure an earlier version's record lacks is left out."""
    parts = [
        f"{record[k]} {unit}"
        for k, unit in (("epochs", "epochs"), ("num_updates", "updates"))
        if record.get(k) is not None
    ]
    within = record.get("stopped_in_epoch")
    if within is not None and record.get("epochs") is not None:
        parts[0] = f"stopped in epoch {within} after {record['epochs']} full epochs"
    loss, best = record.get("valid_loss"), record.get("best_valid_loss")
    if loss is not None:
        parts.append(f"valid loss {loss:.3f}" + (f" (best {best:.3f})" if best is not None and best != loss else ""))
    return ", ".join(parts) or "trained by an earlier version: no figures recorded"


def add(sub) -> argparse.ArgumentParser:
    return command(
        sub,
        "train",
        TrainArgs,
        train,
        "train the study's sentence-level and context models of a language pair",
        transaction=False,
    )  # resumable: manages its own files
