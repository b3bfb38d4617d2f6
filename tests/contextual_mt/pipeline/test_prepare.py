"""The data stage: corpus -> text splits, joint sentencepiece, fairseq binaries; resumable."""

import argparse
import fcntl
import json
import os
import random
import shutil

import pytest

from commandkit.console import run_command
from contextual_mt.cli.pipeline import add_stage_parsers
from contextual_mt.errors import InputError
from contextual_mt.pipeline import prepare as prepare_module
from contextual_mt.pipeline.data_plan import STATE
from contextual_mt.pipeline.prepare import DataOptions, prepare_data
from tests.contextual_mt.pipeline.test_corpora import TED_ROWS, make_tarball, write_iwslt, write_ted

SPLITS = ("train", "valid", "test")
EN_WORDS = [
    "the",
    "a",
    "man",
    "woman",
    "house",
    "talk",
    "idea",
    "world",
    "people",
    "time",
    "we",
    "you",
    "they",
    "think",
    "know",
    "see",
]
FR_WORDS = [
    "le",
    "la",
    "homme",
    "femme",
    "maison",
    "exposé",
    "idée",
    "monde",
    "gens",
    "temps",
    "nous",
    "vous",
    "ils",
    "pense",
    "sais",
    "vois",
]


def ted_rows(seed=0, talks=12):
    """TED_ROWS plus talks of different lengths of Moses-tokenized text."""
    rng = random.Random(seed)
    rows = {k: list(v) for k, v in TED_ROWS.items()}
    for t in range(talks):
        split = "train" if t < talks - 2 else ("dev" if t == talks - 2 else "test")
        for _ in range(rng.randint(2, 12)):
            n = rng.randint(3, 12)
            en = " ".join(rng.choice(EN_WORDS) for _ in range(n)) + rng.choice([" , it &apos;s true .", " ?", " ."])
            fr = " ".join(rng.choice(FR_WORDS) for _ in range(n)) + rng.choice([" , c&apos; est vrai .", " ?", " ."])
            rows[split].append((f"gen_{t}", en, fr, "x"))
    return rows


def options(out, **kw):
    kw.setdefault("vocab_size", 150)
    kw.setdefault("workers", 1)
    return DataOptions(lang=kw.pop("lang", "fr"), output=str(out), **kw)


def mtimes(folder):
    found = {}
    for root, _dirs, files in os.walk(folder):
        for f in files:
            path = os.path.join(root, f)
            found[os.path.relpath(path, folder)] = os.stat(path).st_mtime_ns
    return found


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    base = tmp_path_factory.mktemp("prepared")
    ted = write_ted(str(base / "ted_talks"), ted_rows())
    tar = make_tarball(ted, str(base / "ted_talks.tar.gz"))
    out = base / "out"
    summary = prepare_data(options(out, ted=tar), progress=False)
    return out, summary, tar


