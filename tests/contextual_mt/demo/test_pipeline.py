"""The demo is an ordinary run of the study on the pair fr under its folder: the stages' own
folders and records, no folders of its own."""

import pytest

from contextual_mt.demo.pipeline import DemoOptions, demo_layout, run_demo
from contextual_mt.errors import InputError
from contextual_mt.pipeline.layout import PairLayout, eval_paths


def test_the_demo_is_the_pair_fr_under_its_folder():
    assert demo_layout("demo") == PairLayout("fr", "demo")
    p, layout = eval_paths(None), PairLayout("fr", "demo")
    assert (p.data, p.checkpoint, p.results) == (layout.data, layout.checkpoint("context"), layout.results)
    assert p.translations == tuple(layout.translation(s) for s in ("sentence", "context", "context-gold"))
    assert p.annotations == "demo/corpus" and p.pair == "demo"
    assert eval_paths("fr", "demo").annotations == layout.data


@pytest.mark.parametrize("old", ["data-bin", "spm", "outputs"])
def test_a_demo_folder_of_an_old_layout_is_refused_before_anything_is_written(tmp_path, old):
    (tmp_path / old).mkdir()
    with pytest.raises(InputError, match=f"holds {old}/"):
        run_demo(DemoOptions(str(tmp_path)))
    assert sorted(p.name for p in tmp_path.iterdir()) == [old]


def test_the_two_models_train_side_by_side_and_a_failure_is_raised_once_the_other_ended(monkeypatch):
    import threading
    import time

    from contextual_mt.demo.pipeline import train_side_by_side
    from contextual_mt.pipeline import train
    from contextual_mt.pipeline.train import TrainOptions

    spans, both_running = {}, threading.Barrier(2, timeout=10)

    def fake_train(o):
        start = time.time()
        both_running.wait()  # times out (BrokenBarrierError) unless the other model trains at once
        time.sleep(0.3 if o.model == "sentence" else 0.1)
        spans[o.model] = (start, time.time())
        if o.model == "context":
            raise InputError("training the context model failed")
        return {}

    monkeypatch.setattr(train, "train_model", fake_train)
    options = [TrainOptions("fr", m, preset="demo", root="unused", gpus=0) for m in ("sentence", "context")]
    then = []
    with pytest.raises(InputError, match="context model failed"):
        train_side_by_side(options, then={"sentence": lambda: then.append(time.time())})
    assert set(spans) == {"sentence", "context"}  # the sentence model's run was not cut short
    assert len(then) == 1 and then[0] >= spans["sentence"][1]  # after its model was trained


def test_the_demo_runs_end_to_end_and_records_where_its_time_goes(tmp_path):
    import json
    import os

    from contextual_mt.demo.pipeline import demo_results

    work = tmp_path / "demo"
    results = run_demo(
        DemoOptions(str(work), train_docs=12, test_docs=3, sentence_epochs=1, context_epochs=1, valid_docs=2)
    )
    with open(demo_results(str(work))) as f:
        assert json.load(f) == results
    assert set(results["time"]) == {"corpus", "data", "train", "translate", "score", "contrastive"}
    assert results["time"]["train"]["sentence_wall_s"] > 0 and results["time"]["train"]["context_wall_s"] > 0
    assert {"sentence", "context", "context-0"} <= set(results["contrastive"])
    layout = PairLayout("fr", str(work))
    stamps = {m: os.path.getmtime(layout.checkpoint(m)) for m in ("sentence", "context")}
    again = run_demo(
        DemoOptions(str(work), train_docs=12, test_docs=3, sentence_epochs=1, context_epochs=1, valid_docs=2)
    )
    assert {m: os.path.getmtime(layout.checkpoint(m)) for m in ("sentence", "context")} == stamps  # nothing retrained
    assert again["contrastive"] == results["contrastive"]
