"""contextual-mt contrastive: losses equal fairseq-generate --score-reference on the same pairs,
the accuracy follows the authors' rules (computed here independently from the scores file),
context sizes, normalisation, resuming."""

import json
import math
import re
import shutil

import numpy as np
import pytest

from commandkit.documents import document_starts
from contextual_mt.backends.fairseq.model import FairseqModelOptions
from contextual_mt.contrastive.evaluate import ContrastiveOptions, run_contrastive
from contextual_mt.errors import InputError
from tests.helpers import BIN, USER_DIR, run

SWAP = {"il": "elle", "elle": "il"}


def variant(target: str) -> str:
    """A fluent alternative: the other pronoun, else another adjective."""
    words = target.split()
    if words[0] in SWAP:
        words[0] = SWAP[words[0]]
    else:
        words[-2] = "rouge" if words[-2] != "rouge" else "grand"
    return " ".join(words)


def planted_like_set(raw_corpus, context: int = 2):
    """Voita-format groups from the test split: every sentence with a previous one, the
    reference and a variant, in random order; context = the previous ``context`` sentences."""
    src = (raw_corpus / "test.en").read_text().splitlines()
    ref = (raw_corpus / "test.fr").read_text().splitlines()
    starts = document_starts((raw_corpus / "test.docids").read_text().splitlines())
    rng = np.random.default_rng(0)
    entries = []
    for i in range(len(src)):
        if i == starts[i]:
            continue
        lo = max(int(starts[i]), i - context)
        dst = [ref[i], variant(ref[i])]
        true_ind = int(rng.integers(2))
        if true_ind:
            dst.reverse()
        entries.append(
            {
                "src": " _eos ".join([*src[lo:i], src[i]]),
                "dst": [" _eos ".join([*ref[lo:i], d]) for d in dst],
                "true_ind": true_ind,
                "ctx_dist": i - lo,
            }
        )
    return entries


def fairseq_scores(entries, data_bin, ckpt, tmp_path, size=2):
    """``size``: both context sizes, or (source, target)."""
    """Sum of fairseq-generate --score-reference positional scores for every candidate: each
    candidate is a document of its context sentences and itself; its last sentence is scored."""
    raw = tmp_path / "fs-raw"
    raw.mkdir()
    src, tgt, ids, last = [], [], [], []
    for n, e in enumerate(entries):
        s_parts = e["src"].split(" _eos ")
        for k, d in enumerate(e["dst"]):
            t_parts = d.split(" _eos ")
            src += s_parts
            tgt += t_parts
            ids += [f"{n}-{k}"] * len(s_parts)
            last.append(len(src) - 1)
    for name, lines in (("test.en", src), ("test.fr", tgt), ("test.docids", ids)):
        (raw / name).write_text("\n".join(lines) + "\n")
    dest = tmp_path / "fs-bin"
    run(
        [
            str(BIN / "fairseq-preprocess"),
            "-s",
            "en",
            "-t",
            "fr",
            "--srcdict",
            str(data_bin / "dict.en.txt"),
            "--tgtdict",
            str(data_bin / "dict.fr.txt"),
            "--testpref",
            str(raw / "test"),
            "--destdir",
            str(dest),
            "--workers",
            "1",
        ]
    )
    shutil.copy(raw / "test.docids", dest / "test.en-fr.docids")
    src_size, tgt_size = size if isinstance(size, tuple) else (size, size)
    sizes = ["--source-context-size", str(src_size), "--target-context-size", str(tgt_size)]
    out = run(
        [
            str(BIN / "fairseq-generate"),
            str(dest),
            "--user-dir",
            USER_DIR,
            "--task",
            "document_translation",
            *sizes,
            "--path",
            str(ckpt),
            "--score-reference",
            "--batch-size",
            "7",
            "--cpu",
            "--gen-subset",
            "test",
        ]
    ).stdout
    # fairseq-generate prints base-2 log-probabilities
    scores = {
        int(m.group(1)): sum(float(x) for x in m.group(2).split()) * math.log(2)
        for m in re.finditer(r"^P-(\d+)\t(.*)$", out, re.M)
    }
    return [scores[i] for i in last]