def copy_of(prepared, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(prepared[0], out)  # copy2: mtimes kept, content the same
    return out


def test_outputs(prepared):
    out, summary, tar = prepared
    for split in SPLITS:
        src = (out / f"{split}.en").read_text().splitlines()
        tgt = (out / f"{split}.fr").read_text().splitlines()
        ids = (out / f"{split}.docids").read_text().splitlines()
        assert len(src) == len(tgt) == len(ids) == summary["splits"][split]["sentences"] > 0
        starts = [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]]
        assert len(starts) == len(set(ids)) == summary["splits"][split]["documents"]  # not interleaved
        assert (out / "bin" / f"{split}.en-fr.docids").read_text() == (out / f"{split}.docids").read_text()
        assert all(summary["splits"][split]["tokens"][lang] > 0 for lang in ("en", "fr"))
    train_en = (out / "train.en").read_text().splitlines()
    assert train_en[0] == 'it\'s a "hello, world" test.'  # detokenized
    assert "&apos;" not in (out / "train.fr").read_text() and " , " not in (out / "train.en").read_text()
    assert [summary["splits"][s]["dropped"] for s in SPLITS] == [3, 0, 1]
    dict_en = (out / "bin" / "dict.en.txt").read_text()
    assert dict_en == (out / "bin" / "dict.fr.txt").read_text()  # joined
    assert dict_en.splitlines()[-2:] == ["<brk> 1", "<mask> 1"]
    assert not (out / prepare_module.SCRATCH).exists()
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk == summary
    assert summary["input"]["kind"] == "ted" and summary["input"]["path"] == tar
    assert summary["input"]["detokenized"]["languages"] == {"en": "en", "fr": "fr"}
    assert "sacremoses" in summary["input"]["detokenized"]["tool"]
    spm = summary["spm"]
    assert (spm["model_type"], spm["vocab_size"], spm["hard_vocab_limit"], spm["character_coverage"]) == (
        "bpe",
        150,
        False,
        1.0,
    )
    assert spm["trained_on"] == ["train.en", "train.fr"] and spm["training_sentences"] > 0
    assert summary["bin"]["context_symbols"] == ["<brk>", "<mask>"]
    assert len(summary["fingerprint"]) == 64
    assert set(summary["seconds"]) == {"read", "detokenize", "spm_train", "encode", "binarize"}


def test_fairseq_task_loads_the_binaries(prepared):
    import sentencepiece as spm

    from contextual_mt.backends.fairseq.tasks.document_translation import (
        DocumentTranslationConfig,
        DocumentTranslationTask,
    )

    out, summary, _ = prepared
    cfg = DocumentTranslationConfig(
        data=str(out / "bin"), source_lang="en", target_lang="fr", source_context_size=1, target_context_size=1
    )
    cfg.seed, cfg.dataset_impl, cfg.train_subset = 1, None, "train"
    task = DocumentTranslationTask.setup_task(cfg)
    sp = spm.SentencePieceProcessor(model_file=str(out / "spm.model"))
    for split in SPLITS:
        task.load_dataset(split)
        assert len(task.datasets[split]) == summary["splits"][split]["sentences"]
    for n in (0, 5):  # the binaries decode back to the text
        line = task.tgt_dict.string(task.datasets["train"].tgt[n])
        assert sp.decode(line.split()) == (out / "train.fr").read_text().splitlines()[n]


def test_dictionary_holds_every_piece_in_fairseqs_order(prepared):
    """A vocabulary larger than the data produces: every piece of spm.model is in the dictionary
    (else it would be <unk> at translation time); the pieces the training text produces come
    first, in the order fairseq-preprocess gives them (its binaries, and models, unchanged)."""
    import sentencepiece as spm
    from fairseq.data import Dictionary

    from contextual_mt.backends.fairseq.codec import SentencePieceCodec, model_pieces

    out, summary, _ = prepared
    sp = spm.SentencePieceProcessor(model_file=str(out / "spm.model"))
    dictionary = Dictionary.load(str(out / "bin" / "dict.en.txt"))
    assert all(piece in dictionary.indices for piece in model_pieces(sp))
    assert summary["bin"]["pieces_not_in_train"] > 0  # the tiny corpus does not produce them all
    SentencePieceCodec(dictionary, str(out / "spm.model"), "dict.en.txt")  # the loaders' check passes
    built = Dictionary()  # what fairseq-preprocess --joined-dictionary builds from the training text
    for lang in ("en", "fr"):
        for line in (out / f"train.{lang}").read_text().splitlines():
            for token in " ".join(sp.encode(line, out_type=str)).split():
                built.add_symbol(token)
    built.finalize(padding_factor=1)
    assert dictionary.symbols[: len(built)] == built.symbols
    assert len(dictionary) % 8 == 2  # padded as fairseq pads, then <brk> and <mask>


