"""bench.harness: the median of repeats, the JSON record, the ratios of the side-by-side table."""

import argparse
import json
import math
import os

import numpy as np
import pytest

from bench import harness


def clock(monkeypatch, durations):
    """time.perf_counter answering so that the n-th timed call lasts durations[n]."""
    readings, now = [], 0.0
    for d in durations:
        readings += [now, now + d]
        now += d + 1.0
    it = iter(readings)
    monkeypatch.setattr(harness.time, "perf_counter", lambda: next(it))


def test_time_it_median_min_max_of_the_repeats_after_untimed_warmup(monkeypatch):
    calls = []
    clock(monkeypatch, [3.0, 1.0, 2.0, 10.0, 4.0])
    t = harness.time_it(lambda: calls.append(1) or len(calls), repeats=5, warmup=2)
    assert len(calls) == 7  # 2 untimed, 5 timed
    assert t.times == [3.0, 1.0, 2.0, 10.0, 4.0]
    assert (t.median, t.min, t.max, t.repeats) == (3.0, 1.0, 10.0, 5)
    assert t.results == [3, 4, 5, 6, 7] and t.result == 7  # the timed calls' results
    assert t.rate(30) == 10.0
    d = t.to_dict(items=30)
    assert d["median_s"] == 3.0 and d["per_s"] == 10.0 and d["warmup"] == 2


def test_time_it_even_repeats_median_is_the_mean_of_the_middle_two(monkeypatch):
    clock(monkeypatch, [1.0, 5.0, 2.0, 4.0])
    assert harness.time_it(lambda: None, repeats=4).median == 3.0


def test_a_function_that_times_itself_gives_its_own_seconds():
    t = harness.time_it(lambda: harness.Elapsed(0.5, "out"), repeats=3)
    assert t.times == [0.5, 0.5, 0.5] and t.result == "out"


def test_time_it_calls_sync_around_each_timed_call():
    syncs = []
    harness.time_it(lambda: None, repeats=3, warmup=1, sync=lambda: syncs.append(1))
    assert len(syncs) == 6


@pytest.mark.parametrize("repeats, warmup", [(0, 0), (-1, 0), (1, -1)])
def test_time_it_refuses_counts_that_measure_nothing(repeats, warmup):
    with pytest.raises(ValueError):
        harness.time_it(lambda: None, repeats=repeats, warmup=warmup)


def test_time_interleaved_rotates_the_order_and_keeps_each_variant_apart():
    order = []
    timings = harness.time_interleaved(
        {"a": lambda: order.append("a"), "b": lambda: order.append("b"), "c": lambda: order.append("c")}, repeats=3
    )
    assert order == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert sorted(timings) == ["a", "b", "c"] and all(t.repeats == 3 for t in timings.values())
    assert harness.spread([5.0, 1.0, 3.0]) == {"median": 3.0, "min": 1.0, "max": 5.0, "values": [5.0, 1.0, 3.0]}


def test_compare_ratio_above_one_means_ours_is_better_for_rates_and_for_times():
    rows = [
        harness.Row("translate", "sentences/s", baseline=50.0, ours=200.0),
        harness.Row("load", "s", baseline=6.0, ours=2.0, higher_is_better=False),
        harness.Row("worse", "s", baseline=1.0, ours=4.0, higher_is_better=False),
        harness.Row("nothing", "s", baseline=0.0, ours=0.0),
    ]
    ratios = [r["ratio"] for r in harness.compare(rows)]
    assert ratios[:3] == [4.0, 3.0, 0.25] and math.isnan(ratios[3])
    text = harness.table(rows[:3], baseline="fairseq", ours="contextual-mt").splitlines()
    assert len(text) == 5 and "contextual-mt vs fairseq" in text[0]
    assert text[2].split("|")[-2].strip() == "4.00x" and text[4].split("|")[-2].strip() == "0.25x"


def test_write_json_record_shape_and_atomic(tmp_path, monkeypatch):
    monkeypatch.setattr(harness.sys, "argv", ["translate_speed.py", "--repeats", "2"])
    parser = harness.add_arguments(argparse.ArgumentParser(), repeats=3, warmup=1)
    path = tmp_path / "new" / "run.json"
    args = harness.parse(parser, ["--repeats", "2", "--json", str(path)])
    timing = harness.summarize([2.0, 1.0, 3.0])
    rec = harness.finish(
        args,
        "translate_speed",
        {"ours": timing, "rows": [harness.Row("x", "s", 2.0, 1.0, False)], "counts": {"train": np.int64(3)}},
    )
    on_disk = json.loads(path.read_text())
    assert on_disk == json.loads(json.dumps(rec))
    assert set(on_disk) == {"benchmark", "command", "date", "machine", "arguments", "results"}
    assert on_disk["benchmark"] == "translate_speed"
    assert on_disk["command"].endswith("-m bench.translate_speed --repeats 2")
    assert on_disk["arguments"] == {"repeats": 2, "warmup": 1}  # --json itself is not an argument of the run
    assert on_disk["results"]["ours"]["median_s"] == 2.0 and on_disk["results"]["ours"]["times_s"] == [2.0, 1.0, 3.0]
    assert on_disk["results"]["rows"][0]["ratio"] == 2.0
    assert on_disk["results"]["counts"] == {"train": 3}  # NumPy numbers made plain
    machine = on_disk["machine"]
    assert machine["cores"] == os.cpu_count() and machine["python"] and machine["cpu"]
    assert "torch" in machine and "cuda" in machine
    assert [p.name for p in path.parent.iterdir()] == ["run.json"]  # no temporary left beside it


def test_json_that_cannot_be_written_stops_before_any_work(tmp_path, capsys):
    parser = harness.add_arguments(argparse.ArgumentParser())
    with pytest.raises(SystemExit) as e:
        harness.parse(parser, ["--json", str(tmp_path)])
    assert "is a directory" in str(e.value.code)
    with pytest.raises(SystemExit):
        harness.parse(parser, ["--repeats", "0"])
    assert "--repeats must be at least 1" in capsys.readouterr().err


def test_out_is_the_older_name_of_json():
    args = harness.parse(harness.add_arguments(argparse.ArgumentParser()), ["--out", "x.json"])
    assert args.json == "x.json"
