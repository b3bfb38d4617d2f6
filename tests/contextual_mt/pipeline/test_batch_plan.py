"""Tokens per update for `make train` (pipeline/batch_plan.py): the preset's settings on CPU and
with BATCH=preset, a GPU batch from its memory, and the learning-rate rule."""

import json
import math
import os
from pathlib import Path

import pytest

from contextual_mt.backends.fairseq.training_probe import TrainingSplit
from contextual_mt.errors import InputError
from contextual_mt.pipeline import train as train_stage
from contextual_mt.pipeline.batch_plan import (
    LR_CAP,
    MAX_SCALE,
    MIN_UPDATES_PER_EPOCH,
    MemoryEstimate,
    Reference,
    measure_memory,
    parse_batch,
    plan_batch,
    reference_of,
)
from contextual_mt.pipeline.layout import PairLayout
from contextual_mt.pipeline.presets import preset_config
from contextual_mt.pipeline.train import TrainOptions, train_command, train_model
from tests.helpers import write_fairseq_checkpoint

SMALL = Reference(max_tokens=4096, update_freq=1, lr=5e-4, warmup_updates=4000)
# the figures measure_memory gives transformer-small with a 16k vocabulary (rounded)
SMALL_MEMORY = MemoryEstimate(parameters=52_339_712, kib_per_token=650.0, state_gib=0.975)


def plan(batch="auto", gpus=1, gib=80.0, memory=SMALL_MEMORY, **kw):
    return plan_batch(batch, SMALL, gpus, gib if gpus else None, (lambda: memory), cpus=kw.pop("cpus", 16), **kw)


def test_the_presets_reference_is_their_config():
    assert reference_of(preset_config("small")) == SMALL
    assert reference_of(preset_config("tiny")) == Reference(4096, 1, 2e-3, 200)
    assert reference_of(preset_config("small", ("optimization.lr=[1e-3]",))).lr == 1e-3


def test_batch_values():
    assert parse_batch("auto") == "auto" and parse_batch("preset") == "preset" and parse_batch(" 16384") == "16384"
    with pytest.raises(InputError, match=r"^--batch must be auto, preset or a number .*\(got 'big'\)$"):
        parse_batch("big")
    with pytest.raises(InputError, match=r"^--batch must be >= 1 tokens per update \(got 0\)$"):
        parse_batch("0")
    with pytest.raises(InputError, match="--batch must be auto"):
        TrainOptions("fr", "context", batch="1.5e4")
    with pytest.raises(InputError, match=r"--batch must be <= 1000000000 tokens per update \(got 10{20}\)"):
        parse_batch("1" + "0" * 20)


def test_cpu_and_preset_keep_the_papers_settings():
    for p in (plan(gpus=0), plan("preset"), plan("preset", gpus=4)):
        assert (p.max_tokens, p.update_freq, p.lr, p.warmup_updates) == (4096, 1, 5e-4, 4000)
        assert p.fingerprint() is None and not p.changes_preset
    assert plan(gpus=0).overrides() == [] and plan(gpus=0).num_workers is None
    assert plan("preset", gpus=4).tokens_per_update == 4 * 4096  # each GPU its max_tokens, as fairseq does
    # the memory is not measured when nothing is sized
    calls = []
    plan_batch("auto", SMALL, 0, None, lambda: calls.append(1))
    plan_batch("preset", SMALL, 1, 80.0, lambda: calls.append(1))
    assert calls == []


@pytest.mark.parametrize("gib, per_gpu", [(80, 32768), (40, 16384), (24, 16384), (16, 8192), (12, 4096)])
def test_auto_fills_the_gpu_memory_within_the_fraction(gib, per_gpu):
    p = plan(gib=gib)
    assert p.max_tokens == per_gpu and p.update_freq == 1 and p.tokens_per_update == per_gpu
    assert SMALL_MEMORY.gib(p.max_tokens) <= 0.5 * gib
    if per_gpu < 4096 * MAX_SCALE:  # the next power of two would not fit
        assert SMALL_MEMORY.gib(2 * p.max_tokens) > 0.5 * gib
    k = per_gpu / 4096
    assert p.lr == pytest.approx(5e-4 * min(math.sqrt(k), LR_CAP))
    assert p.warmup_updates == round(4000 / k)
    assert p.fingerprint() == (
        None
        if k == 1
        else {"max_tokens": per_gpu, "update_freq": 1, "processes": 1, "lr": p.lr, "warmup_updates": p.warmup_updates}
    )