def test_rerun_skips_every_step(prepared, tmp_path):
    out = copy_of(prepared, tmp_path)
    before = mtimes(out)
    summary = prepare_data(options(out, ted=prepared[2]), progress=False)
    assert mtimes(out) == before  # nothing rewritten, summary.json included
    assert summary == prepared[1]


def test_a_folder_prepared_by_an_earlier_version_is_up_to_date_once_migrated(prepared, tmp_path):
    """Its record in the earlier shape and place (.prepare-state.json: format, fingerprint, settings,
    steps, versions): refused in one line naming `pipeline migrate`; migrated, every step is kept,
    the record rewritten into this version's (.stage/data.json)."""
    from contextual_mt.pipeline.migrate import DATA_STATE as LEGACY_DATA_STATE
    from contextual_mt.pipeline.migrate import migrate

    out = copy_of(prepared, tmp_path)
    record = json.loads((out / STATE).read_text())
    earlier = {k: record[k] for k in ("format", "fingerprint", "settings", "steps", "versions")}
    (out / LEGACY_DATA_STATE).write_text(json.dumps(earlier, indent=1) + "\n")
    (out / STATE).unlink()
    (out / STATE).parent.rmdir()
    before = mtimes(out)
    with pytest.raises(InputError, match=rf"{LEGACY_DATA_STATE}: a record of an earlier version; run .*migrate"):
        prepare_data(options(out, ted=prepared[2]), progress=False)
    assert mtimes(out) == before
    assert migrate(str(out)) == ([str(out / STATE)], [])
    summary = prepare_data(options(out, ted=prepared[2]), progress=False)
    after = mtimes(out)
    assert summary == prepared[1]
    assert {k: v for k, v in after.items() if k != STATE} == {
        k: v for k, v in before.items() if k != LEGACY_DATA_STATE
    }  # no step redone, summary.json kept
    assert {k: json.loads((out / STATE).read_text())[k] for k in earlier} == earlier


def test_moved_input_is_the_same_input(prepared, tmp_path):
    out = copy_of(prepared, tmp_path)
    moved = str(tmp_path / "elsewhere.tar.gz")
    shutil.copyfile(prepared[2], moved)
    before = mtimes(out)
    summary = prepare_data(options(out, ted=moved), progress=False)
    assert summary["input"]["path"] == moved and summary["fingerprint"] == prepared[1]["fingerprint"]
    after = mtimes(out)
    assert {k: v for k, v in after.items() if k != "summary.json"} == {
        k: v for k, v in before.items() if k != "summary.json"
    }


def test_other_options_or_inputs_are_refused_then_overwritten(prepared, tmp_path):
    out = copy_of(prepared, tmp_path)
    before = mtimes(out)
    with pytest.raises(InputError) as e:
        prepare_data(options(out, ted=prepared[2], vocab_size=120), progress=False)
    assert "\n" not in str(e.value)
    assert "spm.vocab_size 150 -> 120" in str(e.value) and "--overwrite" in str(e.value)
    other = write_ted(str(tmp_path / "other"), ted_rows(seed=1))
    with pytest.raises(InputError, match=r"input files differ.*--overwrite"):
        prepare_data(options(out, ted=other), progress=False)
    assert mtimes(out) == before  # refused: nothing touched
    summary = prepare_data(options(out, ted=prepared[2], vocab_size=120, lang="de", overwrite=True), progress=False)
    assert summary["spm"]["vocab_size"] == 120 and summary["fingerprint"] != prepared[1]["fingerprint"]
    assert json.loads((out / "summary.json").read_text()) == summary
    assert not (out / "train.fr").exists() and not (out / "bin" / "dict.fr.txt").exists()  # the old pair: gone
    assert (out / "train.de").exists() and (out / "bin" / "train.en-de.docids").exists()


