"""CADec (Voita et al. 2019) on a tiny base model: memories and distance features, a frozen base,
the first-pass mixing and corruption rates, incremental decoding, a checkpoint that loads without
its base file, and bad input."""

import shutil

import pytest
import torch

from tests.helpers import BIN, TRAIN_OPTS, USER_DIR, run, train

CADEC = [
    "--task",
    "cadec_translation",
    "-s",
    "en",
    "-t",
    "fr",
    "--arch",
    "cadec_transformer_tiny",
    "--context-size",
    "2",
]


def train_cadec(data_bin, save, base, *extra, check=True):
    base_args = ["--base-model", str(base)] if base is not None else []
    return run(
        [
            str(BIN / "fairseq-train"),
            str(data_bin),
            "--user-dir",
            USER_DIR,
            *CADEC,
            *base_args,
            *TRAIN_OPTS,
            "--max-epoch",
            "2",
            "--save-dir",
            str(save),
            "--seed",
            "3",
            *extra,
        ],
        check=check,
    )


@pytest.fixture(scope="module")
def base_model(zoo):
    """A context-agnostic base (context 0/0, two epochs)."""
    return zoo.checkpoint("sentence_2_epochs")


@pytest.fixture(scope="module")
def cadec_checkpoint(data_bin, base_model, tmp_path_factory):
    save = tmp_path_factory.mktemp("cadec")
    train_cadec(data_bin, save, base_model, "--no-epoch-checkpoints")
    return save / "checkpoint_last.pt"


def load(ckpt, data_bin, **overrides):
    from fairseq import checkpoint_utils

    import contextual_mt  # noqa: F401

    models, _cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [str(ckpt)], arg_overrides={"data": str(data_bin), **overrides}
    )
    return models[0].eval(), task


def batch(task, n=6):
    task.load_dataset("test")
    dataset = task.datasets["test"]
    return dataset.collater([dataset[i] for i in range(n)])


def test_memories_carry_each_sentence_with_its_distance(cadec_checkpoint, data_bin):
    model, task = load(cadec_checkpoint, data_bin)
    sample = batch(task)
    net = sample["net_input"]
    net["first_pass"] = sample["target"]
    out = model.encoder(**net)
    dim = model.base.encoder.embed_tokens.embedding_dim
    memory, mask = out["encoder_out"][0], out["encoder_padding_mask"][0]
    assert memory.size(2) == dim + 3  # K = 2: distances 0, 1, 2
    pad = task.source_dictionary.pad()
    for b in range(memory.size(1)):
        rows = memory[~mask[b], b]
        one_hot = rows[:, dim:]
        assert torch.all(one_hot.sum(1) == 1)
        counts = one_hot.sum(0).long().tolist()
        assert counts[0] == int(net["src_tokens"][b].ne(pad).sum())  # the current sentence, </s> included
        # distance k: the k-th previous source sentence (+ its </s>); none beyond the context given
        n_ctx = (
            int((net["src_ctx_tokens"][b] == task.source_dictionary.index("<brk>")).sum())
            if net.get("src_ctx_tokens") is not None
            else 0
        )
        assert sum(c > 0 for c in counts[1:]) == n_ctx
    base_memory = out["base_out"][0]
    first_len = int(sample["target"][0].ne(pad).sum())
    assert (base_memory[:, 0, dim] == 1).sum() == 2 * first_len  # decoder states + embeddings of the first pass
    logits, _ = model(**net)
    assert logits.shape[:2] == sample["target"].shape and logits.size(2) == len(task.target_dictionary)


def test_base_stays_frozen_and_the_checkpoint_holds_it(cadec_checkpoint, base_model, data_bin, tmp_path):
    state = torch.load(cadec_checkpoint, map_location="cpu", weights_only=False)
    from fairseq import checkpoint_utils

    import contextual_mt  # noqa: F401

    base_model_obj, _, _ = checkpoint_utils.load_model_ensemble_and_task(
        [str(base_model)], arg_overrides={"data": str(data_bin)}
    )
    for name, p in base_model_obj[0].named_parameters():
        assert torch.equal(state["model"]["encoder.base." + name], p.detach()), name
    # one file is enough: the base checkpoint is gone
    moved = tmp_path / "elsewhere.pt"
    shutil.move(base_model, moved)
    try:
        model, _ = load(cadec_checkpoint, data_bin)
        for name, p in base_model_obj[0].named_parameters():
            assert torch.equal(dict(model.base.named_parameters())[name], p.detach())
    finally:
        shutil.move(moved, base_model)


