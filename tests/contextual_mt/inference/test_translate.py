"""contextual-mt translate: order, predicted vs gold context, beams, and bad input."""

import subprocess
from pathlib import Path

import pytest
import torch

from contextual_mt.backends.fairseq.model import FairseqModelOptions
from contextual_mt.backends.fairseq.translator import DocumentTranslator
from contextual_mt.demo.corpus import generate_demo_data
from contextual_mt.demo.planted import planted_accuracy, read_planted
from contextual_mt.inference.decoding import DecodingOptions
from contextual_mt.inference.translate import TranslateOptions, translate_files
from contextual_mt.pipeline.layout import PairLayout
from contextual_mt.pipeline.prepare import DataOptions, prepare_data
from contextual_mt.pipeline.presets import get_preset
from contextual_mt.pipeline.train import TrainOptions, train_model
from tests.helpers import BIN, USER_DIR, contextual_mt_cli, run


@pytest.fixture(scope="module")
def demo_model(tmp_path_factory):
    """A tiny contextual model trained on a small demo corpus by the study's data and train
    stages with the demo preset (about half a minute). Trained with one thread, as under
    pytest-xdist on two cores (tests/conftest.py): the weights depend on the number of threads
    (not on load), so a test run alone gets the model `make test` gets."""
    work = tmp_path_factory.mktemp("demo")
    data = work / "corpus"
    generate_demo_data(str(data), train_docs=1500, valid_docs=40, test_docs=60, seed=3)
    layout = PairLayout("fr", str(work))
    prepare_data(
        DataOptions(lang="fr", output=layout.data, text=str(data), vocab_size=get_preset("demo").vocab_size),
        progress=False,
    )
    # the demo context model without CoWord dropout (target context 0-3, 7 epochs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMP_NUM_THREADS", "1")
        mp.setenv("MKL_NUM_THREADS", "1")
        train_model(
            TrainOptions(
                "fr",
                "context",
                preset="demo",
                root=str(work),
                gpus=0,
                max_epoch=7,
                overrides=["task.coword_dropout=0.0"],
                progress=False,
            )
        )
    return {
        "ckpt": Path(layout.checkpoints("context")) / "checkpoint_last.pt",
        "spm": Path(layout.spm),
        "data": data,
        "bin": Path(layout.bin),
        "work": work,
    }


def lines(path):
    return path.read_text().splitlines()


@pytest.fixture(scope="module")
def translator(demo_model):
    return DocumentTranslator(
        FairseqModelOptions(str(demo_model["ckpt"]), spm=str(demo_model["spm"])),
        options=DecodingOptions(beam=4, batch_size=16),
    )


def test_order_and_line_count_with_uneven_documents(translator, demo_model, tmp_path):
    data = demo_model["data"]
    src, ids = lines(data / "test.en"), lines(data / "test.docids")
    # documents of very different lengths, an empty line, and batches smaller than a wave
    src, ids = [*src[:40], "", *src[40:45]], [*ids[:40], ids[39], *ids[40:45]]
    translator.options.batch_size = 3
    hyps = translator.translate(src, ids, progress=False)
    translator.options.batch_size = 16
    assert len(hyps) == len(src) and hyps[40] == ""
    # the same sentences translated one document at a time give the same lines, in order
    alone = []
    start = 0
    for end in range(1, len(ids) + 1):
        if end == len(ids) or ids[end] != ids[start]:
            alone += translator.translate(src[start:end], ids[start:end], progress=False)
            start = end
    assert alone == hyps


def test_parallel_decoding_gives_the_sequential_output(translator, demo_model):
    """The demo's test split regrouped into 4 long documents (longer than any batch), with an
    empty line: rounds of 3 and of 8 sentences per document give the waves' lines exactly."""
    data = demo_model["data"]
    src = lines(data / "test.en")[:120]
    src[50] = ""
    ids = [f"talk{i // 30}" for i in range(len(src))]
    o = translator.options
    o.decoding, o.batch_size = "sequential", 7
    sequential = translator.translate(src, ids, progress=False)
    try:
        for window in (3, 8):
            o.decoding, o.window = "parallel", window
            parallel = translator.translate(src, ids, progress=False)
            assert parallel == sequential, window
            stats = parallel.rounds
            assert stats.rounds <= 30 and stats.translated[0] == 4 * window
    finally:
        o.decoding, o.window, o.batch_size = "auto", 8, 16