def test_removed_step_output_is_redone_with_later_steps(prepared, tmp_path):
    out = copy_of(prepared, tmp_path)
    before = mtimes(out)
    shutil.rmtree(out / "bin")
    summary = prepare_data(options(out, ted=prepared[2]), progress=False)
    after = mtimes(out)
    for name in ("train.en", "valid.fr", "test.docids", "spm.model", "spm.vocab"):
        assert after[name] == before[name]  # the earlier steps were kept
    assert after["bin/dict.en.txt"] != before["bin/dict.en.txt"]
    assert summary["splits"] == prepared[1]["splits"]
    assert (out / "bin" / "dict.fr.txt").read_text() == (prepared[0] / "bin" / "dict.fr.txt").read_text()


def test_failed_step_leaves_finished_steps_only_and_resumes(prepared, tmp_path, monkeypatch):
    out = tmp_path / "from-text"

    def broken(plan, encoded, dest):
        os.makedirs(dest)
        (open(os.path.join(dest, "half-written.bin"), "w")).close()
        raise InputError("fairseq-preprocess failed (simulated)")

    monkeypatch.setattr(prepare_module, "_binarize", broken)
    with pytest.raises(InputError, match="simulated"):  # into a folder this run creates
        prepare_data(options(out, text=str(prepared[0])), progress=False)
    assert not out.exists()  # a failed command leaves nothing
    out.mkdir()  # a folder that was there before: the finished steps stay, for the next run
    with pytest.raises(InputError, match="simulated"):
        prepare_data(options(out, text=str(prepared[0])), progress=False)
    assert not (out / "bin").exists() and not (out / "summary.json").exists()
    assert not (out / prepare_module.SCRATCH).exists()
    assert (out / "spm.model").exists() and (out / "train.en").exists()
    before = mtimes(out)
    monkeypatch.undo()
    summary = prepare_data(options(out, text=str(prepared[0])), progress=False)
    after = mtimes(out)
    assert all(after[k] == before[k] for k in before if k != STATE)
    assert (out / "bin" / "test.en-fr.fr.bin").exists()
    assert summary["input"]["kind"] == "text" and summary["input"]["detokenized"] is None
    for split in SPLITS:  # the prepared text, used as it is
        assert summary["splits"][split] == dict(prepared[1]["splits"][split], dropped=0)


def test_input_error_leaves_nothing(tmp_path):
    rows = dict(TED_ROWS, test=[("talk_e", "a .")])
    bad = write_ted(str(tmp_path / "bad"), rows)
    out = tmp_path / "new"
    with pytest.raises(InputError, match=r"all_talks_test\.tsv:2: 2 tab-separated fields"):
        prepare_data(options(out, ted=bad), progress=False)
    assert not out.exists()
    out.mkdir()
    with pytest.raises(InputError):
        prepare_data(options(out, ted=bad), progress=False)
    assert list(out.iterdir()) == []
    with pytest.raises(InputError, match="no 'xx' column; the languages are: de en fr"):
        prepare_data(options(out, ted=write_ted(str(tmp_path / "good")), lang="xx"), progress=False)
    assert list(out.iterdir()) == []