def test_first_pass_mixing_and_corruption_rates(cadec_checkpoint, data_bin):
    model, task = load(cadec_checkpoint, data_bin)
    sample = batch(task, 6)
    big = dict(sample.items())
    reps = 80
    big["target"] = sample["target"].repeat(reps, 1)
    big["net_input"] = {
        "src_tokens": sample["net_input"]["src_tokens"].repeat(reps, 1),
        "src_lengths": sample["net_input"]["src_lengths"].repeat(reps),
    }
    first = task.first_pass(big, model, seed=5)
    corrupted = big["first_pass_corrupted"]
    assert abs(corrupted.float().mean().item() - 0.5) < 0.07
    pad = task.target_dictionary.pad()
    changed = total = 0
    for b in corrupted.nonzero(as_tuple=True)[0].tolist():
        ref = big["target"][b][big["target"][b].ne(pad)]
        got = first[b][: len(ref)]
        assert got[-1] == ref[-1] == task.target_dictionary.eos()
        changed += int((got[:-1] != ref[:-1]).sum())
        total += len(ref) - 1
    assert 0.15 < changed / total < 0.22  # 0.2, less the random tokens that equal the original
    # the sampled rows come from the base model: they end in </s> and use the dictionary's words
    for b in (~corrupted).nonzero(as_tuple=True)[0].tolist()[:5]:
        row = first[b][first[b].ne(pad)]
        assert row[-1] == task.target_dictionary.eos() and len(row) >= 1
    again = task.first_pass(big, model, seed=5)
    assert torch.equal(first, again)  # seeded


def test_incremental_decoding_equals_full_recomputation(cadec_checkpoint, data_bin):
    model, task = load(cadec_checkpoint, data_bin)
    sample = batch(task)
    net = dict(sample["net_input"])
    net["first_pass"] = sample["target"]
    prev = net.pop("prev_output_tokens")
    encoder_out = model.encoder(**net)
    full, _ = model.decoder(prev, encoder_out=encoder_out)
    state = {}
    steps = []
    for t in range(prev.size(1)):
        out, _ = model.decoder(prev[:, : t + 1], encoder_out=encoder_out, incremental_state=state)
        steps.append(out[:, -1])
    inc = torch.stack(steps, dim=1)
    keep = sample["target"].ne(task.target_dictionary.pad())
    assert torch.allclose(full[keep], inc[keep], atol=1e-4)


def test_bad_inputs_are_one_line(data_bin, base_model, cadec_checkpoint, tmp_path):
    cases = [
        (tmp_path / "missing.pt", [], "missing.pt: --base-model checkpoint not found"),
        (None, [], "--base-model: give the sentence-level base checkpoint"),
        (cadec_checkpoint, [], "task 'cadec_translation'"),
        (None, ["--arch", "contextual_transformer_tiny"], "trains a cadec_transformer"),
        (base_model, ["--cadec-p", "1.5"], "--cadec-p"),
    ]
    for base, extra, message in cases:
        proc = train_cadec(data_bin, tmp_path / "ckpt", base, *extra, check=False)
        err = [text for text in proc.stderr.splitlines() if text.strip()]
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-1500:]
        assert message in err[-1], err[-1]
        assert not (tmp_path / "ckpt").exists()


def test_a_base_with_context_or_another_dictionary_is_refused(data_bin, raw_corpus, tmp_path, zoo):
    from tests.helpers import preprocess, write_corpus

    proc = train_cadec(data_bin, tmp_path / "c1", zoo.checkpoint("target_context_1"), check=False)
    assert proc.returncode == 1 and "must be context-agnostic" in proc.stderr.splitlines()[-1]
    other_raw = tmp_path / "raw2"
    other_raw.mkdir()
    write_corpus(other_raw, seed=1, sizes=(("train", 4), ("valid", 2), ("test", 2)))
    (other_raw / "train.en").write_text((other_raw / "train.en").read_text() + "zebra giraffe lion\n")
    (other_raw / "train.fr").write_text((other_raw / "train.fr").read_text() + "zèbre girafe lion\n")
    (other_raw / "train.docids").write_text((other_raw / "train.docids").read_text() + "extra\n")
    other_bin = preprocess(other_raw, tmp_path / "bin2")
    other = tmp_path / "other"
    train(other_bin, other, "-s", "en", "-t", "fr", epochs=1)
    proc = train_cadec(data_bin, tmp_path / "c2", other / "checkpoint_last.pt", check=False)
    assert proc.returncode == 1 and "source dictionary" in proc.stderr.splitlines()[-1], proc.stderr[-800:]
    assert "differs from the data" in proc.stderr.splitlines()[-1]


