"""The demo is an ordinary run of the study on the pair fr under its folder: the stages' own
folders and records, no folders of its own."""

import pytest

from contextual_mt.demo.pipeline import demo_layout, run_demo
from contextual_mt.errors import ContextualMTError
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
    with pytest.raises(ContextualMTError, match=f"holds {old}/"):
        run_demo(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == [old]
