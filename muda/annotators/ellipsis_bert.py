"""The paper's ellipsis classifier: BERT trained on Penn Treebank sentences, where a sentence
whose tree contains the ellipsis trace ``*?*`` is a positive; positives' loss is up-weighted x100.
``muda train-ellipsis`` trains it from PTB-format files the user has; ``--ellipsis-model`` loads it."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import ClassVar, List, Optional, Sequence, Tuple

from commandkit.errors import Code, InputError, check_number
from commandkit.options import option
from muda.formats.ptb import read_ptb_trees


@dataclass(frozen=True)
class TrainEllipsisOptions:
    """``muda train-ellipsis``: the trees, the base model, where the model goes, and the training
    settings, checked when built: before the trees are read or the base model loaded."""

    ptb: List[str] = option(positional=True, nargs="+", default=[], help="PTB-format tree files (.mrg)")
    base_model: str = option(default="bert-base-cased", help="a local path or cached model name")
    output: str = option(required=True, help="directory for the trained model (--ellipsis-model)")
    epochs: int = option(default=1)
    batch_size: int = option(default=16)
    lr: float = option(default=2e-5)
    positive_weight: float = option(default=100.0, help="loss weight of ellipsis sentences")
    cpu: bool = option(action="store_true", default=False)
    max_length: int = 128
    seed: int = 1

    OUTPUT_DIR_ARGS: ClassVar[Tuple[str, ...]] = ("output",)

    def __post_init__(self) -> None:
        check_number("--epochs", self.epochs, minimum=1, integer=True)
        check_number("--batch-size", self.batch_size, minimum=1, integer=True)
        check_number("--lr", self.lr)
        if self.lr <= 0:
            raise InputError(f"--lr must be > 0 (got {self.lr!r})", code=Code.OPTION_VALUE)
        check_number("--positive-weight", self.positive_weight)
        if self.positive_weight <= 0:
            raise InputError(f"--positive-weight must be > 0 (got {self.positive_weight!r})", code=Code.OPTION_VALUE)
        check_number("max_length", self.max_length, minimum=2, integer=True)  # [CLS] and [SEP]
        check_number("seed", self.seed, minimum=0, integer=True)


def train_ellipsis(options: TrainEllipsisOptions, progress: bool = True) -> dict:
    """Train the classifier on ``options.ptb`` from ``options.base_model`` into ``options.output``."""
    output = options.output
    _check_output_dir(output)
    examples = [(s, int(e)) for f in options.ptb for s, e, _ in read_ptb_trees(f)]
    if not examples:
        raise InputError(f"no trees found in {', '.join(options.ptb)}", code=Code.EMPTY)
    tokenizer, model = _load_base_model(options.base_model)
    losses = _train(model, tokenizer, examples, options, "cpu" if options.cpu else None, progress)
    _save(model, tokenizer, output)
    return {
        "sentences": len(examples),
        "positives": sum(label for _, label in examples),
        "epochs": options.epochs,
        "final_loss": losses[-1],
        "output": output,
    }


def _check_output_dir(output: str) -> None:
    """The model replaces ``output``: only an empty directory or an earlier model may be there
    (a directory holding anything else would be deleted)."""
    if os.path.isfile(output):
        raise InputError(f"{output}: exists and is not a directory", code=Code.CANNOT_WRITE)
    if os.path.isdir(output) and os.listdir(output) and not os.path.exists(os.path.join(output, "config.json")):
        raise InputError(
            f"{output}: a directory with other files in it (no model config.json); give a new or "
            "empty directory for the model",
            code=Code.CANNOT_WRITE,
        )


def _is_missing_path(model: str) -> bool:
    """A model given as a path (absolute, or ./...) that is not a directory: said before
    importing transformers, whose message would tell to download a hub name."""
    return (os.path.isabs(model) or model.startswith(".")) and not os.path.isdir(model)


def _load_base_model(base_model: str):
    if _is_missing_path(base_model):
        raise InputError(f"{base_model}: base model directory not found (--base-model)", code=Code.MODEL)
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(base_model, local_files_only=True)
        model = AutoModelForSequenceClassification.from_pretrained(base_model, num_labels=2, local_files_only=True)
    except (OSError, ValueError) as e:
        raise InputError(
            f"base model {base_model!r} not found locally ({type(e).__name__}); download it on a "
            f"machine with network (`huggingface-cli download {base_model}`) and pass its path",
            code=Code.MODEL,
        ) from None
    return tokenizer, model


def _train(
    model, tokenizer, examples, train: TrainEllipsisOptions, device: Optional[str], progress: bool
) -> List[float]:
    """Weighted cross-entropy fine-tuning; returns the loss of every batch."""
    import torch
    from tqdm import tqdm

    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    model.to(dev).train()
    torch.manual_seed(train.seed)
    optim = torch.optim.AdamW(model.parameters(), lr=train.lr)
    loss_fn = torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0, train.positive_weight], device=dev))
    gen = torch.Generator().manual_seed(train.seed)
    losses: List[float] = []
    for epoch in range(train.epochs):
        order = torch.randperm(len(examples), generator=gen).tolist()
        bar = tqdm(range(0, len(order), train.batch_size), desc=f"ellipsis epoch {epoch + 1}", disable=not progress)
        for b in bar:
            batch = [examples[i] for i in order[b : b + train.batch_size]]
            enc = tokenizer(
                [s for s, _ in batch], padding=True, truncation=True, max_length=train.max_length, return_tensors="pt"
            ).to(dev)
            logits = model(**enc).logits
            loss = loss_fn(logits, torch.tensor([y for _, y in batch], device=dev))
            optim.zero_grad()
            loss.backward()
            optim.step()
            losses.append(float(loss.detach()))
            bar.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
    return losses


def _save(model, tokenizer, output: str) -> None:
    """Saved beside ``output`` first, then moved into place: a failure leaves no half model."""
    tmp = output.rstrip("/") + ".partial"
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if os.path.exists(output):
        shutil.rmtree(output)
    os.replace(tmp, output)


class EllipsisClassifier:
    def __init__(self, path: str, batch_size: int = 64, device: Optional[str] = None):
        if _is_missing_path(path):
            raise InputError(
                f"{path}: ellipsis model directory not found (--ellipsis-model); train one with "
                "`muda train-ellipsis` or leave --ellipsis-model out for the rule-based detector",
                code=Code.MODEL,
            )
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            self.model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError) as e:
            raise InputError(
                f"ellipsis model {path!r} not found ({type(e).__name__}); train one with "
                f"`muda train-ellipsis` or leave --ellipsis-model out for the rule-based detector",
                code=Code.MODEL,
            ) from None
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model.to(self.device).eval()
        self.batch_size = batch_size

    def predict(self, lines: Sequence[str]) -> List[bool]:
        import torch

        out: List[bool] = [False] * len(lines)
        todo = [i for i, line in enumerate(lines) if line.strip()]
        for b in range(0, len(todo), self.batch_size):
            idx = todo[b : b + self.batch_size]
            enc = self.tokenizer(
                [lines[i] for i in idx], padding=True, truncation=True, max_length=128, return_tensors="pt"
            ).to(self.device)
            with torch.no_grad():
                pred = self.model(**enc).logits.argmax(-1).tolist()
            for i, p in zip(idx, pred, strict=True):
                out[i] = bool(p)
        return out