def test_a_small_gpu_accumulates_back_to_the_presets_update():
    p = plan(gib=5.0)  # 4096 tokens need 3.5 GiB > 2.5
    assert (p.max_tokens, p.update_freq, p.tokens_per_update) == (2048, 2, 4096)
    assert (p.lr, p.warmup_updates) == (5e-4, 4000)  # same tokens per update: same schedule
    assert "dataset.max_tokens=2048" in p.overrides() and "optimization.update_freq=[2]" in p.overrides()
    with pytest.raises(InputError, match=r"GPU's 1\.0 GiB are too small .* 512 tokens per forward"):
        plan(gib=1.0)


def test_several_gpus_share_the_total():
    p = plan(gpus=8)
    assert p.max_tokens == 4096 and p.tokens_per_update == 8 * 4096 and p.lr == pytest.approx(1e-3)
    two = plan(gpus=2)
    assert two.max_tokens == 16384 and two.tokens_per_update == 32768
    sixteen = plan(gpus=16)  # more GPUs than the scale: the preset's batch on each
    assert sixteen.max_tokens == 4096 and sixteen.tokens_per_update == 16 * 4096


def test_explicit_tokens_per_update():
    cpu = plan("16384", gpus=0)
    assert (cpu.max_tokens, cpu.update_freq) == (16384, 1)
    assert cpu.lr == pytest.approx(1e-3) and cpu.warmup_updates == 1000
    small_gpu = plan("32768", gib=16)  # 32768 per forward would not fit: accumulated
    assert small_gpu.tokens_per_update == 32768 and small_gpu.update_freq == 4 and small_gpu.max_tokens == 8192
    below = plan("2048", gpus=0)  # fewer tokens than the preset's: a lower learning rate, longer warm-up
    assert below.lr == pytest.approx(5e-4 * math.sqrt(0.5)) and below.warmup_updates == 8000


def test_the_rule_holds_the_learning_rate_at_equal_tokens():
    """fairseq's inverse_sqrt schedule, after warm-up: lr * sqrt(warmup / update). With the plan's
    schedule the learning rate after the same number of tokens is min(sqrt(k), LR_CAP) times the
    preset's, at every point past both warm-ups."""

    def inverse_sqrt(lr, warmup, update):
        return lr * update / warmup if update < warmup else lr * math.sqrt(warmup / update)

    for gib in (16, 40, 80):
        p = plan(gib=gib)
        k = p.scale
        for tokens in (4096 * 8000, 4096 * 20000, 4096 * 100000):
            base = inverse_sqrt(SMALL.lr, SMALL.warmup_updates, tokens / SMALL.tokens_per_update)
            scaled = inverse_sqrt(p.lr, p.warmup_updates, tokens / p.tokens_per_update)
            assert scaled / base == pytest.approx(min(math.sqrt(k), LR_CAP), rel=1e-3)


def test_overrides_of_the_batch_are_the_users():
    with pytest.raises(InputError, match=r"--batch 16384 and the override of dataset.max_tokens: not both"):
        plan("16384", user_overrides=["dataset.max_tokens=8192"])
    p = plan(user_overrides=["optimization.lr=[1e-3]"])
    assert not p.changes_preset and "the overrides set optimization.lr" in p.why


def test_data_workers_on_a_gpu():
    assert plan(cpus=16).num_workers == 6 and plan(gpus=2, cpus=8).num_workers == 3
    assert plan(gpus=4, cpus=4).num_workers == 1
    assert "dataset.num_workers=6" in plan("preset", cpus=16).overrides()
    assert plan(user_overrides=["dataset.num_workers=2"]).num_workers is None
    assert plan(cpus=16).fingerprint()["max_tokens"] == 32768 and "num_workers" not in plan(cpus=16).fingerprint()


