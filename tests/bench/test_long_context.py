"""bench.long_context's context step on a tiny model (CPU, seconds): its record holds what the
GPU call's summary reads, the document reads the context asked for, and the summary renders it.
A GPU comes with one call of ~8 minutes: a missing field found there costs the call."""

import json

from bench import gpu_measurements, long_context

TINY = ["--hidden", "32", "--layers", "1", "--heads", "2", "--kv-heads", "1", "--ffn", "64", "--vocab", "600"]


def test_the_context_record_has_what_the_summary_reads(tmp_path):
    model, out = tmp_path / "llm", tmp_path / "out"
    out.mkdir()
    build = ["--part", "build", "--model", str(model), "--device", "cpu", *TINY, "--positions", "4096"]
    assert long_context.main([*build, "--json", str(out / "llm_build.json")]) == 0
    context = ["--part", "context", "--model", str(model), "--device", "cpu", "--contexts", "96"]
    context += ["--context-sentences", "2", "--cti-top-k", "1", "--work", str(tmp_path / "w")]
    assert long_context.main([*context, "--json", str(out / "long_context.json")]) == 0

    record = json.loads((out / "long_context.json").read_text())
    assert record["benchmark"] == "long_context" and record["results"]["complete"]
    (run,) = record["results"]["runs"]
    assert run["lines"] == 3  # K = 2 context sentences and the last line
    assert run["models_loaded"] == 1  # cxmi and attribute share the weights: the peak memory holds one copy
    # the last line reads at least the context asked (2K lines of >= 96 / 2K tokens), plus the template
    lengths = run["last_line_tokens"]
    assert lengths["context"] >= 96 and lengths["with_context"] == lengths["without"] + lengths["context"]
    pcxmi = run["pcxmi"]
    assert pcxmi["scored_tokens"] > 0 and pcxmi["batches"]
    assert all(rows >= 1 and longest >= lengths["without"] for rows, longest in pcxmi["batches"])
    assert max(longest for _, longest in pcxmi["batches"]) == lengths["with_context"]  # the last line, with context
    assert run["floor"]["seconds"] > 0 and run["floor"]["pcxmi_over_floor"] > 0
    attribute = run["attribute"]
    assert 1 <= attribute["selected_tokens"] <= 2  # --cti-top-k 1 of each of the 2 lines with context
    assert attribute["passes"]["forwards"] >= 1 and attribute["passes"]["backward"] >= 1

    (out / "steps.txt").write_text("| long-context | ok | 1 |\n")
    assert gpu_measurements.main(["summary", str(out)]) == 0
    summary = (out / "summary.md").read_text()
    assert "## The LLM: " in summary and "## Long context (cpu, bfloat16" in summary
    assert f"| {lengths['context']} | " in summary
