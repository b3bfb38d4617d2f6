"""`contextual-mt align` with a model's link score (--hf-model, --source): the chain runs, the
model scores the links (one record each), and its pieces are checked before the model loads."""

from __future__ import annotations

import json
import logging
import re

import pytest

from contextual_mt.backends.hf.options import HFModelOptions
from contextual_mt.cli import main
from contextual_mt.contrastive.link_model import link_model
from tests.hf_models import EN, FR

IDS = ["a"] * 6 + ["b"] * 6


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def documents(path, lines):
    records = [{"doc": d, "text": " ".join(t for t, i in zip(lines, IDS, strict=True) if i == d)} for d in ("a", "b")]
    return write(path, [json.dumps(r, ensure_ascii=False) for r in records])


def test_the_link_model_is_the_models_mean_token_probability(marian):
    spec = HFModelOptions(str(marian), source_context_size=0, target_context_size=0)
    score = link_model(spec, progress=False)
    pairs = [(EN[0], FR[0]), (EN[0], FR[0] + " " + FR[1]), (EN[2], FR[2])]
    sims = score(pairs)
    assert len(sims) == 3 and all(0.0 < s <= 1.0 for s in sims)
    assert score(pairs[:1]) == pytest.approx(sims[:1])  # the same pair scores alike, alone or in a batch


def test_align_with_a_model_runs_and_keeps_a_line_aligned_output_whole(tmp_path, marian):
    src, ref = write(tmp_path / "src.en", EN), write(tmp_path / "ref.fr", FR)
    ids = write(tmp_path / "ids", IDS)
    out, alignment = tmp_path / "out.fr", tmp_path / "alignment.jsonl"
    argv = ["align", "--hyp-documents", documents(tmp_path / "docs.jsonl", FR), "--docids", ids, "--pivot", ref]
    argv += ["--output", str(out), "--alignment", str(alignment), "--source", src, "--hf-model", str(marian), "--quiet"]
    assert main(argv) == 0
    assert out.read_text(encoding="utf-8").splitlines() == FR  # the pivot is the output: every link 1-1
    records = [json.loads(r) for r in alignment.read_text().splitlines()]
    assert [r["link"] for r in records] == ["1-1"] * 12


@pytest.mark.parametrize(
    "drop, add, expected",
    [
        ("--hf-model", [], "--source goes with a model"),
        ("--source", [], "--source goes with a model"),
        (None, ["--batch-size", "0"], "--batch-size must be at least 1"),
    ],
)
def test_the_model_options_are_checked_before_anything_loads(tmp_path, capsys, drop, add, expected):
    src, ref = write(tmp_path / "src.en", EN), write(tmp_path / "ref.fr", FR)
    ids = write(tmp_path / "ids", IDS)
    argv = ["align", "--hyp-documents", documents(tmp_path / "docs.jsonl", FR), "--docids", ids, "--pivot", ref]
    argv += ["--output", str(tmp_path / "o"), "--alignment", str(tmp_path / "a"), "--source", src]
    argv += ["--hf-model", str(tmp_path / "no-such-model"), *add]  # never loaded: the check comes first
    if drop:
        k = argv.index(drop)
        del argv[k : k + 2]
    with pytest.raises(SystemExit) as e:
        from commandkit.console import console_run

        console_run(lambda: main(argv))
    assert e.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0]
    assert not (tmp_path / "o").exists() and not (tmp_path / "a").exists()


def test_threads_sets_torchs_cpu_threads_before_the_model_loads(tmp_path, capsys):
    """--threads (every command with a model): torch computes with that many threads; 0 is one line."""
    import torch

    from commandkit.console import console_run

    before = torch.get_num_threads()
    src, ref = write(tmp_path / "src.en", EN), write(tmp_path / "ref.fr", FR)
    argv = [
        "align",
        "--hyp-documents",
        documents(tmp_path / "docs.jsonl", FR),
        "--docids",
        write(tmp_path / "ids", IDS),
    ]
    argv += ["--pivot", ref, "--output", str(tmp_path / "o"), "--alignment", str(tmp_path / "a"), "--source", src]
    argv += ["--hf-model", str(tmp_path / "no-such-model"), "--batch-size", "0"]  # stops after the options
    try:
        with pytest.raises(SystemExit):
            console_run(lambda: main([*argv, "--threads", str(before + 1)]))  # not the default, on any machine
        assert torch.get_num_threads() == before + 1
        with pytest.raises(SystemExit) as e:
            console_run(lambda: main([*argv, "--threads", "0"]))
        assert e.value.code == 1 and "--threads must be at least 1" in capsys.readouterr().err
    finally:
        torch.set_num_threads(before)


