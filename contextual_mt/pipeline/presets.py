"""The training presets (``make train PRESET=...``, ``contextual-mt pipeline train --preset``, and
the offline demo), declared once: train.py, the demo, the command line and the study tutorial's table
(docs/tutorials/study.md) read them from here.

A preset names a Hydra config shipped inside the package (``contextual_mt/hydra_configs/``, so a
non-editable install trains too), plus what it adds on top: Hydra overrides, the epochs of each
model kind when the config's one value does not fit both, and the sentencepiece vocabulary its
data is made with (the demo's; the study's data stage takes it with ``--preset``, make's ``PRESET``,
when ``--vocab-size`` is not given), and the output-length bound of its translations.

``python -m contextual_mt.pipeline.presets`` prints the study tutorial's table.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from typing import Dict, List, Optional, Tuple

from commandkit.errors import shown
from contextual_mt.errors import Code, InputError


@dataclass(frozen=True)
class Preset:
    name: str
    config: str  # the Hydra config: contextual_mt/hydra_configs/CONFIG.yaml
    about: str  # one line, for --help and the study tutorial
    overrides: Tuple[str, ...] = ()  # Hydra overrides on top of the config
    max_epoch: Dict[str, int] = field(default_factory=dict)  # per model kind; absent: the config's
    vocab_size: Optional[int] = None  # the sentencepiece vocabulary of its data (the demo's)
    pretrained: bool = False  # fine-tunes a sentence-level checkpoint (--pretrained)
    # CPU threads of its training on CPU (GPUS=0): the weights depend on the thread count (the
    # order of floating-point sums), so a preset whose results are published fixes it (None: the
    # cores this process may use, train.cpu_thread_env)
    cpu_threads: Optional[int] = None
    # the output-length bound of `make translate` with its models, (a, b): at most a * source
    # pieces + b (None: the decoder's default, 200 pieces): a barely trained model's outputs run
    # to the bound, and predicted-context decoding pays for each piece
    max_len: Optional[Tuple[float, int]] = None


PRESETS: Dict[str, Preset] = {
    p.name: p
    for p in (
        # a real pair of about 10k sentences through `make all` within 30 minutes on 2 cores
        # (bench/RESULTS.md, "PRESET=tiny on a pair of 10k sentences"): a 4000-piece vocabulary
        # (the output layer is most of a 128-dim model's work), 5 epochs of each model, translations
        # bounded at 1.5 x the source + 10 pieces; the CPU threads are the cores (train.cpu_thread_env)
        Preset(
            "tiny",
            "tiny",
            "CPU tests and smoke runs: 2 layers, 128/256, 4 heads (not for results)",
            max_epoch={"sentence": 5, "context": 5},
            vocab_size=4000,
            max_len=(1.5, 10),
        ),
        Preset("small", "small_scratch", "transformer-small (512/1024, 6 layers, 8 heads) from scratch"),
        Preset(
            "big",
            "big_finetune",
            "transformer-big (1024/4096, 6 layers, 16 heads) fine-tuned from a "
            "sentence-level checkpoint (`PRETRAINED`)",
            pretrained=True,
        ),
        # the demo's models: tiny, logged every 100 updates, a warm-up of 100 updates (the planted
        # phenomena are learnt an epoch sooner than with 200), sentence 8 / context 7 epochs (trained
        # side by side, the sentence model ends first), on a 500-piece vocabulary, 1 thread each
        # (the same weights on every machine; bench/RESULTS.md, "The demo's time")
        Preset(
            "demo",
            "tiny",
            "the offline demo's two models (`make demo`)",
            overrides=("common.log_interval=100", "lr_scheduler.warmup_updates=100"),
            max_epoch={"sentence": 8, "context": 7},
            vocab_size=500,
            cpu_threads=1,
        ),
    )
}
DEFAULT = "small"


def get_preset(name: str) -> Preset:
    if name not in PRESETS:
        raise InputError(f"{shown('--preset')} {name!r}: expected one of {', '.join(PRESETS)}", code=Code.OPTION_VALUE)
    return PRESETS[name]


def config_dir() -> str:
    """The folder of the Hydra configs, inside the installed package (editable or not)."""
    return str(resources.files("contextual_mt") / "hydra_configs")


def config_file(name: str) -> str:
    """The Hydra config file of preset ``name``."""
    return os.path.join(config_dir(), f"{get_preset(name).config}.yaml")


def config_epochs(name: str) -> Optional[int]:
    """``optimization.max_epoch`` of the preset's Hydra config."""
    import yaml

    with open(config_file(name), encoding="utf-8") as f:
        return (yaml.safe_load(f).get("optimization") or {}).get("max_epoch")


# the config sections that become fairseq-train options (task and model belong to the caller)
_TRAIN_SECTIONS = ("common", "optimization", "optimizer", "lr_scheduler", "criterion", "dataset", "checkpoint")


def preset_config(name: str, overrides: Tuple[str, ...] = ()) -> Dict:
    """The preset's Hydra config with its own overrides, then ``overrides`` (``section.key=value``;
    deeper keys and ``+``/``~`` forms are left to Hydra), applied."""
    import yaml

    with open(config_file(name), encoding="utf-8") as f:
        config = yaml.safe_load(f)
    for override in (*get_preset(name).overrides, *overrides):
        key, value = override.split("=", 1)
        if "." not in key or key.startswith(("+", "~")) or key.count(".") > 1:
            continue
        section, field_name = key.split(".", 1)
        config.setdefault(section, {})[field_name] = yaml.safe_load(value)
    return config


def fairseq_train_options(name: str, skip: Tuple[str, ...] = ()) -> List[str]:
    """The preset's Hydra config, with its overrides, as ``fairseq-train`` options: for a model
    that the train stage does not train (the CADec demo) to be trained with the same settings.
    ``skip``: keys the caller sets itself (e.g. ``max_epoch``); the model's dropout is included,
    values left to the caller (``???``) are not."""
    config = preset_config(name)
    items = [(k, v) for section in _TRAIN_SECTIONS for k, v in (config.get(section) or {}).items()]
    items += [(k, v) for k, v in (config.get("model") or {}).items() if k == "dropout"]
    options: List[str] = []
    for key, value in items:
        if key == "_name" or key in skip or value == "???" or value is False or value is None:
            continue  # a section's _name is its component, named below
        flag = "--" + key.replace("_", "-")
        if value is True:
            options.append(flag)
        else:
            options += [flag, " ".join(str(v) for v in value) if isinstance(value, list) else str(value)]
    for section in ("optimizer", "lr_scheduler", "criterion"):
        component = (config.get(section) or {}).get("_name")
        if component:
            options += ["--" + section.replace("_", "-"), component]
    return options


def markdown_table() -> str:
    """The study tutorial's table of the presets."""
    rows = ["| preset | Hydra config | epochs | extra overrides | what it is |", "|---|---|---|---|---|"]
    for p in PRESETS.values():
        epochs = (
            ", ".join(f"{model} {n}" for model, n in p.max_epoch.items()) if p.max_epoch else str(config_epochs(p.name))
        )
        extra = ", ".join(f"`{o}`" for o in p.overrides) or "none"
        about = p.about + (f"; its data: {p.vocab_size} sentencepiece pieces" if p.vocab_size else "")
        about += f"; translations at most {p.max_len[0]:g} x the source + {p.max_len[1]} pieces" if p.max_len else ""
        rows.append(f"| `{p.name}` | `{p.config}.yaml` | {epochs} | {extra} | {about} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