def test_predicted_context_is_the_models_own_translation(translator, demo_model, monkeypatch):
    data = demo_model["data"]
    src, ids = lines(data / "test.en")[:30], lines(data / "test.docids")[:30]
    seen = {}
    decode = translator._decode

    def spy(rows):
        out = decode(rows)
        for r, ids_ in zip(rows, out, strict=True):
            seen[r["index"]] = (list(r["tgt_ctx"]), ids_)
        return out

    monkeypatch.setattr(translator, "_decode", spy)
    translator.translate(src, ids, progress=False)
    brk = translator.tgt_dict.index("<brk>")
    for i in range(1, len(src)):
        if ids[i] != ids[i - 1] or i not in seen or (i - 1) not in seen:
            continue
        ctx = seen[i][0]
        assert ctx[-1] == brk
        previous_output = seen[i - 1][1]
        assert ctx[-1 - len(previous_output) : -1] == previous_output


def test_translation_and_scoring_give_the_same_context_sentences(translator, demo_model, monkeypatch):
    """For every position of every document, translation (the references as target context)
    gives the model the context sentences scoring gives it: the nearest min(k, position) of its
    document (the model reads up to k = 3 target sentences; k = 3 at the second position of a
    document used to keep one sentence in translation where scoring kept two)."""
    from commandkit.documents import document_starts
    from contextual_mt.backends.fairseq.scoring import FairseqScoringBackend
    from contextual_mt.inference.context_trim import last_sentences

    data = demo_model["data"]
    src, ids, refs = lines(data / "test.en")[:60], lines(data / "test.docids")[:60], lines(data / "test.fr")[:60]
    seen = {}
    decode = translator._decode

    def spy(rows):
        seen.update((r["index"], (list(r["src_ctx"]), list(r["tgt_ctx"]))) for r in rows)
        return decode(rows)

    monkeypatch.setattr(translator, "_decode", spy)
    translator.translate(src, ids, refs, progress=False)
    scorer = FairseqScoringBackend(translator.model)
    scorer.load(src, refs, document_starts(ids))
    src_k, tgt_k = scorer.context_sentences()
    codec, brk = translator.tgt_codec, translator.tgt_dict.index("<brk>")
    starts = document_starts(ids)
    first = {i: max(s for s in starts if s <= i) for i in range(len(src))}
    assert translator.n_tgt == 3 and translator.n_src == 0 and max(i - first[i] for i in seen) >= 3
    for i, (src_ctx, tgt_ctx) in sorted(seen.items()):
        previous = list(range(first[i], i))
        assert tgt_k[i] == len(last_sentences(previous, 3)) and src_k[i] == 0 and src_ctx == []
        assert tgt_ctx == [
            t for j in last_sentences(previous, int(tgt_k[i])) for t in (*codec.to_ids(codec.encode(refs[j])), brk)
        ], i


def test_context_changes_output_where_planted_context_demands(demo_model):
    data = demo_model["data"]
    src, ids = lines(data / "test.en"), lines(data / "test.docids")
    planted = list(read_planted(str(data / "test.planted.jsonl")))
    with_ctx = DocumentTranslator(
        FairseqModelOptions(str(demo_model["ckpt"]), spm=str(demo_model["spm"])), options=DecodingOptions(beam=2)
    ).translate(src, ids, progress=False)
    no_ctx = DocumentTranslator(
        FairseqModelOptions(str(demo_model["ckpt"]), spm=str(demo_model["spm"]), target_context_size=0),
        options=DecodingOptions(beam=2),
    ).translate(src, ids, progress=False)
    acc_ctx, acc_none = planted_accuracy(with_ctx, planted), planted_accuracy(no_ctx, planted)
    assert any(with_ctx[p["line"] - 1] != no_ctx[p["line"] - 1] for p in planted)
    assert acc_ctx["formality"]["accuracy"] > acc_none["formality"]["accuracy"] + 15, (acc_ctx, acc_none)


def test_gold_target_context(translator, demo_model, monkeypatch):
    data = demo_model["data"]
    src, ids, refs = lines(data / "test.en")[:12], lines(data / "test.docids")[:12], lines(data / "test.fr")[:12]
    seen = {}
    decode = translator._decode
    monkeypatch.setattr(
        translator,
        "_decode",
        lambda rows: [
            (seen.setdefault(r["index"], list(r["tgt_ctx"])) and None) or x
            for r, x in zip(rows, decode(rows), strict=True)
        ],
    )
    translator.translate(src, ids, gold_targets=refs, progress=False)
    codec = translator.tgt_codec
    brk = translator.tgt_dict.index("<brk>")
    for i in range(1, 12):
        if ids[i] == ids[i - 1]:
            gold_prev = codec.to_ids(codec.encode(refs[i - 1]))
            assert seen[i][-1 - len(gold_prev) :] == [*gold_prev, brk]


