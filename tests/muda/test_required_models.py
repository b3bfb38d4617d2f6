"""The models a `muda tag` run needs (muda.annotators.required_models), found without loading any; the one
error listing every missing one; `muda download` with stanza's and transformers' downloads
replaced by stand-ins (no network in tests)."""

import json

import pytest

from commandkit.errors import InputError
from muda import cli, commands
from muda.annotators import download as dl
from muda.annotators.required_models import (
    DEFAULT_ALIGN_MODEL,
    SOURCE_PROCESSORS,
    TARGET_PROCESSORS,
    check_models,
    in_hf_cache,
    missing_models,
    required_models,
    stanza_files_missing,
)


def fake_stanza(folder, langs):
    """A stanza resources folder laid out as stanza.download leaves it: resources.json (with an
    alias, default packages, mwt for German, a dependency on pretrained embeddings) and the model
    files of ``langs`` only."""
    resources = {
        "en": {
            "packages": {
                "default": {
                    "tokenize": "combined",
                    "pos": "combined_charlm",
                    "lemma": "combined_nocharlm",
                    "depparse": "combined_charlm",
                    "coref": "ontonotes",
                }
            },
            "pos": {"combined_charlm": {"dependencies": [{"model": "pretrain", "package": "conll17"}]}},
        },
        "de": {
            "packages": {"default": {"tokenize": "gsd", "mwt": "gsd", "pos": "gsd_charlm", "lemma": "gsd"}},
            "pos": {
                "gsd_charlm": {
                    "dependencies": [
                        {"model": "pretrain", "package": "conll17"},
                        {"model": "forward_charlm", "package": "newswiki"},
                    ]
                }
            },
        },
        "german": {"alias": "de"},
        "url": "https://example.org/{lang}",
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "resources.json").write_text(json.dumps(resources))
    files = {
        "en": [
            "tokenize/combined",
            "pos/combined_charlm",
            "lemma/combined_nocharlm",
            "depparse/combined_charlm",
            "coref/ontonotes",
            "pretrain/conll17",
        ],
        "de": ["tokenize/gsd", "mwt/gsd", "pos/gsd_charlm", "lemma/gsd", "pretrain/conll17", "forward_charlm/newswiki"],
    }
    for lang in langs:
        for f in files[lang]:
            path = folder / lang / f"{f}.pt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x")
    return folder


def fake_hf_model(cache, name):
    snap = cache / ("models--" + name.replace("/", "--")) / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    (snap / "model.safetensors").write_bytes(b"x")


@pytest.fixture
def hf_cache(tmp_path, monkeypatch):
    cache = tmp_path / "hf"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    return cache


def test_the_models_of_a_pair(tmp_path, hf_cache):
    models = required_models("de", stanza_dir=str(tmp_path / "s"))
    assert [(m.kind, m.name, m.processors) for m in models] == [
        ("stanza", "en", SOURCE_PROCESSORS),
        ("stanza", "de", TARGET_PROCESSORS),
        ("aligner", DEFAULT_ALIGN_MODEL, ""),
    ]
    assert SOURCE_PROCESSORS == "tokenize,pos,lemma,depparse,coref" and TARGET_PROCESSORS == "tokenize,pos,lemma"
    assert [m.label for m in models] == [
        "stanza en (tokenize,pos,lemma,depparse,coref)",
        "stanza de (tokenize,pos,lemma)",
        "aligner bert-base-multilingual-cased",
    ]
    # a TED variant is the language stanza knows; the phenomena are checked, every one reads the aligned pair
    assert [m.name for m in required_models("pt-br", ["formality"], stanza_dir="x")][:2] == ["en", "pt"]
    assert len(required_models("de", ["verb_form"], stanza_dir="x")) == 3
    with pytest.raises(InputError, match="unknown phenomenon 'sarcasm'"):
        required_models("de", ["sarcasm"])
    with pytest.raises(InputError, match="unknown target language 'xx'"):
        required_models("xx")


def test_pre_computed_annotations_make_models_unnecessary(tmp_path):
    def names(**given):
        return [m.label.split(" (")[0] for m in required_models("de", stanza_dir="x", **given)]

    assert names(src_conllu="a") == ["stanza de", f"aligner {DEFAULT_ALIGN_MODEL}"]
    assert names(tgt_conllu="b") == ["stanza en", f"aligner {DEFAULT_ALIGN_MODEL}"]
    assert names(alignments="c") == ["stanza en", "stanza de"]
    assert names(src_conllu="a", tgt_conllu="b", alignments="c") == []
    assert names(lexicon=True) == []
    assert names(src_conllu="a", tgt_conllu="b", align_model="my/aligner") == ["aligner my/aligner"]