def test_two_pass_translation(cadec_checkpoint, base_model, data_bin, raw_corpus):
    from commandkit.documents import document_starts
    from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
    from contextual_mt.backends.fairseq.translator import DocumentTranslator
    from contextual_mt.inference.decoding import DecodingOptions

    src = (raw_corpus / "test.en").read_text().splitlines()
    ids = (raw_corpus / "test.docids").read_text().splitlines()
    model = DocumentModel.load(FairseqModelOptions(str(cadec_checkpoint), data=str(data_bin), cpu=True))
    assert model.cadec and model.source_context_size == model.target_context_size == 2
    two_pass = DocumentTranslator(model, options=DecodingOptions(beam=3)).translate(src, ids, progress=False)
    full = DocumentTranslator(model, options=DecodingOptions(beam=3, incremental=False)).translate(
        src, ids, progress=False
    )
    assert two_pass == full  # incremental decoding of both passes = recomputing everything
    base = DocumentTranslator(
        FairseqModelOptions(str(base_model), data=str(data_bin), cpu=True), options=DecodingOptions(beam=3)
    ).translate(src, ids, progress=False)
    starts = document_starts(ids)
    first = [i for i in range(len(src)) if starts[i] == i]
    # a document's first sentence has no context: it keeps the base translation
    assert [two_pass[i] for i in first] == [base[i] for i in first]
    no_context = DocumentTranslator(
        FairseqModelOptions(
            str(cadec_checkpoint), data=str(data_bin), source_context_size=0, target_context_size=0, cpu=True
        ),
        options=DecodingOptions(beam=3),
    )
    assert no_context.translate(src, ids, progress=False) == base


def test_fairseq_generate_points_to_the_two_pass_commands(cadec_checkpoint, data_bin):
    proc = run(
        [
            str(BIN / "fairseq-generate"),
            str(data_bin),
            "--user-dir",
            USER_DIR,
            "--task",
            "cadec_translation",
            "-s",
            "en",
            "-t",
            "fr",
            "--path",
            str(cadec_checkpoint),
            "--gen-subset",
            "test",
            "--cpu",
        ],
        check=False,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "contextual-mt translate" in proc.stderr.splitlines()[-1]


def test_two_passes_and_scoring_in_bfloat16(cadec_checkpoint, data_bin, raw_corpus):
    """--dtype casts the whole CADec checkpoint (its frozen base included): both passes and the
    scoring run in bfloat16, with float32 log-probabilities close to float32's."""
    import numpy as np

    from commandkit.documents import document_starts
    from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
    from contextual_mt.backends.fairseq.scoring import scoring_backend
    from contextual_mt.backends.fairseq.translator import DocumentTranslator
    from contextual_mt.inference.decoding import DecodingOptions

    src, ref, ids = ((raw_corpus / f"test.{x}").read_text().splitlines() for x in ("en", "fr", "docids"))
    out = {}
    for dtype in ("float32", "bfloat16"):
        model = DocumentModel.load(
            FairseqModelOptions(str(cadec_checkpoint), data=str(data_bin), cpu=True, dtype=dtype)
        )
        assert model.cadec and {p.dtype for p in model.model.parameters()} == {getattr(torch, dtype)}
        hyps = DocumentTranslator(model, options=DecodingOptions(beam=3)).translate(src, ids, progress=False)
        backend = scoring_backend(model)
        backend.load(src, ref, document_starts(ids))
        everything = list(range(len(src)))
        out[dtype] = hyps, backend.token_log_probs(everything, context=True)
    (h32, s32), (h16, s16) = out["float32"], out["bfloat16"]
    # measured: 12 of 13 lines identical, log-probabilities within 0.02
    assert len(h16) == len(src) and np.mean([a == b for a, b in zip(h32, h16, strict=True)]) >= 0.75
    assert all(s16[i].dtype == np.float64 for i in s16)
    assert max(np.abs(s32[i] - s16[i]).max() for i in s32) < 0.1