def contrastive(tmp_path, ckpt, data_bin, test_set, name="s", fmt="voita", **kw):
    model = FairseqModelOptions(
        str(ckpt), data=str(data_bin), source_context_size=kw.pop("src", None), target_context_size=kw.pop("tgt", None)
    )
    options = ContrastiveOptions(
        model,
        fmt,
        str(test_set),
        str(tmp_path / f"{name}.scores"),
        str(tmp_path / f"{name}.json"),
        progress=False,
        **kw,
    )
    return run_contrastive(options), [float(x) for x in (tmp_path / f"{name}.scores").read_text().splitlines()]


@pytest.fixture(scope="module")
def voita_set(raw_corpus, tmp_path_factory):
    entries = planted_like_set(raw_corpus)
    path = tmp_path_factory.mktemp("voita") / "pronoun_test.json"
    path.write_text(json.dumps(entries))
    return path, entries


def test_losses_equal_fairseq_score_reference(dynamic_model, data_bin, voita_set, tmp_path):
    path, entries = voita_set
    summary, losses = contrastive(tmp_path, dynamic_model, data_bin, path, batch_size=5)
    expected = fairseq_scores(entries, data_bin, dynamic_model, tmp_path)
    assert len(losses) == len(expected) == sum(len(e["dst"]) for e in entries)
    assert max(abs(a + b) for a, b in zip(losses, expected, strict=True)) < 1e-3  # loss = -sum log p
    assert summary["source_context_size"] == summary["target_context_size"] == 2
    assert "negative sum" in summary["loss"] and summary["normalize"] is False


def test_accuracy_is_the_argmin_rule_on_the_written_scores(dynamic_model, data_bin, voita_set, tmp_path):
    path, entries = voita_set
    summary, losses = contrastive(tmp_path, dynamic_model, data_bin, path)
    at, right, by_dist = 0, [], {}
    for e in entries:  # the official rule, recomputed from the file
        n = len(e["dst"])
        ok = int(np.argmin(losses[at : at + n])) == e["true_ind"]
        right.append(ok)
        by_dist.setdefault(str(e["ctx_dist"]), []).append(ok)
        at += n
    assert summary["groups"] == len(entries) and summary["candidates"] == at
    assert summary["accuracy"] == pytest.approx(np.mean(right))
    assert {k: v["accuracy"] for k, v in summary["by"]["context distance"].items()} == pytest.approx(
        {k: np.mean(v) for k, v in by_dist.items()}
    )
    assert list(summary["by"]["phenomenon"]) == ["pronoun"]  # from the file name
    assert summary["accuracy"] > 0.5  # the model has learnt il/elle from context


def test_context_zero_is_the_sentence_level_model(dynamic_model, data_bin, voita_set, tmp_path):
    path, entries = voita_set
    summary, losses = contrastive(tmp_path, dynamic_model, data_bin, path, src=0, tgt=0)
    assert summary["source_context_size"] == summary["target_context_size"] == 0
    # without context the two candidates' scores do not depend on where the set puts context
    bare = [
        {
            "src": e["src"].split(" _eos ")[-1],
            "dst": [d.split(" _eos ")[-1] for d in e["dst"]],
            "true_ind": e["true_ind"],
        }
        for e in entries
    ]
    (tmp_path / "bare_set.json").write_text(json.dumps(bare))
    _, bare_losses = contrastive(tmp_path, dynamic_model, data_bin, tmp_path / "bare_set.json", name="bare")
    assert losses == bare_losses
    expected = fairseq_scores(bare, data_bin, dynamic_model, tmp_path, size=0)
    assert max(abs(a + b) for a, b in zip(losses, expected, strict=True)) < 1e-3


