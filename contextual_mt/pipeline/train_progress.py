"""What ``make train`` shows while fairseq-hydra-train runs: fed fairseq's log one line at a time,
a progress bar per epoch over its updates (loss, words/s, the epoch's ETA and, after one epoch,
the whole run's), one summary line per validation, and the run's figures (throughput, the validation
curve) for the train stage's record, which takes the epochs, updates and losses from the checkpoints
themselves (a resumed run that trains nothing logs none).

fairseq (``log_format: simple``) logs, among much else:

* the run's config as a dict (``'max_epoch': 8`` ..., ``'label_smoothing': 0.1`` ...);
* ``grouped total_num_itrs = 342`` then ``begin training epoch 4`` (the epoch's updates, then
  its number: after a resume this is the next epoch of the checkpoint, not 1);
* every ``log_interval`` updates ``epoch 004:     50 / 342 loss=6.45, ..., wps=6607.8, ...``;
* ``epoch 004 | valid on 'valid' subset | loss 3.19 | ... | num_updates 131 | best_loss 3.19``;
* ``epoch 004 | loss 4.44 | ... | wps 6637.6 | ... | num_updates 131 | ...`` (the epoch's means).
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm

_CONFIG_INT = {"max_epoch": re.compile(r"'max_epoch': (\d+)"), "max_update": re.compile(r"'max_update': (\d+)")}
_SMOOTHING = re.compile(r"'label_smoothing': ([\d.eE+-]+)")
_ITERS = re.compile(r"grouped total_num_itrs = (\d+)")
_BEGIN = re.compile(r"begin training epoch (\d+)")
_INNER = re.compile(r"epoch (\d+):\s+(\d+) / (\d+) (.*)")
_VALID = re.compile(r"epoch (\d+) \| valid on '?valid'? subset \| (.*)")
_EPOCH_END = re.compile(r"epoch (\d+) \| (loss .*)")


def _commas(text: str) -> Dict[str, str]:
    """``loss=6.45, nll_loss=6.16, ...`` as a dict."""
    return dict(item.strip().split("=", 1) for item in text.split(",") if "=" in item)


def _pipes(text: str) -> Dict[str, str]:
    """``loss 3.19 | nll_loss 2.37 | ...`` as a dict."""
    return dict(item.strip().split(" ", 1) for item in text.split(" | ") if " " in item.strip())


def _float(values: Dict[str, str], key: str) -> Optional[float]:
    try:
        return float(values[key])
    except (KeyError, ValueError):
        return None


@dataclass
class EpochState:
    """Where the running epoch stands, as fairseq last logged it."""

    epoch: Optional[int] = None  # fairseq's own epoch number (a resumed run goes on from its checkpoint)
    max_epoch: Optional[int] = None  # None: unknown or unlimited
    n: int = 0  # updates of this epoch done
    total: Optional[int] = None  # updates in this epoch
    loss: Optional[float] = None
    wps: Optional[float] = None


@dataclass
class TrainStats:
    """The figures of this run's log (see ``as_dict``); the record keeps the checkpoints' own
    epochs, updates and validation losses over these."""

    epochs: int = 0  # the last epoch finished
    num_updates: int = 0
    train_wps: List[float] = field(default_factory=list)  # target words/s of each epoch of this run
    train_ups: List[float] = field(default_factory=list)  # updates/s of each epoch
    train_wpb: List[float] = field(default_factory=list)  # target words per update of each epoch
    valid_loss: Optional[float] = None  # the last validation's loss (bits per token)
    best_valid_loss: Optional[float] = None  # the best so far, as fairseq reports it (checkpoint_best.pt's)
    # [epoch, updates, loss] per validation (updates None: not in the log line)
    valid_curve: List[List[Optional[float]]] = field(default_factory=list)
    label_smoothing: Optional[float] = None  # the criterion's, from fairseq's config

    def as_dict(self) -> Dict:
        return {
            "epochs": self.epochs,
            "num_updates": self.num_updates,
            "train_wps": list(self.train_wps),
            "train_ups": list(self.train_ups),
            "train_wpb": list(self.train_wpb),
            # the run's throughput, by which presets and batch sizes are compared (medians over its epochs)
            "target_words_per_second": _median(self.train_wps),
            "updates_per_second": _median(self.train_ups),
            "target_words_per_update": _median(self.train_wpb),
            "valid_loss": self.valid_loss,
            "best_valid_loss": self.best_valid_loss,
            "valid_curve": [list(point) for point in self.valid_curve],
            "label_smoothing": self.label_smoothing,
        }


def updates_of(values: Dict[str, str]) -> Optional[int]:
    updates = _float(values, "num_updates")
    return None if updates is None else int(updates)


def _median(values: List[float]) -> Optional[float]:
    return float(statistics.median(values)) if values else None


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60:02d}:{rest % 60:02d}"


class TrainProgress:
    """Turns fairseq's log lines into progress: ``feed`` each line, ``close`` at the end.

    ``label`` starts every line shown (``[train de context]``); ``max_epoch`` is the run's when
    the command sets it (fairseq's logged config replaces it: that is what the run uses);
    ``show=False`` shows nothing but still gathers ``stats``. ``clock`` is for tests."""

    def __init__(
        self,
        label: str,
        max_epoch: Optional[int] = None,
        show: bool = True,
        file: Optional[TextIO] = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.label, self.show, self.clock = label, show, clock
        self.file = file if file is not None else sys.stderr
        self.state = EpochState(max_epoch=max_epoch)
        self.stats = TrainStats()
        self.start = clock()
        self.epoch_seconds: List[float] = []  # the epochs run here, from their start to validation
        self._epoch_start: Optional[float] = None
        self._next_total: Optional[int] = None
        self.bar: Optional[tqdm] = None  # tqdm is imported when the bar starts

    # --- parsing ---------------------------------------------------------------------------

    def feed(self, line: str) -> None:
        if "'optimization'" in line:  # the config dump
            self._config(line)
        elif m := _ITERS.search(line):
            self._next_total = int(m.group(1))
        elif m := _BEGIN.search(line):
            self._begin(int(m.group(1)))
        elif m := _INNER.search(line):
            self._inner(int(m.group(1)), int(m.group(2)), int(m.group(3)), _commas(m.group(4)))
        elif m := _VALID.search(line):
            self._valid(int(m.group(1)), _pipes(m.group(2)))
        elif m := _EPOCH_END.search(line):
            self._epoch_end(int(m.group(1)), _pipes(m.group(2)))

    def _config(self, line: str) -> None:
        m = _CONFIG_INT["max_epoch"].search(line)
        if m:
            self.state.max_epoch = int(m.group(1)) or None  # 0: no limit
        m = _SMOOTHING.search(line)
        self.stats.label_smoothing = float(m.group(1)) if m else 0.0

    def _begin(self, epoch: int) -> None:
        self._close_bar()
        self.state.epoch, self.state.n, self.state.total = epoch, 0, self._next_total
        self.state.loss = self.state.wps = None
        self._next_total = None
        self._epoch_start = self.clock()
        self._open_bar()

    def _inner(self, epoch: int, n: int, total: int, values: Dict[str, str]) -> None:
        if epoch != self.state.epoch:  # a log that began mid-epoch
            self._begin(epoch)
        self.state.total = total
        self.state.loss, self.state.wps = _float(values, "loss"), _float(values, "wps")
        self._advance(n)

    def _valid(self, epoch: int, values: Dict[str, str]) -> None:
        self.stats.valid_loss = _float(values, "loss")
        if self.stats.valid_loss is not None:
            self.stats.valid_curve.append([epoch, updates_of(values), self.stats.valid_loss])
        best = _float(values, "best_loss")
        # the first validation has no best_loss: it is the best so far
        self.stats.best_valid_loss = best if best is not None else self._best(self.stats.valid_loss)
        updates = _float(values, "num_updates")  # validation is logged before the epoch's line
        if updates is not None:
            self.stats.num_updates = int(updates)
        if self._epoch_start is not None and self.state.epoch == epoch:
            self.epoch_seconds.append(self.clock() - self._epoch_start)
            self._epoch_start = None
        self._close_bar()
        if self.show:
            print(
                f"{self.label} epoch {epoch}: valid loss {values.get('loss')}, {self.stats.num_updates} updates, "
                f"{self.clock() - self.start:.0f} s",
                file=self.file,
                flush=True,
            )

    def _best(self, loss: Optional[float]) -> Optional[float]:
        known = [v for v in (loss, self.stats.best_valid_loss) if v is not None]
        return min(known) if known else None

    def _epoch_end(self, epoch: int, values: Dict[str, str]) -> None:
        self.stats.epochs = epoch
        updates = _float(values, "num_updates")
        if updates is not None:
            self.stats.num_updates = int(updates)
        for key, figures in (
            ("wps", self.stats.train_wps),
            ("ups", self.stats.train_ups),
            ("wpb", self.stats.train_wpb),
        ):
            value = _float(values, key)
            if value is not None:
                figures.append(value)

    # --- display ---------------------------------------------------------------------------

    def run_left(self) -> Optional[float]:
        """Seconds until the last epoch ends: the mean epoch of this run times the epochs left,
        less what the running one has done; None before an epoch has finished here or when the
        number of epochs is unknown."""
        s = self.state
        if not self.epoch_seconds or s.max_epoch is None or s.epoch is None:
            return None
        per_epoch = sum(self.epoch_seconds) / len(self.epoch_seconds)
        after = max(s.max_epoch - s.epoch, 0) * per_epoch
        running = self.clock() - self._epoch_start if self._epoch_start is not None else per_epoch
        return after + max(per_epoch - running, 0.0)

    def description(self) -> str:
        s = self.state
        return f"{self.label} epoch {s.epoch}" + (f"/{s.max_epoch}" if s.max_epoch else "")

    def postfix(self) -> str:
        s, parts = self.state, []
        if s.loss is not None:
            parts.append(f"loss {s.loss:.3f}")
        if s.wps is not None:
            parts.append(f"{s.wps:,.0f} words/s")
        left = self.run_left()
        if left is not None:
            parts.append(f"run ~{_duration(left)} left")
        return ", ".join(parts)

    def _open_bar(self) -> None:
        if not self.show:
            return
        from tqdm import tqdm

        self.bar = tqdm(
            total=self.state.total,
            desc=self.description(),
            unit="upd",
            file=self.file,
            leave=False,
            dynamic_ncols=True,
            postfix=self.postfix() or None,
            mininterval=0,
        )  # fairseq's lines come seconds apart: show each one

    def _advance(self, n: int) -> None:
        self.state.n = n
        if self.bar is None:
            return
        if self.bar.total != self.state.total:
            self.bar.total = self.state.total
        self.bar.set_postfix_str(self.postfix(), refresh=False)
        self.bar.update(n - self.bar.n)

    def _close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def close(self) -> None:
        self._close_bar()
