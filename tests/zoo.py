"""The model zoo: every tiny fairseq model that tests share, declared once by name and trained at
most once per run (on first use), on the tiny corpus of tests/conftest.py (``data_bin``).

Tests get a model through the session fixture ``zoo`` (``zoo.checkpoint("sentence")``); they read
its files and never write into its folder. A test whose subject is training itself (resuming,
fine-tuning, data-parallel, Hydra configs, refusals of fairseq-train) still trains its own."""

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Tuple

from tests.helpers import BIN, run, train
from tests.run_once import run_lock

PAIR = ("-s", "en", "-t", "fr")
# a stock fairseq sentence-level model (--task translation --arch transformer), 64-dimensional
STOCK_ARCH = (
    "--arch",
    "transformer",
    "--encoder-layers",
    "1",
    "--decoder-layers",
    "1",
    "--encoder-embed-dim",
    "64",
    "--decoder-embed-dim",
    "64",
    "--encoder-ffn-embed-dim",
    "128",
    "--decoder-ffn-embed-dim",
    "128",
    "--encoder-attention-heads",
    "4",
    "--decoder-attention-heads",
    "4",
)


@dataclass(frozen=True)
class TinyModel:
    """``document_translation`` training options after tests.helpers' tiny architecture and
    optimizer (tests.helpers.train), and the number of epochs; ``stock``: the whole stock
    ``fairseq-train`` command line instead."""

    options: Tuple[str, ...] = ()
    epochs: int = 1
    stock: Tuple[str, ...] = ()


MODELS: Dict[str, TinyModel] = {
    # 2 source and 2 target context sentences, dynamic context size (so it also works without
    # context): CXMI, contrastive scoring
    "dynamic": TinyModel(
        (*PAIR, "--source-context-size", "2", "--target-context-size", "2", "--sample-context-size", "--seed", "2"),
        epochs=3,
    ),
    # target context 2, dynamic context size: the bad-input matrix (its epoch-1 checkpoint too)
    "target_context_dynamic": TinyModel(
        (*PAIR, "--target-context-size", "2", "--sample-context-size", "--seed", "2"), epochs=2
    ),
    "target_context_1": TinyModel((*PAIR, "--target-context-size", "1")),
    "target_context_2": TinyModel((*PAIR, "--target-context-size", "2")),
    # context 0/0 (document_translation task, sentence-level)
    "sentence": TinyModel((*PAIR, "--no-epoch-checkpoints")),
    # context 0/0, two epochs: the CADec base
    "sentence_2_epochs": TinyModel((*PAIR, "--no-epoch-checkpoints"), epochs=2),
    "stock_transformer": TinyModel(
        stock=(
            "--task",
            "translation",
            *STOCK_ARCH,
            "--share-all-embeddings",
            "--optimizer",
            "adam",
            "--lr",
            "1e-3",
            "--max-tokens",
            "1000",
            "--max-epoch",
            "1",
            "--cpu",
            "--no-progress-bar",
        )
    ),
}


class Zoo:
    """Trains the MODELS on ``data_bin`` under ``root`` on first use; safe for threads (a fixture
    may train several side by side) and for the processes of pytest-xdist (a file lock each)."""

    def __init__(self, data_bin: Path, root: Path):
        self.data_bin, self.root = data_bin, root

    def folder(self, name: str) -> Path:
        """The save directory of model ``name`` (trained first if needed)."""
        model = MODELS[name]
        save = self.root / name
        with run_lock(self.root / f"{name}.lock"):
            if not (self.root / f"{name}.trained").exists():
                shutil.rmtree(save, ignore_errors=True)  # a cut-off training starts again from scratch
                if model.stock:
                    run([str(BIN / "fairseq-train"), str(self.data_bin), *model.stock, "--save-dir", str(save)])
                else:
                    train(self.data_bin, save, *model.options, epochs=model.epochs)
                (self.root / f"{name}.trained").touch()
        return save

    def checkpoint(self, name: str) -> Path:
        return self.folder(name) / "checkpoint_last.pt"

    def train_side_by_side(self, names: Iterable[str]) -> None:
        """Train these models in parallel (each fairseq-train is a process of its own)."""
        from concurrent.futures import ThreadPoolExecutor

        names = list(names)
        with ThreadPoolExecutor(len(names)) as pool:
            for future in [pool.submit(self.folder, name) for name in names]:
                future.result()