def test_normalize_divides_by_the_token_count(dynamic_model, data_bin, voita_set, tmp_path):
    path, entries = voita_set
    _, sums = contrastive(tmp_path, dynamic_model, data_bin, path, name="sum")
    summary, means = contrastive(tmp_path, dynamic_model, data_bin, path, name="mean", normalize=True)
    lengths = [len(d.split(" _eos ")[-1].split()) + 1 for e in entries for d in e["dst"]]  # words + </s>
    assert means == pytest.approx([s / n for s, n in zip(sums, lengths, strict=True)], abs=2e-6)
    assert summary["normalize"] is True and "mean" in summary["loss"]


def test_resume_keeps_scored_candidates_and_refuses_another_computation(dynamic_model, data_bin, voita_set, tmp_path):
    path, _entries = voita_set
    _, full = contrastive(tmp_path, dynamic_model, data_bin, path, name="full")
    partial = tmp_path / "r.scores.partial"
    from contextual_mt.contrastive.evaluate import contrastive_fingerprint

    model = FairseqModelOptions(str(dynamic_model), data=str(data_bin))
    fp = contrastive_fingerprint(ContrastiveOptions(model, "voita", str(path), "x", "y"), False)
    planted = {"line": 1, "logprob": -123.0, "tokens": 5}  # a value no model gives: was it kept?
    partial.write_text(json.dumps({"fingerprint": fp}) + "\n" + json.dumps(planted) + "\n")
    _, resumed = contrastive(tmp_path, dynamic_model, data_bin, path, name="r")
    assert resumed[0] == 123.0 and resumed[1:] == full[1:] and not partial.exists()
    partial.write_text(json.dumps({"fingerprint": {**fp, "detokenized": True}}) + "\n" + json.dumps(planted) + "\n")
    with pytest.raises(InputError, match=r"different computation.*detokenized"):
        contrastive(tmp_path, dynamic_model, data_bin, path, name="r")
    _, fresh = contrastive(tmp_path, dynamic_model, data_bin, path, name="r", resume=False)
    assert fresh == full


def test_candidates_the_model_cannot_tell_apart_are_refused(dynamic_model, data_bin, tmp_path, caplog):
    # both wrong words are outside the tiny vocabulary: the two candidates become the same tokens
    entries = [
        {
            "src": "i see the cat . _eos it is big .",
            "dst": ["je vois le chat . _eos il est grand .", "je vois le chat . _eos il est grand ."],
            "true_ind": 0,
        },
        {"src": "it is big .", "dst": ["il est zzyzx .", "il est qwvkj ."], "true_ind": 1},
    ]
    entries[0]["dst"][1] = entries[0]["dst"][1].replace("grand", "petit")
    path = tmp_path / "oov_set.json"
    path.write_text(json.dumps(entries))
    with pytest.raises(
        InputError,
        match=r"oov_set.json: entry 1: candidates 0 and 1 are the same tokens.*"
        r"1 of 2 groups",
    ):
        contrastive(tmp_path, dynamic_model, data_bin, path)
    assert "2 of 4 pairs contain words missing from the dictionary: 'zzyzx', 'qwvkj' (mapped to <unk>)" in caplog.text
    assert not list(tmp_path.glob("s.*"))


def test_a_candidate_listed_twice_is_scored_once_and_ties(dynamic_model, data_bin, tmp_path):
    # as in Voita et al.'s ellipsis_infl: one string twice (two grammatical cases, one surface form)
    entries = [
        {
            "src": "i see the cat . _eos it is big .",
            "dst": [
                "je vois le chat . _eos il est grand .",
                "je vois le chat . _eos il est petit .",
                "je vois le chat . _eos il est grand .",
            ],
            "true_ind": 2,
        },
        {"src": "it is big .", "dst": ["il est grand .", "elle est grande .", "il est grand ."], "true_ind": 0},
    ]
    path = tmp_path / "ellipsis_infl.json"
    path.write_text(json.dumps(entries))
    summary, losses = contrastive(tmp_path, dynamic_model, data_bin, path, batch_size=1)  # copies in other batches
    assert losses[0] == losses[2] and losses[3] == losses[5] and losses[0] != losses[1]
    assert summary["groups_with_identical_candidates"] == 2 and summary["candidates"] == 6
    right = [int(np.argmin(losses[0:3])) == 2, int(np.argmin(losses[3:6])) == 0]  # the official rule
    assert right[0] is False and summary["right"] == sum(right)


