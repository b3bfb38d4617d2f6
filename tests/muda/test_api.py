"""muda.api: ``muda tag`` and ``muda eval`` as functions, on the options classes the command lines
are generated from: the same files as the commands, their summary and result returned."""

import json
from dataclasses import replace

import pytest

from commandkit.errors import InputError
from muda import api
from tests.muda.helpers import eval_args, muda, tag_args


def test_tag_writes_what_muda_tag_writes_and_returns_its_summary(demo, tmp_path):
    summary = api.tag(
        src=str(demo / "test.en"), tgt=str(demo / "test.fr"), docids=str(demo / "test.docids"), tgt_lang="fr",
        dump_tags=str(tmp_path / "api.json"), src_conllu=str(demo / "test.en.conllu"),
        tgt_conllu=str(demo / "test.fr.conllu"), alignments=str(demo / "test.align"),
    )  # fmt: skip
    proc = muda(*tag_args(demo, tmp_path / "cli.json"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "api.json").read_text() == (tmp_path / "cli.json").read_text()
    counts = ", ".join(f"{p} {n}" for p, n in summary["tags"].items())
    assert counts in proc.stdout and summary["sentences"] > 0


def test_evaluate_returns_the_result_muda_eval_writes(demo, tmp_path):
    lexicon = [str(demo / f) for f in ("train.en.conllu", "train.fr.conllu", "train.align")]
    result = api.evaluate(
        src=str(demo / "test.en"), ref=str(demo / "test.fr"), docids=str(demo / "test.docids"), tgt_lang="fr",
        src_conllu=str(demo / "test.en.conllu"), ref_conllu=str(demo / "test.fr.conllu"),
        ref_alignments=str(demo / "test.align"), lexicon=lexicon, hyps=[str(demo / "sentence.txt")],
        output=str(tmp_path / "api.json"),
    )  # fmt: skip
    proc = muda(*eval_args(demo, "--hyps", demo / "sentence.txt", "--output", tmp_path / "cli.json"))
    assert proc.returncode == 0, proc.stderr
    assert result == json.loads((tmp_path / "api.json").read_text())
    cli = json.loads((tmp_path / "cli.json").read_text())
    work = {"reference_tags"}  # each run's own work directory (OUTPUT.work)
    assert {k: v for k, v in cli.items() if k not in work} == {k: v for k, v in result.items() if k not in work}


def test_an_error_is_raised_not_printed(demo, tmp_path, capsys):
    with pytest.raises(InputError, match=r"missing\.en"):
        api.tag(
            src=str(tmp_path / "missing.en"), tgt=str(demo / "test.fr"), docids=str(demo / "test.docids"),
            tgt_lang="fr", dump_tags=str(tmp_path / "t.json"), src_conllu=str(demo / "test.en.conllu"),
            tgt_conllu=str(demo / "test.fr.conllu"), alignments=str(demo / "test.align"),
        )  # fmt: skip
    assert capsys.readouterr().out == "" and not (tmp_path / "t.json").exists()
    with pytest.raises(TypeError, match="unknown options: tgt_langs"):
        api.tag(tgt_langs="fr")


def test_one_options_class_per_command_for_the_command_line_the_api_and_the_library(demo, tmp_path):
    """``muda tag``'s parser makes the tagger's own ``TagOptions`` (``muda eval``'s the
    evaluation's ``EvalOptions``), and muda.api and the library take that very object."""
    from commandkit.options import from_namespace
    from muda.cli import build_parser
    from muda.evaluation.evaluate import EvalOptions
    from muda.tagger import TagOptions, tag_files

    parser = build_parser()
    words = [*tag_args(demo, tmp_path / "cli.json"), "--lexical-min-count", "2"]
    tagging = from_namespace(TagOptions, parser.parse_args(words))
    assert (tagging.dump_tags, tagging.settings.lexical_min_count) == (str(tmp_path / "cli.json"), 2)
    summary = api.tag(tagging)
    assert summary["settings"]["lexical_min_count"] == 2
    again = tag_files(replace(tagging, dump_tags=str(tmp_path / "lib.json")))
    assert (tmp_path / "lib.json").read_text() == (tmp_path / "cli.json").read_text() and again["tags"] == summary[
        "tags"
    ]
    evaluation = from_namespace(EvalOptions, parser.parse_args(eval_args(demo, "--hyps", demo / "sentence.txt")))
    assert evaluation.align_options.language == "fr" and evaluation.pivot is None
    assert list(api.evaluate(evaluation)["systems"]) == ["sentence.txt"]