def test_one_language_present_another_missing(tmp_path, hf_cache):
    folder = fake_stanza(tmp_path / "stanza", ["en"])
    models = required_models("de", stanza_dir=str(folder))
    assert [(m.name, m.present) for m in models] == [("en", True), ("de", False), (DEFAULT_ALIGN_MODEL, False)]
    assert stanza_files_missing("de", TARGET_PROCESSORS, str(folder)) == [
        "de/tokenize/gsd.pt",
        "de/pos/gsd_charlm.pt",
        "de/pretrain/conll17.pt",
        "de/forward_charlm/newswiki.pt",
        "de/lemma/gsd.pt",
        "de/mwt/gsd.pt",
    ]
    assert stanza_files_missing("german", TARGET_PROCESSORS, str(folder))[0] == "de/tokenize/gsd.pt"  # alias
    (folder / "en" / "pretrain" / "conll17.pt").unlink()  # a dependency missing makes the language missing
    assert stanza_files_missing("en", SOURCE_PROCESSORS, str(folder)) == ["en/pretrain/conll17.pt"]
    assert stanza_files_missing("fr", TARGET_PROCESSORS, str(folder)) == ["fr"]  # unknown to resources.json
    assert stanza_files_missing("en", "tokenize", str(tmp_path / "empty")) == ["resources.json"]
    fake_stanza(folder, ["en", "de"])
    fake_hf_model(hf_cache, DEFAULT_ALIGN_MODEL)
    assert in_hf_cache(DEFAULT_ALIGN_MODEL) and not in_hf_cache("other/model")
    assert missing_models(required_models("de", stanza_dir=str(folder))) == []


def test_an_aligner_folder(tmp_path, hf_cache):
    folder = tmp_path / "aligner"
    [m] = required_models("de", src_conllu="a", tgt_conllu="b", align_model=str(folder))
    assert not m.present and not m.downloadable
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "pytorch_model.bin").write_bytes(b"x")
    [m] = required_models("de", src_conllu="a", tgt_conllu="b", align_model=str(folder))
    assert m.present


def test_check_models_lists_every_missing_model_in_one_line(tmp_path, hf_cache):
    folder = fake_stanza(tmp_path / "stanza", ["en"])
    with pytest.raises(InputError) as e:
        check_models("muda tag", required_models("de", stanza_dir=str(folder)), "de", str(folder))
    message = str(e.value)
    assert "\n" not in message
    assert message == (
        f"muda tag needs models not on this machine: stanza de (tokenize,pos,lemma) in {folder}, aligner "
        f"bert-base-multilingual-cased; get them all with 'muda download --tgt-lang de --no-source --stanza-dir "
        f"{folder}' (needs network), or give pre-computed annotations instead (--tgt-conllu FILE --alignments FILE; "
        "docs/explanations/muda.md, 'MuDA models')"
    )
    check_models("muda tag", required_models("de", stanza_dir=str(folder), tgt_conllu="b", alignments="c"), "de")