def test_memory_is_measured_on_the_presets_model(tmp_path):
    from fairseq.data import Dictionary

    d = Dictionary()
    for i in range(1000):
        d.add_symbol(f"w{i}")
    path = tmp_path / "dict.fr.txt"
    d.save(str(path))
    config = preset_config("tiny")
    m = measure_memory(config["model"], str(path), config["task"])
    # tiny: 128-dim, 2+2 layers, shared embeddings of len(d) rows
    assert 0.9e6 < m.parameters < 1.2e6
    # every token saves at least its log-probabilities over the vocabulary (float32)
    assert m.kib_per_token > len(d) * 4 / 1024
    bigger = tmp_path / "dict.big.txt"
    for i in range(4000):
        d.add_symbol(f"x{i}")
    d.save(str(bigger))
    assert measure_memory(config["model"], str(bigger), config["task"]).kib_per_token > m.kib_per_token
    with pytest.raises(InputError, match="not a registered fairseq architecture"):
        measure_memory({"_name": "nonsense"}, str(path))


class FakeSplit:
    """A training split of 40M tokens whose longest row is 50 tokens."""

    longest = 50

    def __init__(self, *args):
        pass

    def batches_at(self, max_tokens):
        return 40_000_000 // max_tokens


@pytest.fixture
def fake_data(tmp_path):
    layout = PairLayout("fr", str(tmp_path))
    (tmp_path / "data" / "fr" / "bin").mkdir(parents=True)
    (tmp_path / "data" / "fr" / "summary.json").write_text("{}")
    for name in ("dict.en.txt", "dict.fr.txt"):
        (tmp_path / "data" / "fr" / "bin" / name).write_text("".join(f"w{i} 1\n" for i in range(50)))
    return layout


def test_a_gpu_run_trains_with_the_plan_and_records_it(fake_data, monkeypatch):
    commands = []

    def fake_run(cmd, log_path, o):
        commands.append(cmd)
        write_fairseq_checkpoint(o.layout.checkpoint(o.model), epochs=1, num_updates=10, valid_loss=3.0)
        return {"num_updates": 10, "valid_loss": 3.0, "best_valid_loss": 3.0, "target_words_per_second": 1.0}

    monkeypatch.setattr(train_stage, "visible_gpus", lambda: 1)
    monkeypatch.setattr(train_stage, "_fast_fp16", lambda: True)
    monkeypatch.setattr(train_stage, "gpu_memory_gib", lambda gpus: 80.0)
    monkeypatch.setattr(train_stage, "measure_memory", lambda *a: SMALL_MEMORY)
    monkeypatch.setattr(train_stage, "TrainingSplit", FakeSplit)
    monkeypatch.setattr(train_stage, "_run", fake_run)
    monkeypatch.setattr(train_stage, "_health", lambda o, stats: {})
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    record = train_model(TrainOptions("fr", "context", preset="small", root=fake_data.root, progress=False))
    cmd = commands[0]
    assert "dataset.max_tokens=32768" in cmd and "optimization.lr=[0.001]" in cmd
    assert "lr_scheduler.warmup_updates=500" in cmd and "dataset.num_workers=6" in cmd and "common.fp16=true" in cmd
    assert record["tokens_per_update"] == 32768 and record["batch"]["mode"] == "auto"
    assert record["batch"]["reference"] == {"max_tokens": 4096, "update_freq": 1, "lr": 5e-4, "warmup_updates": 4000}
    assert record["fingerprint"]["batch"]["max_tokens"] == 32768
    saved = json.loads(Path(os.path.join(fake_data.checkpoints("context"), ".stage", "train.json")).read_text())
    assert saved["batch"]["estimated_gib"] == pytest.approx(SMALL_MEMORY.gib(32768), abs=0.01)
    # the same run again: done; with the paper's settings: other settings than the checkpoints'
    assert train_model(TrainOptions("fr", "context", preset="small", root=fake_data.root, progress=False)) == saved
    with pytest.raises(InputError, match=r"other data or settings \(changed: batch\)"):
        train_model(TrainOptions("fr", "context", preset="small", root=fake_data.root, batch="preset", progress=False))


def test_cpu_training_commands_are_unchanged(fake_data):
    o = TrainOptions("fr", "context", preset="small", root=fake_data.root)
    p = train_stage.batch_plan(o, 0)
    assert train_command(o, 0, False, p) == train_command(o, 0, False)
    assert train_stage.train_fingerprint(o, p) == train_stage.train_fingerprint(
        o
    ) and "batch" not in train_stage.train_fingerprint(o, p)


