"""`make muda-eval` checks every model its steps need before running either (the reference's
`muda tag`, the systems' annotation in `muda eval`): one error listing all missing ones, the
`muda download` command that gets them, and the Make variables of the pre-computed way."""

import os

import pytest

from contextual_mt.errors import InputError
from contextual_mt.pipeline.muda_eval import MudaEvalOptions, check_models, run_muda_eval


@pytest.fixture
def pair(tmp_path, monkeypatch):
    monkeypatch.setenv("STANZA_RESOURCES_DIR", str(tmp_path / "no_stanza"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no_hf"))
    data = tmp_path / "data" / "de"
    data.mkdir(parents=True)
    for name, text in (("test.en", "Hello .\n"), ("test.de", "Hallo .\n"), ("test.docids", "d1\n")):
        (data / name).write_text(text)
    hyp = tmp_path / "sentence.test.de"
    hyp.write_text("Hallo .\n")
    return tmp_path, data, str(hyp)


def test_every_missing_model_in_one_error(pair):
    root, data, hyp = pair
    o = MudaEvalOptions("de", str(root), hyps=[hyp])
    with pytest.raises(InputError) as e:
        run_muda_eval(o)
    message = str(e.value)
    assert "\n" not in message and message.startswith("make muda-eval LANG=de needs models not on this machine: ")
    for needle in (
        "stanza en (tokenize,pos,lemma,depparse,coref)",
        "stanza de (tokenize,pos,lemma)",
        "aligner bert-base-multilingual-cased",
        "'muda download --tgt-lang de'",
        "MUDA_TAG_ARGS=",
        f"test.en.conllu, test.de.conllu, test.align in {data}",
        'MUDA_ARGS="--lexicon',
    ):
        assert needle in message, needle
    assert not (root / "results").exists() or not any((root / "results").rglob("*.json"))


def test_make_testset_names_itself_when_models_are_missing(pair):
    """Issue 50.6: `make testset` tags the reference with muda-eval's step; its error names the
    target that was run, not `make muda-eval`."""
    from contextual_mt.pipeline.testset_stage import TestsetStageOptions, run_testset_stage

    root, _data, _hyp = pair
    with pytest.raises(InputError) as e:
        run_testset_stage(TestsetStageOptions("de", str(root)))
    assert str(e.value).startswith("make testset LANG=de needs models not on this machine: "), str(e.value)
    assert "stanza de (tokenize,pos,lemma)" in str(e.value)


def test_pre_computed_annotations_and_a_lexicon_need_no_model(pair):
    root, _data, hyp = pair
    o = MudaEvalOptions(
        "de",
        str(root),
        hyps=[hyp],
        muda_args="--lexicon a b c",
        muda_tag_args="--src-conllu x --tgt-conllu y --alignments z",
    )
    check_models(o)  # nothing missing: no model needed
    o = MudaEvalOptions(
        "de", str(root), hyps=[hyp], muda_args="--lexicon a b c", muda_tag_args="--src-conllu x --tgt-conllu y"
    )
    with pytest.raises(
        InputError,
        match=r"needs models not on this machine: aligner "
        r"bert-base-multilingual-cased; get it with 'muda download "
        r"--tgt-lang de --no-source --no-target'",
    ):
        check_models(o)


def test_muda_args_are_parsed_once_when_the_options_are_built(pair, monkeypatch):
    """MUDA_TAG_ARGS and MUDA_ARGS become muda's options objects once, when the stage's options are
    built; the steps run those objects (before, a run parsed them 3 and 2 times)."""
    from contextual_mt.pipeline import muda_eval

    root, _data, hyp = pair
    for name in ("a", "b", "c", "x", "y", "z"):
        (root / name).write_text(name)
    parsed, ran = [], []
    parse = muda_eval.parse_words
    monkeypatch.setattr(
        muda_eval, "parse_words", lambda cls, *a, **k: parsed.append(cls.__name__) or parse(cls, *a, **k)
    )

    def run(options):  # muda's run: writes what it would write
        ran.append(options)
        for path in (getattr(options, f, None) for f in ("dump_tags", "output", "table", "plot")):
            if path:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write("made\n")

    monkeypatch.setattr(muda_eval, "_muda", run)
    files = " ".join(str(root / n) for n in "abc")
    o = MudaEvalOptions(
        "de",
        str(root),
        hyps=[hyp],
        muda_args=f"--lexicon {files}",
        muda_tag_args="--src-conllu x --tgt-conllu y --alignments z",
    )
    assert sorted(parsed) == ["EvalOptions", "TagOptions"]
    run_muda_eval(o)
    assert sorted(parsed) == ["EvalOptions", "TagOptions"]  # not again while the stage runs
    assert ran == [o.tag, o.evaluate]
