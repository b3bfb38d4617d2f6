"""--hf-model bad input: one line naming what is wrong and how to fix it, exit status 1, no
output file; option errors come before any model is loaded."""

import json

import pytest

from contextual_mt.backends.hf.model import HFModel
from contextual_mt.backends.hf.options import HFModelOptions
from contextual_mt.backends.hf.scoring import HFScoringBackend
from contextual_mt.backends.hf.templates import load_template
from contextual_mt.cli import main
from contextual_mt.errors import InputError


def cli_error(capsys, argv, output):
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and not output.exists()
    assert len([line for line in err if line.startswith("error:")]) == 1 and "Traceback" not in "\n".join(err)
    return next(line for line in err if line.startswith("error:"))


def cxmi_argv(corpus, out, *model):
    return [
        "cxmi",
        *model,
        "--source",
        str(corpus / "src.en"),
        "--reference",
        str(corpus / "ref.fr"),
        "--docids",
        str(corpus / "docids"),
        "--output",
        str(out),
        "--quiet",
    ]


def test_missing_folder_and_uncached_name(corpus, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    out = tmp_path / "o.jsonl"
    line = cli_error(capsys, cxmi_argv(corpus, out, "--hf-model", str(tmp_path / "nowhere")), out)
    assert (
        "no such model folder, and not in the local Hugging Face cache" in line and "huggingface-cli download" in line
    )
    line = cli_error(capsys, cxmi_argv(corpus, out, "--hf-model", "Helsinki-NLP/opus-mt-en-fr"), out)
    assert line.startswith("error: Helsinki-NLP/opus-mt-en-fr: no such model folder")


def test_folder_that_is_not_a_translation_model_or_lm(corpus, tmp_path, capsys):
    from transformers import BertConfig, BertModel

    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "o.jsonl"
    assert "not a Hugging Face model folder (no config.json)" in cli_error(
        capsys, cxmi_argv(corpus, out, "--hf-model", str(empty)), out
    )
    bert = tmp_path / "bert"
    BertModel(
        BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    ).save_pretrained(bert)
    line = cli_error(capsys, cxmi_argv(corpus, out, "--hf-model", str(bert)), out)
    assert "is BertModel, not a seq2seq translation model" in line


def test_weights_of_another_model(marian, m2m, tmp_path):
    """A tokenizer whose ids exceed the model's embeddings is one line, not an IndexError."""
    import shutil

    mixed = tmp_path / "mixed"
    shutil.copytree(m2m, mixed)
    for name in ("config.json", "model.safetensors"):
        shutil.copy(marian / name, mixed / name)
    with pytest.raises(InputError, match="tokenizer and the weights of one model"):
        HFScoringBackend.open(HFModelOptions(str(mixed), src_lang="en", tgt_lang="fr"))


def test_language_codes(m2m, marian):
    with pytest.raises(InputError, match="a multilingual model; give --src-lang"):
        HFModel.load(HFModelOptions(str(m2m)))
    with pytest.raises(InputError, match=r"--tgt-lang xx: not a language code of the tokenizer .* \(it has e\.g\. af"):
        HFModel.load(HFModelOptions(str(m2m), src_lang="en", tgt_lang="xx"))
    with pytest.raises(InputError, match="no target language token >>fra<<"):
        HFModel.load(HFModelOptions(str(marian), tgt_lang="fra"))


def test_marian_multi_target_token(tmp_path):
    from tests.hf_models import build_marian

    folder = build_marian(tmp_path / "multi", marian_codes=True)
    with pytest.raises(InputError, match="translates into several languages: give --tgt-lang"):
        HFModel.load(HFModelOptions(str(folder)))
    backend = HFScoringBackend.open(HFModelOptions(str(folder), tgt_lang="fra"))
    backend.load_pairs([], where=str)
    tok = backend.hf.tokenizer
    assert tok.convert_ids_to_tokens(backend.layout.source_ids("It is green ."))[0] == ">>fra<<"


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"prompt": "{context}", "example": "{source} {target}"}, "field 'prompt' lacks the placeholder(s) {source}"),
        ({"prompt": "{context}{source}", "example": "{source}"}, "field 'example' lacks the placeholder(s) {target}"),
        ({"prompt": "{context}{source}{lang}", "example": "{source}{target}"}, "unknown placeholder(s) {lang}"),
        (
            {"prompt": "{context}{source}", "example": "{source}{target}", "target": "x"},
            "field 'target' lacks the placeholder(s) {target}",
        ),
        ({"prompt": "{context}{source}", "example": "{source}{target}", "suffix": ""}, "unknown field(s) suffix"),
        ({"prompt": "{src_lang}{context}{source}", "example": "{source}{target}"}, "give --src-lang"),
        ({"prompt": "{context}{source", "example": "{source}{target}"}, "bad braces"),
    ],
)
def test_template_without_its_placeholders_fails_before_the_model(
    spec, message, gpt2, corpus, tmp_path, capsys, monkeypatch
):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(spec))
    monkeypatch.setattr(HFModel, "load", lambda *a: pytest.fail("the model was loaded before the error"))
    out = tmp_path / "o.jsonl"
    line = cli_error(capsys, cxmi_argv(corpus, out, "--hf-model", str(gpt2), "--prompt-template", str(path)), out)
    assert line.startswith(f"error: {path}: ") and message in line