def test_auto_keeps_enough_updates_per_epoch():
    # an epoch of 1.2M tokens: 300 batches at 4096, 150 at 8192 -> too few to grow the batch
    small_corpus = lambda max_tokens: 1_200_000 // max_tokens  # noqa: E731
    p = plan(batches_at=small_corpus)
    assert p.max_tokens == 4096 and not p.changes_preset
    mid = plan(batches_at=lambda m: 4_200_000 // m)  # 256 updates at 16384, 128 at 32768
    assert mid.max_tokens == 16384 and f"keeps >= {MIN_UPDATES_PER_EPOCH} updates per epoch (256)" in mid.why
    large = plan(batches_at=lambda m: 100_000_000 // m)
    assert large.max_tokens == 32768
    # an explicit number of tokens is the user's: no guard
    assert plan("32768", batches_at=small_corpus).tokens_per_update == 32768


def test_epochs_are_counted_as_fairseq_batches_them(data_bin):
    from fairseq.data import data_utils
    from fairseq.data.dictionary import Dictionary

    sentence = {"source_context_size": 0, "target_context_size": 0, "sample_context_size": False}
    context = {"source_context_size": 0, "target_context_size": 3, "sample_context_size": False}
    split = TrainingSplit(sentence, str(data_bin), "en", "fr")
    at = split.batches_at
    d = Dictionary.load(str(data_bin / "dict.fr.txt"))
    # (the sizes are a view of the dataset's memory map: keep the datasets alive)
    datasets = [data_utils.load_indexed_dataset(str(data_bin / f"train.en-fr.{side}"), d) for side in ("en", "fr")]
    sizes = [ds.sizes.copy() for ds in datasets]
    longest = [max(a, b) for a, b in zip(*sizes, strict=True)]
    # every batch holds at most max_tokens (padded), and no fewer batches than the tokens need
    for max_tokens in (64, 256):
        assert at(max_tokens) >= math.ceil(sum(longest) / max_tokens)
        assert at(max_tokens) <= len(longest)
    assert at(10**9) == 1 and at(64) > at(256)
    # the context model's rows carry their context: more tokens, more batches
    assert split.longest == max(longest)
    with_context = TrainingSplit(context, str(data_bin), "en", "fr")
    assert with_context.batches_at(64) > at(64) and with_context.longest > split.longest


def test_preset_with_batch_overrides_is_refused_and_a_sentence_cap_is_not_a_token_count():
    with pytest.raises(
        InputError,
        match=r"--batch preset keeps the preset's own values, and the override of "
        r"dataset.max_tokens changes them: not both",
    ):
        plan("preset", user_overrides=["dataset.max_tokens=1024"])
    capped = plan(gpus=0, user_overrides=["dataset.batch_size=2"])
    assert capped.as_record()["tokens_per_update"] is None and "dataset.batch_size caps the sentences" in capped.why


def test_a_batch_below_the_longest_example_is_refused_before_training(fake_data, monkeypatch):
    monkeypatch.setattr(train_stage, "TrainingSplit", FakeSplit)
    monkeypatch.setattr(train_stage, "_run", lambda *a: pytest.fail("training started"))
    with pytest.raises(
        InputError,
        match=r"^--batch 32: 32 tokens per forward are fewer than the longest "
        r"training example \(50 tokens, its context included\); give at "
        r"least 50$",
    ):
        train_model(TrainOptions("fr", "context", preset="small", root=fake_data.root, gpus=0, batch="32"))
    assert not os.path.exists(fake_data.checkpoints("context"))


def test_options_inside_a_make_args_variable_keep_their_names(monkeypatch):
    """Under make, a message is built naming the Make variable the stage table declares (the check
    of a library below the pipeline too); options the user typed inside ATTRIBUTE_ARGS keep their
    own names; outside a stage's run, the flag."""
    from contextual_mt.inference.precision import check_dtype
    from contextual_mt.pipeline.attribute_stage import AttributeStageOptions
    from contextual_mt.pipeline.make_names import MAKE_ENV, named_as_typed

    monkeypatch.setenv(MAKE_ENV, "1")
    with named_as_typed():
        with pytest.raises(InputError, match=r"^DTYPE must be one of"):
            check_dtype("fp8")
        with pytest.raises(
            InputError, match=r"^ATTRIBUTE_ARGS: attribute refuses it: unrecognized arguments: --dtype float16$"
        ):
            AttributeStageOptions("fr", attribute_args="--dtype float16")
    with pytest.raises(InputError, match=r"^--dtype must be one of"):
        check_dtype("fp8")
