"""The documentation's figures, example outputs and reference parts (README.md and every page under
docs/) are those of the committed run (docs/examples/run.json and the demo's results file
docs/examples/demo.json) and of the code (the parsers, the Makefiles), rendered by
docs/examples/refresh.py: none typed, none stale, each shown somewhere."""

import importlib.util
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("refresh_examples", os.path.join(ROOT, "docs", "examples", "refresh.py"))
refresh = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(refresh)


@pytest.fixture(scope="module")
def committed():
    return refresh.load(refresh.RUN), refresh.load(refresh.DEMO)


@pytest.fixture(scope="module")
def generated(committed):
    return refresh.blocks(*committed)


@pytest.fixture(scope="module")
def pages():
    out = {}
    for path in refresh.pages():
        with open(path, encoding="utf-8") as f:
            out[os.path.relpath(path, ROOT)] = f.read()
    return out


@pytest.fixture(scope="module")
def readme(pages):
    return pages["README.md"]


def test_every_generated_part_of_every_page_is_the_committed_runs_and_the_codes(generated, pages):
    assert {
        name: refresh.stale(text, generated) for name, text in pages.items() if refresh.stale(text, generated)
    } == {}
    assert refresh.missing(list(pages.values()), generated) == []
    # every example the script runs is shown, with every command it ran
    assert {k for k in generated if k.startswith("example:")} == {
        f"example:{e['id']}" for e in refresh.EXAMPLES if e.get("block", True)
    } | {"example:demo", "example:supported-models"}  # the demo's table; the model zoo's (supported_models.py)
    run = refresh.load(refresh.RUN)
    assert [run["examples"][e["id"]]["commands"] for e in refresh.EXAMPLES] == [e["commands"] for e in refresh.EXAMPLES]


def test_the_demo_table_is_rendered_from_the_results_file(committed, readme):
    _, demo = committed
    table = refresh.marked(readme)["example:demo"]
    assert f"{demo['context']['bleu']:6.2f}" in table and f"{demo['contrastive']['context']['accuracy']:6.3f}" in table


def test_a_figure_typed_over_or_a_changed_result_is_found(committed, readme):
    run, demo = committed
    generated = refresh.blocks(run, demo, reference=False)
    key = "figure:demo-context-bleu"
    typed = readme.replace(f"<!-- {key} -->{generated[key]}<!-- /{key} -->", f"<!-- {key} -->99.99<!-- /{key} -->")
    assert typed != readme and refresh.stale(typed, generated) == [key]
    changed = json.loads(json.dumps(demo))
    changed["sentence"]["bleu"] += 1
    assert set(refresh.stale(readme, refresh.blocks(run, changed, reference=False))) == {
        "example:demo",
        "figure:demo-sentence-bleu",
    }
    # a marker the script does not make; a generated part no page shows
    assert refresh.stale(readme + "<!-- figure:nothing -->1<!-- /figure:nothing -->", generated) == ["figure:nothing"]
    assert "figure:nowhere" in refresh.missing([readme], {**generated, "figure:nowhere": "1"})
    assert refresh.missing([readme], refresh.marked(readme)) == []


def test_a_page_whose_options_drifted_from_the_parser_is_found(generated, pages):
    name = "docs/reference/contextual-mt/translate.md"
    key = "cli:contextual-mt-translate"
    head, usage = pages[name].split(f"<!-- {key} -->")
    drifted = head + f"<!-- {key} -->" + usage.replace("--beam", "--beam-size", 1)
    assert drifted != pages[name] and refresh.stale(drifted, generated) == [key]


def test_shown_lines_drop_progress_bars_and_logs():
    text = (
        "translating:  50%|#####     | 1/2\rtranslating: 100%|##########| 2/2\n"
        "2026-11-26 10:00:00 | INFO | fairseq | loading\n[demo] step\nBLEU 1.0 | chrF 2.0\n\n"
    )
    assert refresh.printed_lines(text) == ["BLEU 1.0 | chrF 2.0"]
