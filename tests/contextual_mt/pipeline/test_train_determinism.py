"""The demo's numbers are the same on every run: training with the demo preset on CPU gives the
same weights twice, with two other thread counts in the environment (as on machines with other
numbers of cores), the second beside a process that keeps a core busy (OpenMP and
MKL may lower their thread counts under load, and the order of the sums with them)."""

import shutil
import subprocess
import sys

import torch

from contextual_mt.pipeline import train as train_stage
from contextual_mt.pipeline.layout import PairLayout
from contextual_mt.pipeline.prepare import DataOptions, prepare_data
from contextual_mt.pipeline.presets import get_preset
from contextual_mt.pipeline.train import TrainOptions, cpu_thread_env, train_command, train_model


def _weights(path):
    state = torch.load(path, map_location="cpu", weights_only=False)["model"]
    # fairseq's sinusoidal position embeddings keep an uninitialised placeholder (``torch.empty``,
    # for the device and dtype): memory, not a weight
    return {k: v for k, v in state.items() if not k.endswith("._float_tensor")}


def test_the_demo_preset_trains_the_same_weights_twice_under_load_and_other_thread_settings(
    demo_corpus, tmp_path, monkeypatch
):
    corpus = demo_corpus(train_docs=40, valid_docs=5, test_docs=5, seed=5)
    first, second = PairLayout("fr", str(tmp_path / "a")), PairLayout("fr", str(tmp_path / "b"))
    prepare_data(
        DataOptions(lang="fr", output=first.data, text=str(corpus), vocab_size=get_preset("demo").vocab_size),
        progress=False,
    )
    shutil.copytree(first.data, second.data)
    # two thread settings in the environment (the default is the number of cores): without the
    # preset's own setting the two runs would sum in other orders (2 and 1 threads do; 2 and 3 may not)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    monkeypatch.setenv("MKL_NUM_THREADS", "2")
    train_model(TrainOptions("fr", "context", preset="demo", root=first.root, gpus=0, max_epoch=1, progress=False))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MKL_NUM_THREADS", "1")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        train_model(TrainOptions("fr", "context", preset="demo", root=second.root, gpus=0, max_epoch=1, progress=False))
    finally:
        busy.kill()
        busy.wait()
    a, b = _weights(first.checkpoint("context")), _weights(second.checkpoint("context"))
    assert sorted(a) == sorted(b)
    differing = [k for k in a if not torch.equal(a[k], b[k])]
    assert not differing, differing[:5]


def test_the_thread_count_is_the_presets_on_cpu_only():
    assert cpu_thread_env("demo", 0) == {
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OMP_DYNAMIC": "FALSE",
        "MKL_DYNAMIC": "FALSE",
    }
    assert cpu_thread_env("demo", 1) == {} and cpu_thread_env("small", 1) == {}


def test_cpu_training_without_a_fixed_thread_count_uses_the_cores_it_may_run_on(monkeypatch):
    """Issue 50: on 2 cores, the context model spent 2m05s of its 3m13s in the kernel: torch's
    threads beside fairseq's data-loader worker on cores they could not share. On CPU a preset
    without a fixed count trains with one thread per core this process may use, and without the
    worker (its batches made in the training process); a fixed count (the demo's 1) keeps it."""
    monkeypatch.setattr(train_stage, "usable_cores", lambda: 2)
    assert cpu_thread_env("tiny", 0)["OMP_NUM_THREADS"] == "2" and cpu_thread_env("small", 0)["MKL_NUM_THREADS"] == "2"
    assert cpu_thread_env("tiny", 0)["OMP_DYNAMIC"] == "FALSE"
    layout = PairLayout("fr", "/nowhere")
    tiny = train_command(TrainOptions("fr", "context", preset="tiny", layout=layout), gpus=0, fp16=False)
    demo = train_command(TrainOptions("fr", "context", preset="demo", layout=layout), gpus=0, fp16=False)
    on_gpu = train_command(TrainOptions("fr", "context", preset="tiny", layout=layout), gpus=1, fp16=False)
    assert "dataset.num_workers=0" in tiny and "dataset.num_workers=0" not in demo + on_gpu
    # an override of the user's comes last, and wins
    given = TrainOptions("fr", "context", preset="tiny", layout=layout, overrides=["dataset.num_workers=2"])
    assert train_command(given, gpus=0, fp16=False)[-1] == "dataset.num_workers=2"