def test_foreign_files_and_a_running_stage_are_refused(tmp_path):
    ted = write_ted(str(tmp_path / "ted"))
    out = tmp_path / "out"
    out.mkdir()
    (out / "train.en").write_text("someone else's\n")
    with pytest.raises(InputError, match=r"already holds train\.en not written by this command; use --overwrite"):
        prepare_data(options(out, ted=ted), progress=False)
    assert (out / "train.en").read_text() == "someone else's\n"
    fd = os.open(out, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(InputError, match="another data run is writing this folder"):
            prepare_data(options(out, ted=ted, overwrite=True), progress=False)
    finally:
        os.close(fd)
    (out / STATE).parent.mkdir(exist_ok=True)
    # truncated, or of another shape (issue 50: settings a list was an AttributeError)
    for damaged in ("{not json", '{"format": 1, "fingerprint": "x", "settings": [1], "steps": {"text": {}}}'):
        (out / STATE).write_text(damaged)
        with pytest.raises(InputError, match="unreadable; use --overwrite"):
            prepare_data(options(out, ted=ted), progress=False)


@pytest.mark.parametrize(
    "kw, message",
    [
        ({}, "give exactly one of --ted, --iwslt, --text (got none)"),
        ({"ted": "a", "text": "b"}, "got --ted and --text"),
        ({"ted": "a", "lang": "en"}, "the source is English"),
        ({"ted": "a", "lang": "f r"}, "expected a language code"),
        ({"ted": "a", "vocab_size": 0}, "--vocab-size must be >= 10"),
        ({"ted": "a", "vocab_size": 1.5}, "--vocab-size must be an integer"),
        ({"ted": "a", "spm_type": "word"}, "--spm-type must be one of bpe, unigram"),
        ({"ted": "a", "workers": -1}, "--workers must be >= 0"),
        ({"ted": "a", "character_coverage": 1.5}, "--character-coverage must be <= 1"),
        ({"ted": "a", "iwslt_dev": "dev2010"}, "--iwslt-dev only applies to --iwslt input"),
    ],
)
def test_bad_options(kw, message):
    with pytest.raises(InputError) as e:
        options("out", **kw)
    assert message in str(e.value)


def test_character_coverage_default():
    assert options("o", ted="a", lang="ja").coverage == 0.9995
    assert options("o", ted="a", lang="zh-cn").coverage == 0.9995
    assert options("o", ted="a", lang="de").coverage == 1.0
    assert options("o", ted="a", lang="ja", character_coverage=0.99).coverage == 0.99


def cli(argv):
    parser = argparse.ArgumentParser(prog="contextual-mt pipeline")
    sub = parser.add_subparsers(dest="command", required=True)
    add_stage_parsers(sub)
    assert sub.choices["data"].prog.endswith("data")
    args = parser.parse_args(argv)
    assert args.transaction is False
    return run_command(args.func, args, None)


def test_cli_iwslt(tmp_path, capsys):
    folder = write_iwslt(str(tmp_path / "en-fr"))
    out = tmp_path / "out"
    assert (
        cli(
            [
                "data",
                "--lang",
                "fr",
                "--iwslt",
                folder,
                "--iwslt-test",
                "tst2014,tst2015",
                "--output",
                str(out),
                "--vocab-size",
                "60",
                "--workers",
                "1",
                "--quiet",
            ]
        )
        == 0
    )
    printed = capsys.readouterr()
    assert "test: 2 documents, 4 sentences" in printed.out and printed.err == ""
    summary = json.loads((out / "summary.json").read_text())
    assert summary["input"]["iwslt_sets"] == {"valid": ["dev2010"], "test": ["tst2014", "tst2015"]}
    assert summary["input"]["detokenized"] is None and "not Moses-tokenized" in summary["input"]["note"]
    assert (out / "test.docids").read_text().splitlines() == ["tst2014:40", "tst2014:40", "tst2015:50", "tst2015:50"]
    assert summary["splits"]["train"]["dropped"] == 1
    # the train split's lexical table for `align --pivot none`, beside it, learned from it as it is
    table = out / "train.en-train.fr.model1.json"
    assert f"lexical table for `contextual-mt align --pivot none`: {table}" in printed.out
    from docalign.lexical.model1 import fingerprint

    assert json.loads(table.read_text())["fingerprint"] == fingerprint(str(out / "train.en"), str(out / "train.fr"))

    # errors: one line on stderr, exit status 1
    assert (
        cli(
            [
                "data",
                "--lang",
                "fr",
                "--iwslt",
                folder,
                "--iwslt-test",
                "tst2099",
                "--output",
                str(tmp_path / "o2"),
                "--quiet",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("error: --iwslt-test: no tst2099 set") and err.count("\n") == 1
    assert not (tmp_path / "o2").exists()
    assert cli(["data", "--lang", "fr", "--iwslt", folder, "--output", str(out), "--vocab-size", "70", "--quiet"]) == 1
    assert "use --overwrite" in capsys.readouterr().err