def test_without_predicted_context_sentences_are_batched_freely(translator, demo_model, monkeypatch):
    """Gold context (and no target context) makes no sentence wait for another: one pass, batches
    that mix positions of a document; the result equals the wave-by-wave computation it replaces
    (the model's own translations given back as gold context reproduce them)."""
    data = demo_model["data"]
    src, ids = lines(data / "test.en")[:40], lines(data / "test.docids")[:40]
    waves = []
    decode = translator._decode
    monkeypatch.setattr(translator, "_decode", lambda rows: waves.append([r["index"] for r in rows]) or decode(rows))
    predicted = translator.translate(src, ids, progress=False)
    assert all(len({ids[i] for i in batch}) == len(batch) for batch in waves)  # one sentence per document
    waves.clear()
    again = translator.translate(src, ids, gold_targets=predicted, progress=False)
    assert any(len({ids[i] for i in batch}) < len(batch) for batch in waves)  # positions mixed
    assert sum(len(b) for b in waves) == sum(1 for s in src if s.strip())
    assert again == predicted


def test_the_default_batch_is_wide_for_a_fairseq_model_on_a_gpu(translator, monkeypatch):
    """Parallel rounds need wide batches on a GPU (bench/RESULTS.md, "GPU figures in one run"):
    without --batch-size, 512 sentences of at most 16,384 tokens there, 32 on CPU; a given
    --batch-size is kept on every device. (No kernel runs: only the batching is looked at.)"""
    from contextual_mt.inference.decoding import GPU_MAX_TOKENS

    rows = [{"source": [5] * (1 + k % 20), "src_ctx": [], "tgt_ctx": [6] * 3} for k in range(600)]
    sizes = lambda: [len(b) for b in translator._chunks(rows)]  # noqa: E731
    monkeypatch.setattr(translator, "options", DecodingOptions())
    assert max(sizes()) == 32 and sum(sizes()) == 600  # CPU
    monkeypatch.setattr(translator, "device", torch.device("cuda"))
    assert sizes() == [512, 88]  # rows of at most 23 tokens: 512 x 23 < 16,384
    long_rows = [{"source": [5] * 100, "src_ctx": [], "tgt_ctx": [6] * 3} for _ in range(600)]
    rows[:] = long_rows
    assert max(sizes()) == GPU_MAX_TOKENS // 103 and sum(sizes()) == 600  # the token cap
    monkeypatch.setattr(translator, "options", DecodingOptions(batch_size=10))
    assert max(sizes()) == 10
    assert DecodingOptions().batching(wide=False) == (32, None)
    assert DecodingOptions(max_tokens=999).batching(wide=True) == (512, 999)


def test_beam_one_and_five(translator, demo_model):
    from contextual_mt.metrics import sentence_metrics

    data = demo_model["data"]
    src, ids, refs = lines(data / "test.en"), lines(data / "test.docids"), lines(data / "test.fr")
    translator.options.beam = 1
    greedy = translator.translate(src, ids, progress=False)
    translator.options.beam = 5
    beam = translator.translate(src, ids, progress=False)
    translator.options.beam = 4
    assert len(greedy) == len(beam) == len(src)
    assert sum(a == b for a, b in zip(greedy, beam, strict=True)) > len(src) // 2  # mostly the same
    b1, b5 = sentence_metrics(greedy, refs)["bleu"]["score"], sentence_metrics(beam, refs)["bleu"]["score"]
    # a 7-epoch tiny model: beam 5 is not better than greedy here (with the dictionary of every
    # spm piece: greedy 90.3, beam 87.3 BLEU); the check is that neither search is broken
    assert abs(b5 - b1) < 5.0 and min(b1, b5) > 20


def test_cli_writes_atomically_and_reports(demo_model, tmp_path):
    data = demo_model["data"]
    out = tmp_path / "out.fr"
    proc = run(
        [
            str(BIN / "contextual-mt"),
            "translate",
            "--path",
            str(demo_model["ckpt"]),
            "--source",
            str(data / "test.en"),
            "--docids",
            str(data / "test.docids"),
            "--spm",
            str(demo_model["spm"]),
            "--output",
            str(out),
            "--beam",
            "2",
            "--max-tokens",
            "400",
        ]
    )
    assert len(lines(out)) == len(lines(data / "test.en"))
    assert "%|" in proc.stderr  # progress bar
    assert [p.name for p in tmp_path.iterdir()] == ["out.fr"]  # no temp files left


