"""The paper's ellipsis classifier: BERT trained on Penn Treebank sentences, where a sentence
whose tree contains the ellipsis trace ``*?*`` is a positive; positives' loss is up-weighted x100.
``muda train-ellipsis`` trains it from PTB-format files the user has; ``--ellipsis-model`` loads it."""
from __future__ import annotations

import os
from typing import List, Optional, Sequence

from muda.errors import InputError
from muda.formats.ptb import read_ptb_trees


def train_ellipsis(ptb_files: Sequence[str], base_model: str, output: str, epochs: int = 1, batch_size: int = 16,
                   lr: float = 2e-5, positive_weight: float = 100.0, max_length: int = 128, seed: int = 1,
                   device: Optional[str] = None, progress: bool = True) -> dict:
    import torch
    from tqdm import tqdm
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    examples = [(s, int(e)) for f in ptb_files for s, e, _ in read_ptb_trees(f)]
    if not examples:
        raise InputError(f"no trees found in {', '.join(ptb_files)}")
    positives = sum(label for _, label in examples)
    try:
        tokenizer = AutoTokenizer.from_pretrained(base_model, local_files_only=True)
        model = AutoModelForSequenceClassification.from_pretrained(base_model, num_labels=2, local_files_only=True)
    except (OSError, ValueError) as e:
        raise InputError(f"base model {base_model!r} not found locally ({type(e).__name__}); download it on a "
                         f"machine with network (`huggingface-cli download {base_model}`) and pass its path") from None
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    model.to(dev).train()
    torch.manual_seed(seed)
    optim = torch.optim.AdamW(model.parameters(), lr=lr)
    loss_fn = torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0, positive_weight], device=dev))
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for epoch in range(epochs):
        order = torch.randperm(len(examples), generator=gen).tolist()
        bar = tqdm(range(0, len(order), batch_size), desc=f"ellipsis epoch {epoch + 1}", disable=not progress)
        for b in bar:
            batch = [examples[i] for i in order[b:b + batch_size]]
            enc = tokenizer([s for s, _ in batch], padding=True, truncation=True, max_length=max_length,
                            return_tensors="pt").to(dev)
            logits = model(**enc).logits
            loss = loss_fn(logits, torch.tensor([y for _, y in batch], device=dev))
            optim.zero_grad()
            loss.backward()
            optim.step()
            losses.append(float(loss.detach()))
            bar.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
    tmp = output.rstrip("/") + ".partial"
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    if os.path.exists(output):
        import shutil

        shutil.rmtree(output)
    os.replace(tmp, output)
    return {"sentences": len(examples), "positives": positives, "epochs": epochs, "final_loss": losses[-1],
            "output": output}


class EllipsisClassifier:
    def __init__(self, path: str, batch_size: int = 64, device: Optional[str] = None):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            self.model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError) as e:
            raise InputError(f"ellipsis model {path!r} not found ({type(e).__name__}); train one with "
                             f"`muda train-ellipsis` or leave --ellipsis-model out for the rule-based detector") from None
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model.to(self.device).eval()
        self.batch_size = batch_size

    def predict(self, lines: Sequence[str]) -> List[bool]:
        import torch

        out: List[bool] = [False] * len(lines)
        todo = [i for i, line in enumerate(lines) if line.strip()]
        for b in range(0, len(todo), self.batch_size):
            idx = todo[b:b + self.batch_size]
            enc = self.tokenizer([lines[i] for i in idx], padding=True, truncation=True, max_length=128,
                                 return_tensors="pt").to(self.device)
            with torch.no_grad():
                pred = self.model(**enc).logits.argmax(-1).tolist()
            for i, p in zip(idx, pred):
                out[i] = bool(p)
        return out
