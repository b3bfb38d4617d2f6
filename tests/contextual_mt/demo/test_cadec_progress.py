"""`make cadec-demo`'s training shows where it is (issue 50.6): the bar of `make train`
(``train_progress``) per epoch over its updates, with its ETA, fed by fairseq logging every few
updates; not an epoch counter that sits at 0/10 for minutes."""

import io

from contextual_mt.demo import cadec
from tests.contextual_mt.pipeline.test_train_progress import epoch_lines

COMMANDS = []  # the command lines FakeFairseq was started with


class FakeFairseq:
    """fairseq-train as a subprocess: its log, two epochs of 100 updates."""

    def __init__(self, cmd, **kwargs):
        COMMANDS.append(cmd)
        lines = epoch_lines(1, 100, 0, 3.5) + epoch_lines(2, 100, 100, 3.25, best_loss=3.25)
        self.stdout = io.StringIO("".join(line + "\n" for line in lines))
        self.returncode = 0

    def wait(self):
        return 0


def test_cadec_training_shows_the_updates_of_each_epoch(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cadec.subprocess, "Popen", FakeFairseq)
    (tmp_path / "bin").mkdir()
    cadec.train_cadec(tmp_path / "bin", tmp_path / "ckpt", tmp_path / "logs", 10, [])
    cmd = COMMANDS[-1]
    assert cmd.count("--log-interval") == 1 and cmd[cmd.index("--log-interval") + 1] == str(cadec.LOG_INTERVAL)
    err = capsys.readouterr().err
    assert "[train cadec] epoch 1/10" in err and "50/100" in err  # within the epoch, out of its updates
    assert "[train cadec] epoch 1: valid loss 3.5" in err and "[train cadec] epoch 2: valid loss 3.25" in err
    assert "run ~" in err  # after one epoch: the whole run's ETA
