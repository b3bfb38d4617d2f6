"""train_progress: fairseq's log lines (as fairseq-hydra-train writes them with log_format simple)
become a bar per epoch, a line per validation and the figures of the run's log."""

import io

import pytest

from contextual_mt.pipeline.train import _max_epoch
from contextual_mt.pipeline.train_progress import TrainProgress

CONFIG = (
    "[2026-11-25 17:26:18,1][fairseq_cli.train][INFO] - {'_name': None, 'optimization': {'_name': None, "
    "'max_epoch': 8, 'max_update': 0, 'lr': [0.002]}, 'criterion': {'_name': 'label_smoothed_cross_entropy', "
    "'label_smoothing': 0.1, 'report_accuracy': False}}"
)


def epoch_lines(epoch, total, updates_before, valid_loss, best_loss=None):
    """One epoch as fairseq logs it: its size, its start, one interval line, validation, its means."""
    inner = updates_before + 50
    best = f" | best_loss {best_loss}" if best_loss is not None else ""
    return [
        f"[t][fairseq.data.iterators][INFO] - grouped total_num_itrs = {total}",
        f"[t][fairseq.trainer][INFO] - begin training epoch {epoch}",
        "[t][fairseq_cli.train][INFO] - Start iterating over samples",
        f"[t][train_inner][INFO] - epoch {epoch:03d}:     50 / {total} loss=6.452, nll_loss=6.164, "
        f"ppl=71.72, wps=6607.8, ups=4.07, wpb=1636.6, bsz=237, num_updates={inner}, lr=0.001, gnorm=2.734, "
        "train_wall=24, wall=27",
        '[t][fairseq_cli.train][INFO] - begin validation on "valid" subset',
        f"[t][valid][INFO] - epoch {epoch:03d} | valid on 'valid' subset | loss {valid_loss} | nll_loss 2.373 | "
        f"ppl 5.18 | wps 21005.5 | wpb 703.8 | bsz 102.8 | num_updates {updates_before + total}{best}",
        f"[t][fairseq_cli.train][INFO] - end of epoch {epoch} (average epoch stats below)",
        f"[t][train][INFO] - epoch {epoch:03d} | loss 4.444 | nll_loss 3.842 | ppl 14.34 | wps {6000 + epoch}.5 | "
        f"ups 3.87 | wpb 1715.2 | bsz 250 | num_updates {updates_before + total} | lr 0.00131 | gnorm 2.076 | "
        "train_wall 16 | wall 34",
    ]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def feed(progress, lines, clock=None, step=1.0, seen=None):
    for line in lines:
        if clock is not None:
            clock.now += step
        progress.feed(line + "\n")
        if seen is not None and progress.bar is not None:
            seen.append((progress.bar.desc, progress.bar.n, progress.bar.total, progress.state.epoch))


def test_a_resumed_run_counts_epochs_from_its_checkpoint():
    out, clock, seen = io.StringIO(), Clock(), []
    progress = TrainProgress("[train de context]", file=out, clock=clock)
    lines = [CONFIG, "[t][fairseq.trainer][INFO] - Loaded checkpoint /x/checkpoint_last.pt (epoch 3 @ 300 updates)"]
    lines += epoch_lines(4, 100, 300, 3.5, best_loss=3.5) + epoch_lines(5, 100, 400, 3.25, best_loss=3.25)
    feed(progress, lines, clock, step=10.0, seen=seen)
    progress.close()
    # the bar names fairseq's epoch out of the run's max_epoch (from its config), never 1/8
    assert seen[0][0].startswith("[train de context] epoch 4/8") and seen[0][1:] == (0, 100, 4)
    after_interval = [s for s in seen if s[1] == 50]
    assert sorted({s[3] for s in after_interval}) == [4, 5]
    assert after_interval[0][0].startswith("[train de context] epoch 4/8")
    assert progress.state.max_epoch == 8 and progress.bar is None
    stats = progress.stats.as_dict()
    assert stats == {
        "epochs": 5,
        "num_updates": 500,
        "train_wps": [6004.5, 6005.5],
        "train_ups": [3.87, 3.87],
        "train_wpb": [1715.2, 1715.2],
        "target_words_per_second": 6005.0,
        "updates_per_second": 3.87,
        "target_words_per_update": 1715.2,
        "valid_loss": 3.25,
        "best_valid_loss": 3.25,
        "valid_curve": [[4, 400, 3.5], [5, 500, 3.25]],
        "label_smoothing": 0.1,
    }
    shown = out.getvalue()
    assert "[train de context] epoch 4: valid loss 3.5, 400 updates" in shown
    assert "[train de context] epoch 5: valid loss 3.25, 500 updates" in shown
    assert "loss 6.452" in shown and "6,608 words/s" in shown  # the interval line's figures on the bar


def test_the_whole_run_estimate_comes_after_one_epoch():
    clock = Clock()
    progress = TrainProgress("[train fr sentence]", show=False, clock=clock)
    feed(progress, [CONFIG, *epoch_lines(1, 100, 0, 9.0)[:4]], clock, step=10.0)
    assert progress.run_left() is None and "left" not in progress.postfix()  # no epoch finished yet
    feed(progress, epoch_lines(1, 100, 0, 9.0)[4:] + epoch_lines(2, 100, 100, 8.0)[:2], clock, step=10.0)
    # epoch 1 took 40 s from its start to its validation (4 lines of 10 s); epoch 2 just began:
    # 7 epochs of 40 s are left, less what the running one has done
    assert progress.epoch_seconds == [40.0] and progress.state.epoch == 2
    assert progress.run_left() == pytest.approx(7 * 40.0)
    clock.now += 10.0
    assert progress.run_left() == pytest.approx(7 * 40.0 - 10.0)
    assert "run ~04:30 left" in progress.postfix()


def test_first_validation_is_the_best_and_a_worse_one_keeps_it():
    progress = TrainProgress("[train fr sentence]", show=False)
    feed(progress, epoch_lines(1, 10, 0, 9.5))
    assert progress.stats.valid_loss == progress.stats.best_valid_loss == 9.5
    feed(progress, epoch_lines(2, 10, 10, 9.75, best_loss=9.5))
    assert progress.stats.valid_loss == 9.75 and progress.stats.best_valid_loss == 9.5
    # no config line seen: the number of epochs stays unknown, no "/N" in the bar's name
    assert progress.state.max_epoch is None and progress.description() == "[train fr sentence] epoch 2"


def test_no_progress_shows_nothing():
    out = io.StringIO()
    progress = TrainProgress("[train fr sentence]", show=False, file=out)
    feed(progress, [CONFIG, *epoch_lines(1, 100, 0, 9.0)])
    progress.close()
    assert out.getvalue() == "" and progress.stats.epochs == 1


def test_max_epoch_of_the_command_is_the_last_given():
    assert _max_epoch(["fairseq-hydra-train", "optimization.max_epoch=4", "optimization.max_epoch=6"]) == 6
    assert _max_epoch(["fairseq-hydra-train", "task.data=x"]) is None