def test_interrupted_run_leaves_no_partial_output(demo_model, tmp_path, monkeypatch):
    data = demo_model["data"]
    out = tmp_path / "out.fr"
    out.write_text("previous complete output\n")

    def boom(self, rows):
        raise KeyboardInterrupt

    monkeypatch.setattr(DocumentTranslator, "_decode", boom)
    with pytest.raises(KeyboardInterrupt):
        translate_files(
            TranslateOptions(
                FairseqModelOptions(str(demo_model["ckpt"]), spm=str(demo_model["spm"])),
                str(data / "test.en"),
                str(data / "test.docids"),
                str(out),
                progress=False,
            )
        )
    assert out.read_text() == "previous complete output\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.fr"]


def cli_error(args, demo_model, tmp_path):
    proc = contextual_mt_cli("translate", *args, "--output", str(tmp_path / "o"))  # in this process
    assert proc.returncode != 0 and not (tmp_path / "o").exists()
    assert "Traceback" not in proc.stderr
    return proc.stderr.strip().splitlines()[-1]


def test_bad_inputs(demo_model, tmp_path):
    data, ck, spm = demo_model["data"], str(demo_model["ckpt"]), str(demo_model["spm"])
    short = tmp_path / "short.docids"
    short.write_text("\n".join(lines(data / "test.docids")[:-1]) + "\n")
    msg = cli_error(
        ["--path", ck, "--source", str(data / "test.en"), "--docids", str(short), "--spm", spm], demo_model, tmp_path
    )
    assert str(short) in msg and "lines" in msg
    msg = cli_error(
        [
            "--path",
            str(tmp_path / "nope.pt"),
            "--source",
            str(data / "test.en"),
            "--docids",
            str(data / "test.docids"),
            "--spm",
            spm,
        ],
        demo_model,
        tmp_path,
    )
    assert "nope.pt: checkpoint not found" in msg
    # a sentencepiece model trained on other text
    other = tmp_path / "other"
    other.mkdir()
    (other / "train.en").write_text("zzz qqq xxx www\n" * 50)
    (other / "train.fr").write_text("jjj kkk vvv\n" * 50)
    import sentencepiece

    sentencepiece.SentencePieceTrainer.train(
        input=f"{other / 'train.en'},{other / 'train.fr'}",
        model_prefix=str(other / "spm"),
        vocab_size=40,
        model_type="bpe",
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    bad_spm = other / "spm.model"
    msg = cli_error(
        ["--path", ck, "--source", str(data / "test.en"), "--docids", str(data / "test.docids"), "--spm", str(bad_spm)],
        demo_model,
        tmp_path,
    )
    assert "does not match the dictionary" in msg and str(bad_spm) in msg


def test_checkpoint_from_another_task(demo_model, tmp_path):
    save = tmp_path / "sent"
    run(
        [
            str(BIN / "fairseq-train"),
            str(demo_model["bin"]),
            "--task",
            "translation",
            "--arch",
            "transformer",
            "--encoder-layers",
            "1",
            "--decoder-layers",
            "1",
            "--encoder-embed-dim",
            "32",
            "--decoder-embed-dim",
            "32",
            "--encoder-ffn-embed-dim",
            "32",
            "--decoder-ffn-embed-dim",
            "32",
            "--max-update",
            "2",
            "--optimizer",
            "adam",
            "--lr",
            "1e-3",
            "--max-tokens",
            "2000",
            "--save-dir",
            str(save),
            "--cpu",
            "--no-progress-bar",
        ]
    )
    data = demo_model["data"]
    msg = cli_error(
        [
            "--path",
            str(save / "checkpoint_last.pt"),
            "--source",
            str(data / "test.en"),
            "--docids",
            str(data / "test.docids"),
        ],
        demo_model,
        tmp_path,
    )
    assert "task 'translation', not 'document_translation'" in msg


def _rows(translator, demo_model, n, context):
    data = demo_model["data"]
    src, ref = lines(data / "test.en")[:n], lines(data / "test.fr")[:n]
    ids = [[*translator.src_codec.to_ids(translator.src_codec.encode(text)), translator.src_dict.eos()] for text in src]
    tgt = [translator.tgt_codec.to_ids(translator.tgt_codec.encode(text)) for text in ref]
    brk = translator.tgt_dict.index("<brk>")
    return [
        {"source": ids[i], "src_ctx": [], "tgt_ctx": [x for j in range(max(0, i - context), i) for x in tgt[j] + [brk]]}
        for i in range(n)
    ]


@pytest.mark.parametrize("beam", [1, 5])
def test_beam_search_equals_fairseq_without_prefix(translator, demo_model, beam):
    """Exactly fairseq's SequenceGenerator output. It once differed for a few sentences of some
    trained models only (so it failed under pytest-xdist, where the fixture trains with one
    thread, and passed alone): our search ended a hypothesis whose </s> ranked below the first
    `beam` candidates, where fairseq drops it; that extra finished hypothesis could fill the
    beam's quota and stop the sentence before fairseq's better, longer one was found."""
    from fairseq.sequence_generator import SequenceGenerator

    from contextual_mt.backends.fairseq.beam_search import beam_search

    rows = _rows(translator, demo_model, 60, 0)
    model, eos = translator.models[0], translator.tgt_dict.eos()
    ours = beam_search(model, translator._batch(rows), [[]] * len(rows), beam=beam, max_lengths=[200] * len(rows))
    gen = SequenceGenerator([model], translator.tgt_dict, beam_size=beam, max_len_b=200)
    hypos = gen.generate([model], {"net_input": translator._batch(rows), "id": torch.arange(len(rows))})
    assert ours == [[t for t in h[0]["tokens"].tolist() if t != eos] for h in hypos]


def test_prefilled_prefix_equals_forced_prefix(translator, demo_model):
    """One parallel pass over the context prefix gives exactly fairseq's step-by-step forcing."""
    from fairseq.data import data_utils
    from fairseq.sequence_generator import SequenceGenerator

    from contextual_mt.backends.fairseq.beam_search import beam_search

    rows = _rows(translator, demo_model, 60, 3)
    assert len({len(r["tgt_ctx"]) for r in rows}) > 3  # prefixes of many lengths in one batch
    model, d = translator.models[0], translator.tgt_dict
    ours = beam_search(
        model, translator._batch(rows), [r["tgt_ctx"] for r in rows], beam=1, max_lengths=[200] * len(rows)
    )
    prefix = data_utils.collate_tokens([torch.tensor(r["tgt_ctx"], dtype=torch.long) for r in rows], d.pad(), d.eos())
    gen = SequenceGenerator([model], d, beam_size=1, max_len_b=400)
    hypos = gen.generate(
        [model], {"net_input": translator._batch(rows), "id": torch.arange(len(rows))}, prefix_tokens=prefix
    )
    theirs = [
        [t for t in h[0]["tokens"].tolist()[len(r["tgt_ctx"]) :] if t != d.eos()]
        for h, r in zip(hypos, rows, strict=True)
    ]
    assert ours == theirs


def test_incremental_and_full_recomputation_agree(translator, demo_model):
    from contextual_mt.backends.fairseq.beam_search import beam_search

    rows = _rows(translator, demo_model, 40, 3)
    args = (translator.models[0], translator._batch(rows), [r["tgt_ctx"] for r in rows])
    fast = beam_search(*args, beam=4, max_lengths=[60] * len(rows))
    slow = beam_search(*args, beam=4, max_lengths=[60] * len(rows), incremental=False)
    assert fast == slow


def test_pcxmi_report_singles_out_the_planted_formality_tokens(demo_model, tmp_path):
    """P-CXMI of the tiny demo model, joined with the demo's gold tags: T-V pronouns (which the
    model learns to take from context) stand out; the verbs that merely agree with them do not."""
    from contextual_mt.analysis.cxmi import CxmiOptions, run_cxmi
    from contextual_mt.analysis.report import run_report

    data = demo_model["data"]
    run_cxmi(
        CxmiOptions(
            FairseqModelOptions(str(demo_model["ckpt"]), spm=str(demo_model["spm"])),
            str(data / "test.en"),
            str(data / "test.fr"),
            str(data / "test.docids"),
            str(tmp_path / "p.jsonl"),
            progress=False,
        )
    )
    summary = run_report(
        str(tmp_path / "p.jsonl"),
        str(tmp_path / "report"),
        conllu=str(data / "test.fr.conllu"),
        tags=str(data / "test.tags.json"),
    )
    tag = {r["key"]: r for r in summary["tag"]}
    assert tag["formality"]["auc"] > 0.9, tag
    assert tag["formality"]["mean"] > tag["formality-agreement"]["mean"] + 0.1, tag
    assert tag["formality"]["mean"] > tag["no tag"]["mean"] + 0.1, tag


def test_fairseq_generate_scoring_muda_matches_muda_eval(demo_model, tmp_path):
    """--scoring muda prints the MuDA table at the end of fairseq-generate; its numbers equal
    `muda eval` on the same (shuffled, re-ordered) fairseq output."""
    import json as _json

    data = demo_model["data"]
    tags = tmp_path / "ref.tags.json"
    common = ["--src-conllu", str(data / "test.en.conllu")]
    run(
        [
            str(BIN / "muda"),
            "tag",
            "--src",
            str(data / "test.en"),
            "--tgt",
            str(data / "test.fr"),
            "--docids",
            str(data / "test.docids"),
            "--tgt-lang",
            "fr",
            "--dump-tags",
            str(tags),
            *common,
            "--tgt-conllu",
            str(data / "test.fr.conllu"),
            "--alignments",
            str(data / "test.align"),
        ]
    )
    lexicon = ",".join(str(data / f) for f in ("train.en.conllu", "train.fr.conllu", "train.align"))
    proc = subprocess.run(
        [
            str(BIN / "fairseq-generate"),
            str(demo_model["bin"]),
            "--user-dir",
            USER_DIR,
            "--task",
            "document_translation",
            "-s",
            "en",
            "-t",
            "fr",
            "--target-context-size",
            "3",
            "--path",
            str(demo_model["ckpt"]),
            "--gen-subset",
            "test",
            "--beam",
            "2",
            "--batch-size",
            "16",
            "--cpu",
            "--post-process",
            "sentencepiece",
            "--scoring",
            "muda",
            "--muda-ref-tags",
            str(tags),
            "--muda-docids",
            str(data / "test.docids"),
            "--muda-src",
            str(data / "test.en"),
            "--muda-tgt-lang",
            "fr",
            "--muda-ref",
            str(data / "test.fr"),
            "--muda-src-conllu",
            str(data / "test.en.conllu"),
            "--muda-lexicon",
            lexicon,
            "--muda-output",
            str(tmp_path / "scorer.json"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "MuDA" in proc.stdout and "pronouns" in proc.stdout.split("MuDA")[-1]
    (tmp_path / "gen.out").write_text(proc.stdout)
    run(
        [
            str(BIN / "muda"),
            "eval",
            "--src",
            str(data / "test.en"),
            "--ref",
            str(data / "test.fr"),
            "--docids",
            str(data / "test.docids"),
            "--tgt-lang",
            "fr",
            "--hyps",
            str(tmp_path / "gen.out"),
            "--names",
            "system",
            "--ref-tags",
            str(tags),
            *common,
            "--lexicon",
            *lexicon.split(","),
            "--output",
            str(tmp_path / "eval.json"),
        ]
    )
    scorer, direct = (_json.loads((tmp_path / f).read_text()) for f in ("scorer.json", "eval.json"))
    assert scorer["systems"]["system"]["tags"] == direct["systems"]["system"]["tags"]
    assert scorer["systems"]["system"]["bleu"] == pytest.approx(direct["systems"]["system"]["bleu"])


# ------------------------------------------------------------------ no wrong number, ever
@pytest.mark.parametrize(
    "field, value, message",
    [
        ("beam", 0, "--beam must be >= 1 (got 0)"),
        ("beam", -3, "--beam must be >= 1 (got -3)"),
        ("beam", 99999999999, "--beam must be <= 1000 (got 99999999999)"),
        ("decoding", "fast", "--decoding fast: expected one of auto, parallel, sequential"),
        ("window", 0, "--parallel-window must be >= 1 (got 0)"),
        ("lenpen", float("nan"), "--lenpen must be a finite number (got nan)"),
        ("lenpen", float("inf"), "--lenpen must be a finite number (got inf)"),
        ("max_len_a", -1.0, "--max-len-a must be >= 0 (got -1.0)"),
        ("max_len_a", float("nan"), "--max-len-a must be a finite number (got nan)"),
        ("max_len_b", 0, "--max-len-b must be >= 1 (got 0)"),
        ("batch_size", 0, "--batch-size must be >= 1 (got 0)"),
        ("max_tokens", 0, "--max-tokens must be >= 1 (got 0)"),
    ],
)
def test_decoding_options_are_checked_when_built(field, value, message):
    from contextual_mt.errors import InputError

    with pytest.raises(InputError) as e:
        DecodingOptions(**{field: value})
    assert str(e.value) == message
    DecodingOptions(max_tokens=None, lenpen=0.6, max_len_a=1.2)  # the valid ones pass


@pytest.mark.parametrize(
    "args, message",
    [
        (["--beam", "0"], "error: --beam must be >= 1 (got 0)"),
        (["--beam", "-3"], "error: --beam must be >= 1 (got -3)"),
        (["--lenpen", "nan"], "error: --lenpen must be a finite number (got nan)"),
        (["--target-context-size", "-2"], "error: --target-context-size must be >= 0 (got -2)"),
    ],
)
def test_bad_decoding_options_fail_before_the_model_loads(tmp_path, args, message):
    # the checkpoint does not exist: the option is reported first, so nothing was loaded
    msg = cli_error(
        [
            "--path",
            str(tmp_path / "nope.pt"),
            "--source",
            str(tmp_path / "src"),
            "--docids",
            str(tmp_path / "ids"),
            *args,
        ],
        None,
        tmp_path,
    )
    assert msg == message


def test_over_long_source_line_is_an_error(demo_model, tmp_path, monkeypatch):
    data = demo_model["data"]
    src = tmp_path / "long.en"
    lines = lines_of(data / "test.en")[:3]
    lines[1] = " ".join(["the", "bank"] * 2600)
    src.write_text("\n".join(lines) + "\n")
    ids = tmp_path / "ids"
    ids.write_text("d\n" * 3)
    monkeypatch.setattr(DocumentTranslator, "_decode", lambda self, rows: pytest.fail("decoding started"))
    from contextual_mt.errors import InputError

    with pytest.raises(
        InputError,
        match=rf"^{src}:2: \d{{4}} subword pieces \(with </s>\), but the model "
        r"takes at most 1024 source positions; split the line$",
    ):
        translate_files(
            TranslateOptions(
                FairseqModelOptions(str(demo_model["ckpt"]), spm=str(demo_model["spm"])),
                str(src),
                str(ids),
                str(tmp_path / "out"),
                progress=False,
            )
        )
    assert not (tmp_path / "out").exists()


def lines_of(path):
    return path.read_text().splitlines()


def test_unknown_pieces_warning_names_the_file(demo_model, tmp_path, caplog):
    src = tmp_path / "odd.en"
    src.write_text("I see the bank .\nЖЖЖ ЩЩЩ .\n")
    ids = tmp_path / "ids"
    ids.write_text("d\nd\n")
    with caplog.at_level("WARNING", logger="contextual_mt.inference.translate"):
        translate_files(
            TranslateOptions(
                FairseqModelOptions(str(demo_model["ckpt"]), spm=str(demo_model["spm"])),
                str(src),
                str(ids),
                str(tmp_path / "out"),
                decoding=DecodingOptions(beam=1),
                progress=False,
            )
        )
    # every piece of spm.model is in the dictionary: what becomes <unk> is what sentencepiece
    # passes through unknown, characters it never saw (issue 50: not "pieces missing from the dictionary")
    assert (
        f"{src}: 1 lines contain characters the sentencepiece model never saw in training: 'ЖЖЖ', 'ЩЩЩ' "
        "(mapped to <unk>), first at line 2" in caplog.text
    )
    assert "source:" not in caplog.text


@pytest.mark.parametrize("where", ["under-a-file", "a-directory"])
def test_unwritable_output_is_one_line(demo_model, tmp_path, where):
    data = demo_model["data"]
    (tmp_path / "afile").write_text("x\n")
    output = tmp_path / "afile" / "out.fr" if where == "under-a-file" else tmp_path
    proc = contextual_mt_cli(
        "translate",
        "--path",
        str(demo_model["ckpt"]),
        "--spm",
        str(demo_model["spm"]),
        "--source",
        str(data / "test.en"),
        "--docids",
        str(data / "test.docids"),
        "--output",
        str(output),
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: {output}: ") and "translating" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_context_beyond_the_trained_sizes_is_warned(demo_model, tmp_path):
    """As cxmi does: the demo model was trained with target context up to 3."""
    data = tmp_path / "in"
    data.mkdir()
    (data / "test.en").write_text("\n".join(lines(demo_model["data"] / "test.en")[:4]) + "\n")
    (data / "test.docids").write_text("\n".join(lines(demo_model["data"] / "test.docids")[:4]) + "\n")
    args = [
        "translate",
        "--path",
        str(demo_model["ckpt"]),
        "--spm",
        str(demo_model["spm"]),
        "--source",
        str(data / "test.en"),
        "--docids",
        str(data / "test.docids"),
        "--beam",
        "1",
    ]
    proc = contextual_mt_cli(*args, "--target-context-size", "5", "--output", str(tmp_path / "o5"))
    assert proc.returncode == 0 and "context sizes 0/5 (source/target) exceed those trained (0/3)" in proc.stderr
    proc = contextual_mt_cli(*args, "--target-context-size", "2", "--output", str(tmp_path / "o2"))
    assert proc.returncode == 0 and "exceed those trained" not in proc.stderr


def test_an_allocation_failure_is_one_line(monkeypatch, capsys):
    """torch's "can't allocate memory" (a setting too large for the machine) is one line naming
    the settings to lower, exit 1; any other RuntimeError stays a bug with its traceback."""
    from contextual_mt import cli
    from contextual_mt.cli import score as score_command

    def alloc(args):
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: "
            "you tried to allocate 2400000000000 bytes."
        )

    monkeypatch.setattr(score_command, "score", alloc)
    assert cli.main(["score", "--hyp", __file__, "--ref", __file__]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("error: out of memory (") and "--batch-size" in err

    def bug(args):
        raise RuntimeError("shape mismatch")

    monkeypatch.setattr(score_command, "score", bug)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        cli.main(["score", "--hyp", __file__, "--ref", __file__])


def test_bfloat16_on_cpu_against_float32(demo_model, tmp_path, monkeypatch):
    """--dtype bfloat16 on CPU: the model really runs in bfloat16 (its weights and its logits),
    most translations are float32's own, and P-CXMI (float32 log-softmax of bfloat16 logits) is
    within 0.05 nats of float32's for all but a few tokens."""
    import json as _json

    import numpy as np

    from contextual_mt.analysis.cxmi import CxmiOptions, run_cxmi
    from contextual_mt.backends.fairseq.model import DocumentModel

    data = demo_model["data"]
    src, ids = lines(data / "test.en")[:150], lines(data / "test.docids")[:150]
    for name, text in (("s.en", src), ("s.docids", ids), ("s.fr", lines(data / "test.fr")[:150])):
        (tmp_path / name).write_text("\n".join(text) + "\n")
    seen = []  # (dtype asked, weights' dtypes, logits' dtype) of every decoder call
    original = DocumentModel.load.__func__

    def load(cls, options):
        model = original(cls, options)
        model.model.decoder.register_forward_hook(
            lambda module, args, out: seen.append((options.dtype, {p.dtype for p in module.parameters()}, out[0].dtype))
        )
        return model

    monkeypatch.setattr(DocumentModel, "load", classmethod(load))
    hyps, records = {}, {}
    for dtype in ("float32", "bfloat16"):
        spec = FairseqModelOptions(str(demo_model["ckpt"]), spm=str(demo_model["spm"]), cpu=True, dtype=dtype)
        hyps[dtype] = translate_files(
            TranslateOptions(
                spec,
                str(tmp_path / "s.en"),
                str(tmp_path / "s.docids"),
                str(tmp_path / f"{dtype}.fr"),
                progress=False,
                decoding=DecodingOptions(beam=4),
            )
        )
        out = tmp_path / f"{dtype}.jsonl"
        summary = run_cxmi(
            CxmiOptions(
                spec,
                str(tmp_path / "s.en"),
                str(tmp_path / "s.fr"),
                str(tmp_path / "s.docids"),
                str(out),
                progress=False,
            )
        )
        assert summary["dtype"] == dtype
        records[dtype] = [_json.loads(line) for line in out.read_text().splitlines()]
    torch_type = {"float32": torch.float32, "bfloat16": torch.bfloat16}
    assert seen and all(weights == {torch_type[d]} and logits == torch_type[d] for d, weights, logits in seen)
    same = np.mean([a == b for a, b in zip(hyps["float32"], hyps["bfloat16"], strict=True)])
    assert same >= 0.9, same  # 148 of 150 lines measured (beam 4)
    delta = [
        abs(a - b)
        for r32, r16 in zip(records["float32"], records["bfloat16"], strict=True)
        for a, b in zip(r32["token_pcxmi"], r16["token_pcxmi"], strict=True)
    ]
    corpus = abs(
        np.mean([r["sentence_pcxmi"] for r in records["float32"]])
        - np.mean([r["sentence_pcxmi"] for r in records["bfloat16"]])
    )
    # measured (150 lines): max 0.049 per token, 0.0005 per sentence on average; bfloat16 keeps 8
    # bits of mantissa, so a logit of 10 is off by up to 0.04
    assert 0 < max(delta) < 0.1 and np.mean(np.array(delta) < 0.05) > 0.99 and corpus < 0.01, (max(delta), corpus)
