"""The documentation's figures, example outputs and reference parts (README.md and every page under
docs/) are those of the committed run (docs/examples/run.json and the demo's results file
docs/examples/demo.json) and of the code (the parsers, the Makefiles), rendered by
docs/examples/refresh.py: none typed, none stale, each shown somewhere."""

import importlib.util
import json
import os
import shlex

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
    } | {"example:demo", "example:supported-models"} | {
        f"example:{way}" for way in refresh.WAYS
    }  # the demo's table; the model zoo's (supported_models.py)
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


def test_no_figure_marker_starts_a_line_and_refresh_refuses_one(generated, pages):
    """A figure's marker at the start of a line opens an HTML block (CommonMark and the site's
    Markdown): the sentence around it is split (tests/test_docs_render.py renders the pages)."""
    assert {name: refresh.misplaced(text) for name, text in pages.items() if refresh.misplaced(text)} == {}
    key = "figure:demo-contrastive"
    readme = pages["README.md"]
    wrapped = readme.replace(f"(accuracy <!-- {key} -->", f"(accuracy\n<!-- {key} -->", 1)
    assert wrapped != readme
    line = wrapped[: wrapped.index(f"\n<!-- {key} -->")].count("\n") + 2
    with pytest.raises(SystemExit, match=rf"^error: README.md:{line}: a figure's marker starts the line"):
        refresh.rewrite(wrapped, generated)
    with pytest.raises(SystemExit, match="figure demo-contrastive is more than one line"):
        refresh.rewrite(readme, {**generated, key: "1.000\n(of 708)"})


def option(command: str, flag: str):
    """The values a command gives an option (the words after it up to the next option)."""
    words = shlex.split(command.replace("\\\n", " "))
    values = []
    for word in words[words.index(flag) + 1 :]:
        if word.startswith("--"):
            break
        values.append(word)
    return values


EXAMPLE = {e["id"]: e for e in refresh.EXAMPLES}


def test_the_score_example_scores_a_file_the_demo_makes(committed):
    """The `score` reference page's example can be run after `make demo`: its hypothesis is the
    context model's translation the demo wrote (its results file names it)."""
    from contextual_mt.pipeline.layout import SYSTEMS, eval_paths

    _, demo = committed
    context = dict(zip(SYSTEMS, eval_paths(None).translations, strict=True))["context"]
    assert option(EXAMPLE["score"]["commands"][0], "--hyp") == [context]
    assert demo["context"]["output"].endswith(context)  # where the recorded demo wrote it


def test_the_muda_eval_example_is_what_make_muda_eval_runs():
    """docs/explanations/muda.md says `make muda-eval` runs exactly its example: the same systems,
    lexicon and outputs as the demo pair's muda-eval stage."""
    from contextual_mt.pipeline.layout import eval_paths, muda_folder, reference_tags
    from contextual_mt.pipeline.muda_eval import MudaEvalOptions

    stage = MudaEvalOptions(None)
    command = EXAMPLE["muda-eval"]["commands"][0]
    assert tuple(option(command, "--hyps")) == stage.hyps and len(stage.hyps) == 3
    assert ["--lexicon", *option(command, "--lexicon")] == shlex.split(stage.muda_args)
    paths = eval_paths(None)
    assert option(command, "--ref-tags") == [reference_tags(paths)]
    assert [option(command, f"--{k}")[0] for k in ("output", "table", "plot")] == [
        os.path.join(muda_folder(paths), f"eval.{ext}") for ext in ("json", "txt", "png")
    ]


def test_the_pages_figures_on_pcxmi_and_attribution_are_the_runs(committed, generated):
    """cxmi.md's P-CXMI of the agreeing verbs is the report's printed mean; attribution.md's
    figures on the planted tokens are the recorded study's, and its selected tokens the attribute
    example's: a study and an example of different runs are refused."""
    run, _ = committed
    report = [x for lines in run["examples"]["report"]["outputs"] for x in lines]
    agreement = next(x for x in report if x.strip().startswith("formality-agreement"))
    assert f"mean P-CXMI {generated['figure:pcxmi-agreement'].replace(chr(0x2212), '-')} nats" in agreement
    attribute = run["examples"]["attribute"]["outputs"][0][0]
    assert attribute.startswith(f"1644 sentences, {generated['figure:attribution-corpus-selected']} of ")
    other = json.loads(json.dumps(run))
    other["examples"]["attribute"]["printed"][0][0] = attribute.replace(
        f" {generated['figure:attribution-corpus-selected']} of ", " 1 of "
    )
    with pytest.raises(SystemExit, match=r"the attribution study selected \d+ tokens, the attribute example 1:"):
        refresh.figures(refresh.load(refresh.DEMO), other)
    assert refresh.span([0.92, 0.951]) == "92\u201395%" and refresh.span([1.0, 1.0, 1.0], 3, 1.0, "") == "1.000"


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