def test_muda_tag_fails_once_listing_all_missing_models(tmp_path, hf_cache, capsys, monkeypatch):
    for name, text in (("s.en", "Hello .\n"), ("t.de", "Hallo .\n"), ("ids", "d1\n")):
        (tmp_path / name).write_text(text)
    out = tmp_path / "out" / "tags.json"
    out.parent.mkdir()
    stanza_dir = tmp_path / "no_stanza"

    def no_loading(*args, **kwargs):
        raise AssertionError("a model was loaded before the check")

    monkeypatch.setattr(commands, "_annotators", no_loading)
    rc = cli.main(
        [
            "tag",
            "--src",
            str(tmp_path / "s.en"),
            "--tgt",
            str(tmp_path / "t.de"),
            "--docids",
            str(tmp_path / "ids"),
            "--tgt-lang",
            "de",
            "--dump-tags",
            str(out),
            "--stanza-dir",
            str(stanza_dir),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and err[0].startswith("error: muda tag needs models not on this machine: ")
    for needle in (
        f"stanza en (tokenize,pos,lemma,depparse,coref) in {stanza_dir}",
        f"stanza de (tokenize,pos,lemma) in {stanza_dir}",
        "aligner bert-base-multilingual-cased",
        f"'muda download --tgt-lang de --stanza-dir {stanza_dir}'",
        "--src-conllu FILE --tgt-conllu FILE --alignments FILE",
    ):
        assert needle in err[0]
    assert list(out.parent.iterdir()) == []  # no output file, nor its summary or annotations


def test_muda_download_gets_every_missing_model(tmp_path, hf_cache, capsys, monkeypatch):
    folder = fake_stanza(tmp_path / "stanza", ["en"])
    got = []

    def stanza_stand_in(model):
        got.append(("stanza", model.name, model.processors, model.where))
        fake_stanza(folder, ["en", model.name])

    def aligner_stand_in(model):
        got.append(("aligner", model.name))
        fake_hf_model(hf_cache, model.name)

    monkeypatch.setattr(dl, "stanza_download", stanza_stand_in)
    monkeypatch.setattr(dl, "aligner_download", aligner_stand_in)
    assert cli.main(["download", "--tgt-lang", "de", "--stanza-dir", str(folder)]) == 0
    assert got == [("stanza", "de", TARGET_PROCESSORS, str(folder)), ("aligner", DEFAULT_ALIGN_MODEL)]
    printed = capsys.readouterr().out
    assert f"stanza en (tokenize,pos,lemma,depparse,coref): already in {folder}" in printed
    assert f"stanza de (tokenize,pos,lemma): got it into {folder}" in printed
    assert "3 model(s) ready for muda tag --tgt-lang de" in printed
    # the plan leaves out what is pre-computed
    plan = dl.download_plan(dl.DownloadOptions("de", stanza_dir=str(folder), no_source=True, no_aligner=True))
    assert [m.label for m in plan] == ["stanza de (tokenize,pos,lemma)"]


def test_muda_download_without_network_is_one_line(tmp_path, hf_cache, capsys, monkeypatch):
    def offline(model):
        raise OSError("Failed to resolve 'huggingface.co'\nmore detail")

    monkeypatch.setattr(dl, "stanza_download", offline)
    monkeypatch.setattr(dl, "aligner_download", offline)
    folder = tmp_path / "stanza"
    assert cli.main(["download", "--tgt-lang", "de", "--stanza-dir", str(folder), "--no-source"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"error: muda download: cannot get stanza de (tokenize,pos,lemma) (OSError: Failed to resolve "
        f"'huggingface.co'); this needs network: run it on a machine that has it and copy {folder} here"
    ]


def test_muda_eval_checks_its_models_before_reading_anything(tmp_path, hf_cache, capsys, monkeypatch):
    """Issue 38.7: `muda eval` alone had no up-front check (stanza failed on the first model it
    loaded, after the inputs were read). Now every model it will load is checked first, with the
    same one-line error as `muda tag`; what is pre-computed needs none."""
    from muda.evaluation import evaluate as evaluation

    for name, text in (("s.en", "Hello .\n"), ("r.de", "Hallo .\n"), ("h.de", "Hallo .\n"), ("ids", "d1\n")):
        (tmp_path / name).write_text(text)
    stanza_dir = tmp_path / "no_stanza"

    def too_early(*args, **kwargs):
        raise AssertionError("read or loaded before the check")

    monkeypatch.setattr(commands, "_annotators", too_early)
    monkeypatch.setattr(evaluation, "run_eval", too_early)
    base = [
        "eval",
        "--src",
        str(tmp_path / "s.en"),
        "--ref",
        str(tmp_path / "r.de"),
        "--docids",
        str(tmp_path / "ids"),
        "--tgt-lang",
        "de",
        "--hyps",
        str(tmp_path / "h.de"),
        "--stanza-dir",
        str(stanza_dir),
        "--output",
        str(tmp_path / "out.json"),
    ]
    assert cli.main(base) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: muda eval needs models not on this machine: "), err
    for needle in (
        f"stanza en (tokenize,pos,lemma,depparse,coref) in {stanza_dir}",
        f"stanza de (tokenize,pos,lemma) in {stanza_dir}",
        "aligner bert-base-multilingual-cased",
        f"'muda download --tgt-lang de --stanza-dir {stanza_dir}'",
        "--hyp-conllu",
    ):
        assert needle in err[0], needle
    assert not (tmp_path / "out.json").exists()
    # the reference's tags given with their English parse, the systems' CoNLL-U given: only the aligner
    (tmp_path / "ref.tags.json").write_text("[]\n")
    (tmp_path / "ref.tags.src.conllu").write_text("")
    assert cli.main([*base, "--ref-tags", str(tmp_path / "ref.tags.json"), "--hyp-conllu", str(tmp_path / "h.de")]) == 1
    err = capsys.readouterr().err.strip()
    assert "needs models not on this machine: aligner bert-base-multilingual-cased;" in err and "stanza" not in err
    # --lexicon: no model at all, so on to the evaluation
    lexicon = [str(tmp_path / "s.en"), str(tmp_path / "r.de"), str(tmp_path / "ids")]
    with pytest.raises(AssertionError, match="before the check"):
        cli.main([*base, "--lexicon", *lexicon])