def test_threads_past_the_cores_is_one_warning_and_past_any_machine_one_error(tmp_path, capsys, caplog, monkeypatch):
    """--threads more than the machine's cores runs, with one warning line; a number past torch's
    C int (or any machine) is refused naming the option, before torch is asked."""
    import os

    import torch

    from commandkit.console import console_run

    before = torch.get_num_threads()
    src, ref = write(tmp_path / "src.en", EN), write(tmp_path / "ref.fr", FR)
    argv = ["align", "--hyp-documents", documents(tmp_path / "docs.jsonl", FR), "--docids", write(tmp_path / "i", IDS)]
    argv += ["--pivot", ref, "--output", str(tmp_path / "o"), "--alignment", str(tmp_path / "a"), "--source", src]
    argv += ["--hf-model", str(tmp_path / "no-such-model"), "--batch-size", "0"]  # stops after the options
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    try:
        caplog.clear()
        with pytest.raises(SystemExit):
            console_run(lambda: main([*argv, "--threads", "2"]))
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert warnings == [
            "--threads 2: more than this machine's 1 CPU cores; the extra threads only compete for them"
        ]
        capsys.readouterr()
        with pytest.raises(SystemExit) as e:
            console_run(lambda: main([*argv, "--threads", "3000000000"]))
        err = capsys.readouterr().err.strip().splitlines()
        assert e.value.code == 1 and err == ["error: --threads must be at most 4096 (got 3000000000)"]
    finally:
        torch.set_num_threads(before)


@pytest.fixture(scope="module")
def short_marian(tmp_path_factory):
    """A Marian of 24 positions: every line and sentence of EN / FR fits alone (at most 20
    pieces), and many candidate links of two lines or two sentences do not."""
    from tests.hf_models import build_marian

    return build_marian(tmp_path_factory.mktemp("hf") / "marian24", max_positions=24)


def test_a_candidate_link_over_the_models_positions_is_scored_without_it(tmp_path, capsys, short_marian):
    """The aligner makes the candidate links, the user cannot split them: one the model cannot
    read is scored by chrF and the length alone, counted in the summary line; the command runs."""
    src, ref = write(tmp_path / "src.en", EN), write(tmp_path / "ref.fr", FR)
    out, alignment = tmp_path / "out.fr", tmp_path / "alignment.jsonl"
    argv = [
        "align",
        "--hyp-documents",
        documents(tmp_path / "docs.jsonl", FR),
        "--docids",
        write(tmp_path / "ids", IDS),
    ]
    argv += ["--pivot", ref, "--output", str(out), "--alignment", str(alignment), "--source", src]
    argv += ["--hf-model", str(short_marian), "--quiet"]
    assert main(argv) == 0
    assert out.read_text(encoding="utf-8").splitlines() == FR
    summary = [line for line in capsys.readouterr().err.splitlines() if line.startswith("aligned ")]
    assert len(summary) == 1
    over = re.search(r"; (\d+) candidate links? over the model's positions scored without it", summary[0])
    assert over and int(over.group(1)) > 0, summary[0]


def test_the_link_model_leaves_a_pair_it_cannot_read_unscored(short_marian):
    spec = HFModelOptions(str(short_marian), source_context_size=0, target_context_size=0)
    score = link_model(spec, progress=False)
    long_source, long_output = " ".join(EN[:3]), " ".join(FR[:3])
    sims = score([(EN[0], FR[0]), (long_source, long_output), (EN[2], FR[2])])
    assert sims[1] is None and all(0.0 < s <= 1.0 for s in (sims[0], sims[2]))
    assert score([(EN[0], FR[0])]) == pytest.approx(sims[:1])
