"""``bench/studies/option_walk.py`` (issue 52, point 3): what it counts, on a tree small enough to
count by hand, and the two stages' walks held to the issue's target (at most 3 climbs each)."""

import os

import pytest

from bench.studies.option_walk import walk_stage

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FILES = {
    "tests/test_architecture.py": (
        'FLOORS = (("contextual_mt",), ("contextual_mt.pipeline",), ("contextual_mt.cli",))\n'
    ),
    "contextual_mt/__init__.py": "",
    "contextual_mt/lib.py": (
        "class Error(Exception):\n    pass\n\n\n"
        "def hint(options):\n    return options.x\n\n\n"
        "def check(options):\n    return options\n\n\n"
        "def work(checked):\n    return checked\n"
    ),
    "contextual_mt/pipeline/__init__.py": "",
    "contextual_mt/pipeline/stage.py": (
        "from contextual_mt.lib import Error, check, hint, work\n\n\n"
        "def run_stage(options):\n"
        "    if not options.ok:\n"
        "        raise Error(hint(options))\n"
        "    checked = check(options)\n"
        "    return work(checked)\n"
    ),
    "contextual_mt/cli/__init__.py": "",
    "contextual_mt/cli/pipeline/__init__.py": "",
    "contextual_mt/cli/pipeline/run.py": (
        "from contextual_mt.pipeline.stage import run_stage\n\n\n"
        "def attribute(options):\n    run_stage(options)\n    return 0\n"
    ),
}


def test_a_climb_is_a_second_call_down_and_a_raised_error_is_neither(tmp_path):
    for path, text in FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    walk = walk_stage(str(tmp_path), "attribute")
    # run_stage: check, then work given check's result (1 climb, 2 returns); the error's class
    # and its message's helper, inside the raise, are not walked
    assert (walk["climbs"], walk["returns"], walk["crossing_calls"]) == (1, 2, 3)
    assert not any("Error" in call or "hint" in call for call in walk["calls"])


@pytest.mark.parametrize("stage", ["attribute", "muda-eval"])
def test_the_stages_options_climb_at_most_three_times(stage):
    walk = walk_stage(ROOT, stage)
    assert walk["climbs"] <= 3, "\n".join(walk["calls"])