@pytest.fixture(scope="module")
def multi_encoder_model(data_bin, tmp_path_factory):
    from tests.helpers import train

    save = tmp_path_factory.mktemp("multi_ckpt")
    train(
        data_bin,
        save,
        "-s",
        "en",
        "-t",
        "fr",
        "--multi-encoder",
        "--source-context-size",
        "1",
        "--target-context-size",
        "2",
        "--sample-context-size",
        epochs=1,
    )
    return save / "checkpoint_last.pt"


def test_multi_encoder_losses_equal_fairseq(multi_encoder_model, data_bin, voita_set, tmp_path):
    path, entries = voita_set
    summary, losses = contrastive(tmp_path, multi_encoder_model, data_bin, path, batch_size=4)
    assert (summary["source_context_size"], summary["target_context_size"]) == (1, 2)
    expected = fairseq_scores(entries, data_bin, multi_encoder_model, tmp_path, size=(1, 2))
    assert max(abs(a + b) for a, b in zip(losses, expected, strict=True)) < 1e-3


def test_each_distinct_source_is_encoded_once_per_batch(dynamic_model, data_bin, voita_set):
    from contextual_mt.backends.fairseq.model import DocumentModel
    from contextual_mt.backends.fairseq.scoring import FairseqScoringBackend
    from contextual_mt.contrastive.evaluate import score_candidates
    from contextual_mt.contrastive.formats import get_format

    groups = get_format("voita").read(str(voita_set[0]), ())
    pairs = [c for g in groups for c in g.candidates]
    backend = FairseqScoringBackend(
        DocumentModel.load(FairseqModelOptions(str(dynamic_model), data=str(data_bin), cpu=True))
    )
    backend.load_pairs(pairs, where=str)
    encoder = backend.model.model.encoder
    rows, original = [], encoder.forward

    def counting(src_tokens, *args, **kwargs):
        rows.append(src_tokens.size(0))
        return original(src_tokens, *args, **kwargs)

    encoder.forward = counting
    try:
        scored = [r for records in score_candidates(backend, range(len(pairs)), 64, progress=False) for r in records]
    finally:
        encoder.forward = original
    assert len(scored) == len(pairs) == 2 * len(groups)
    distinct = len({(p.source, p.source_context[-2:]) for p in pairs})
    assert sum(rows) == distinct < len(pairs)  # both candidates of a group read one encoding


def test_multi_encoder_in_bfloat16(multi_encoder_model, data_bin, voita_set, tmp_path):
    """--dtype bfloat16 with a multi-encoder checkpoint: float32 losses close to float32's, the
    summary names the dtype, and the float32 scores are not reused for it."""
    path, _ = voita_set
    runs = {}
    for dtype in ("float32", "bfloat16"):
        options = ContrastiveOptions(
            FairseqModelOptions(str(multi_encoder_model), data=str(data_bin), dtype=dtype),
            "voita",
            str(path),
            str(tmp_path / "s.scores"),
            str(tmp_path / "s.json"),
            progress=False,
            skip_up_to_date=True,
        )
        runs[dtype] = run_contrastive(options), [float(x) for x in (tmp_path / "s.scores").read_text().splitlines()]
    (s32, l32), (s16, l16) = runs["float32"], runs["bfloat16"]
    assert (s32["dtype"], s16["dtype"], s16["fingerprint"]["dtype"]) == ("float32", "bfloat16", "bfloat16")
    assert json.loads((tmp_path / "s.json").read_text())["dtype"] == "bfloat16"
    assert l16 != l32 and max(abs(a - b) for a, b in zip(l32, l16, strict=True)) < 0.2  # a sentence's summed loss