def test_template_files_and_names(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  'prompt': 1\n}")
    with pytest.raises(InputError, match=r"bad.json:2: not JSON"):
        load_template(str(bad))
    with pytest.raises(InputError, match=r"prompt template not found .* plain, chat"):
        load_template(str(tmp_path / "none.json"))
    with pytest.raises(InputError, match="names the language"):
        load_template("plain")
    t = load_template("plain", "English", "French")
    assert (
        t.render_prompt("b", [("a", "A")])
        == "Translate from English to French.\nEnglish: a\nFrench: A\nEnglish: b\nFrench:"
    )


def test_lm_options(gpt2, gpt2_chat):
    with pytest.raises(InputError, match="without a chat template: give --src-lang and --tgt-lang"):
        HFModel.load(HFModelOptions(str(gpt2)))
    with pytest.raises(InputError, match="has no chat template"):
        HFModel.load(HFModelOptions(str(gpt2), prompt_template="chat"))
    with pytest.raises(InputError, match="the same --source-context-size and --target-context-size"):
        HFScoringBackend.open(HFModelOptions(str(gpt2_chat), source_context_size=2, target_context_size=1))


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--dtype", "float16"], "--dtype float16 needs a GPU"),
        (["--spm", "x.model"], "--spm: for fairseq checkpoints only"),
        (["--target-context-size", "-1"], "--target-context-size"),
        (["--source-context-size", "0", "--target-context-size", "0"], "CXMI is 0 by construction"),
        (["--max-tokens", "0"], "--max-tokens"),
    ],
)
def test_option_errors(extra, message, marian, corpus, tmp_path, capsys):
    out = tmp_path / "o.jsonl"
    assert message in cli_error(capsys, cxmi_argv(corpus, out, "--hf-model", str(marian), *extra), out)


def test_model_flags(corpus, tmp_path, capsys, marian):
    out = tmp_path / "o.jsonl"
    assert "--path CHECKPOINT (fairseq) or --hf-model" in cli_error(capsys, cxmi_argv(corpus, out), out)
    assert "--hf-separator: for --hf-model only" in cli_error(
        capsys, cxmi_argv(corpus, out, "--path", "x.pt", "--hf-separator", " | "), out
    )
    assert "--path CHECKPOINT (fairseq) or --hf-model" in cli_error(
        capsys, cxmi_argv(corpus, out, "--path", "x.pt", "--hf-model", str(marian)), out
    )


def test_madlad_target_language_token(hf_zoo):
    """A MADLAD-400-style T5 names the target with a <2xx> token before the source: --tgt-lang
    picks it, in one line when it is missing or unknown, and --src-lang is refused."""
    folder = str(hf_zoo("madlad"))
    with pytest.raises(InputError, match=r"translates into several languages: give --tgt-lang \(one of de, en"):
        HFModel.load(HFModelOptions(folder))
    with pytest.raises(InputError, match=r"--tgt-lang xx: the tokenizer of .* has no target token <2xx>"):
        HFModel.load(HFModelOptions(folder, tgt_lang="xx"))
    with pytest.raises(InputError, match=r"--src-lang en: .* reads any source language"):
        HFModel.load(HFModelOptions(folder, src_lang="en", tgt_lang="fr"))
    assert HFModel.load(HFModelOptions(folder, tgt_lang="fr")).marian_prefix == "<2fr> "
