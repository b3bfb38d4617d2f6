"""The HF scoring backend against a plain per-example computation with transformers forward
passes (one sentence, one forward, full logits), for a Marian, an M2M100 (forced language
code), a GPT-2 with the plain prompt and a GPT-2 with a chat template."""

import json
import math

import numpy as np
import pytest
import torch

from contextual_mt.analysis.cxmi import CxmiOptions, run_cxmi
from contextual_mt.analysis.pcxmi_scorer import split_words
from contextual_mt.backends.hf.options import HFModelOptions
from contextual_mt.backends.hf.scoring import HFScoringBackend
from contextual_mt.contrastive.evaluate import ContrastiveOptions, run_contrastive
from tests.hf_models import EN, FR, write_voita_set

STARTS = np.array([0] * 6 + [6] * 6)


def log_probs(logits: torch.Tensor, first: int, tokens) -> np.ndarray:
    """log p of ``tokens`` predicted from positions first, first + 1, ..."""
    lp = torch.log_softmax(logits.float(), -1)
    return np.array([lp[first + t, tok].item() for t, tok in enumerate(tokens)])


@torch.no_grad()
def seq2seq_reference(folder, source, target, src_ctx=None, tgt_ctx=None, src_lang=None, tgt_lang=None):
    """One example as the issue defines it: context joined by a space, target context forced
    after the decoder start (and language code), the target tokenized alone, EOS scored."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    if src_lang:
        tok.src_lang, tok.tgt_lang = src_lang, tgt_lang
    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    enc = tok(" ".join(([src_ctx] if src_ctx else []) + [source]), return_tensors="pt").input_ids
    labels = tok(text_target=target).input_ids
    plain = tok(text_target=target, add_special_tokens=False).input_ids
    lead = labels[: len(labels) - len(plain) - 1]
    ctx = tok(text_target=tgt_ctx, add_special_tokens=False).input_ids if tgt_ctx else []
    forced = [model.config.decoder_start_token_id, *lead, *ctx]
    scored = [*plain, labels[-1]]
    logits = model(input_ids=enc, decoder_input_ids=torch.tensor([forced + scored[:-1]])).logits[0]
    return log_probs(logits, len(forced) - 1, scored)


@torch.no_grad()
def lm_reference(folder, prompt: str, target: str, end_ids):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    p = tok(prompt).input_ids
    scored = tok(target, add_special_tokens=False).input_ids + list(end_ids)
    logits = model(input_ids=torch.tensor([p + scored[:-1]])).logits[0]
    return log_probs(logits, len(p) - 1, scored)


def plain_prompt(source, ctx=None):
    pairs = f"English: {ctx[0]}\nFrench: {ctx[1]}\n" if ctx else ""
    return f"Translate from English to French.\n{pairs}English: {source}\nFrench:"


def chat_prompt(source, ctx=None):
    head = "Translate each of my messages. Reply with the translation only.\n\n"
    if ctx:
        return f"<|user|>{head}{ctx[0]}\n<|assistant|>{ctx[1]}\n<|user|>{source}\n<|assistant|>"
    return f"<|user|>{head}{source}\n<|assistant|>"


def merged(values: np.ndarray, n_pieces: int) -> np.ndarray:
    return np.append(values[:n_pieces], values[n_pieces:].sum())


def references(kind, folder, i):
    """(without context, with the previous sentence as context) log-probs of sentence i."""
    src, tgt = EN[i], FR[i]
    prev = (EN[i - 1], FR[i - 1]) if i not in (0, 6) else None
    if kind in ("marian", "m2m"):
        langs = {"src_lang": "en", "tgt_lang": "fr"} if kind == "m2m" else {}
        a = seq2seq_reference(folder, src, tgt, **langs)
        c = seq2seq_reference(folder, src, tgt, prev[0], prev[1], **langs) if prev else a
        return a, c
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    if kind == "gpt2":
        end, prompt, target = tok("\n", add_special_tokens=False).input_ids, plain_prompt, " " + tgt
    else:
        end, prompt, target = [tok.eos_token_id], chat_prompt, tgt
    a = lm_reference(folder, prompt(src), target, end)
    c = lm_reference(folder, prompt(src, prev), target, end) if prev else a
    return a, c


def options_for(kind, folder, **kw):
    if kind == "m2m":
        kw.update(src_lang="en", tgt_lang="fr")
    if kind == "gpt2":
        kw.update(src_lang="English", tgt_lang="French")
    return HFModelOptions(str(folder), **kw)


@pytest.mark.parametrize("kind", ["marian", "m2m", "gpt2", "gpt2_chat"])
def test_token_pcxmi_equals_per_example_forwards(kind, request, corpus, tmp_path):
    folder = request.getfixturevalue(kind if kind != "m2m" else "m2m")
    out = tmp_path / "p.jsonl"
    summary = run_cxmi(
        CxmiOptions(
            options_for(kind, folder),
            str(corpus / "src.en"),
            str(corpus / "ref.fr"),
            str(corpus / "docids"),
            str(out),
            max_tokens=300,
            progress=False,
        )
    )
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 12 and summary["sentences"] == 12
    differ = 0
    for i, r in enumerate(records):
        a, c = references(kind.replace("gpt2_chat", "chat"), folder, i)
        n = len(r["tokens"]) - 1
        expected = merged(c, n) - merged(a, n)
        assert len(r["token_pcxmi"]) == len(expected)
        np.testing.assert_allclose(r["token_pcxmi"], expected, atol=1e-4)
        assert r["logprob_context"] == pytest.approx(c.sum(), abs=1e-4)
        assert r["logprob_no_context"] == pytest.approx(a.sum(), abs=1e-4)
        assert r["sentence_pcxmi"] == pytest.approx(c.sum() - a.sum(), abs=1e-4)
        # words: the whitespace words of the reference, each the sum of its pieces
        assert r["words"] == FR[i].split()
        groups = split_words(r["tokens"][:-1])
        assert [w for w, _ in groups] == FR[i].split()
        np.testing.assert_allclose(r["word_pcxmi"], [expected[idx].sum() for _, idx in groups], atol=1e-4)
        assert r["context_sentences"] == ({"source": 0, "target": 0} if i in (0, 6) else {"source": 1, "target": 1})
        differ += i not in (0, 6) and abs(r["sentence_pcxmi"]) > 1e-3
    assert differ >= 8  # the context changes the scores (not two identical passes)
    assert summary["cxmi"] == pytest.approx(np.mean([r["sentence_pcxmi"] for r in records]))


def test_base_2_and_inseq_pcxmi(marian, corpus, tmp_path):
    """--log-base 2 gives bits; Inseq's pcxmi step function, -log2(p_orig / p_contrast), equals
    ours in bits when its original input is the one without context and the contrast the one
    with context (and is its negative with the roles swapped)."""
    out = tmp_path / "b.jsonl"
    run_cxmi(
        CxmiOptions(
            HFModelOptions(str(marian)),
            str(corpus / "src.en"),
            str(corpus / "ref.fr"),
            str(corpus / "docids"),
            str(out),
            log_base="2",
            progress=False,
        )
    )
    r = json.loads(out.read_text().splitlines()[3])
    a, c = references("marian", marian, 3)
    inseq = -np.log2(np.exp(a) / np.exp(c))  # orig: without context, contrast: with context
    np.testing.assert_allclose(r["token_pcxmi"], inseq, atol=1e-4)
    np.testing.assert_allclose(r["token_pcxmi"], (c - a) / math.log(2), atol=1e-4)


def test_fast_output_layer_is_checked_and_a_mismatch_takes_the_full_forward(marian, monkeypatch):
    backend = HFScoringBackend.open(HFModelOptions(str(marian)))
    assert backend.fast_head
    backend.load(EN, FR, STARTS)
    exact = backend.token_log_probs(range(12), context=True)
    # a model whose logits are not output_layer(hidden) + bias: the check sees it
    monkeypatch.setattr(HFScoringBackend, "_head", lambda self, h: self.hf.model.lm_head(h))
    fallback = HFScoringBackend.open(HFModelOptions(str(marian)))
    assert not fallback.fast_head
    fallback.load(EN, FR, STARTS)
    again = fallback.token_log_probs(range(12), context=True)
    for i in range(12):
        np.testing.assert_allclose(again[i], exact[i], atol=1e-5)


def test_batches_padding_and_both_passes_do_not_change_scores(gpt2_chat):
    backend = HFScoringBackend.open(HFModelOptions(str(gpt2_chat)), max_tokens=100000)
    backend.load(EN, FR, STARTS)
    together_a, together_c = backend.token_log_probs_both(range(12), range(12))
    backend.max_tokens = 1  # one row per batch: no padding at all
    for i in range(12):
        np.testing.assert_allclose(backend.token_log_probs([i], False)[i], together_a[i], atol=1e-5)
        np.testing.assert_allclose(backend.token_log_probs([i], True)[i], together_c[i], atol=1e-5)


def test_random_context_and_longer_context(marian, corpus, tmp_path):
    """Context size 2: the two previous sentences joined by the separator; the control draws
    context from the other document."""
    out = tmp_path / "k.jsonl"
    run_cxmi(
        CxmiOptions(
            HFModelOptions(str(marian), source_context_size=2, target_context_size=2),
            str(corpus / "src.en"),
            str(corpus / "ref.fr"),
            str(corpus / "docids"),
            str(out),
            progress=False,
        )
    )
    r = json.loads(out.read_text().splitlines()[4])
    assert r["context_sentences"] == {"source": 2, "target": 2}
    a = seq2seq_reference(marian, EN[4], FR[4])
    c = seq2seq_reference(marian, EN[4], FR[4], f"{EN[2]} {EN[3]}", f"{FR[2]} {FR[3]}")
    np.testing.assert_allclose(r["token_pcxmi"], c - a, atol=1e-4)
    rnd = tmp_path / "r.jsonl"
    run_cxmi(
        CxmiOptions(
            HFModelOptions(str(marian)),
            str(corpus / "src.en"),
            str(corpus / "ref.fr"),
            str(corpus / "docids"),
            str(rnd),
            random_context=True,
            progress=False,
        )
    )
    real = [json.loads(x)["sentence_pcxmi"] for x in (tmp_path / "k.jsonl").read_text().splitlines()]
    control = [json.loads(x)["sentence_pcxmi"] for x in rnd.read_text().splitlines()]
    assert control != real


def test_contrastive_losses_equal_per_example_forwards(marian, tmp_path):
    """Voita-format groups: each candidate's loss is -sum log p of its current sentence with its
    own previous sentence as context (the set's text as is: --detokenize no)."""
    path = write_voita_set(tmp_path / "deixis_test.json")
    entries = json.loads(path.read_text())
    summary = run_contrastive(
        ContrastiveOptions(
            HFModelOptions(str(marian)),
            "voita",
            str(path),
            str(tmp_path / "s.scores"),
            str(tmp_path / "s.json"),
            detokenize="no",
            progress=False,
        )
    )
    losses = [float(x) for x in (tmp_path / "s.scores").read_text().splitlines()]
    expected = []
    for e in entries:
        src_ctx, src = e["src"].split(" _eos ")
        for d in e["dst"]:
            tgt_ctx, tgt = d.split(" _eos ")
            expected.append(-seq2seq_reference(marian, src, tgt, src_ctx, tgt_ctx).sum())
    np.testing.assert_allclose(losses, expected, atol=1e-4)
    right = sum(losses[2 * k] < losses[2 * k + 1] for k in range(len(entries)))
    assert summary["right"] == right and summary["hf_model"] == str(marian)


def test_pieces_rebuild_the_reference_for_sentencepiece_and_byte_level(marian, gpt2):
    for folder, kw in ((marian, {}), (gpt2, {"src_lang": "English", "tgt_lang": "French"})):
        backend = HFScoringBackend.open(HFModelOptions(str(folder), **kw))
        text = ["Où est la gare ?", "C'est très joli ."]
        pieces = backend.load(["a", "b"], text, np.array([0, 0]))
        for p, t in zip(pieces, text, strict=True):
            assert "".join(x.replace("▁", "") for x in p) == t.replace(" ", "")
            assert [w for w, _ in split_words(p)] == t.split()


def test_each_distinct_source_is_encoded_once_per_batch(marian):
    """Contrastive candidates of one source share its encoder pass."""
    from contextual_mt.inference.interface import ContextPair

    backend = HFScoringBackend.open(HFModelOptions(str(marian)), max_tokens=100000)
    pairs = [ContextPair(EN[i], t, (EN[i - 1],), (FR[i - 1],)) for i in (1, 2, 3) for t in (FR[i], FR[i] + " !")]
    backend.load_pairs(pairs, where=str)
    encoder, rows = backend.hf.model.get_encoder(), []
    original = encoder.forward

    def counting(*args, **kwargs):
        rows.append(kwargs["input_ids"].shape[0])
        return original(*args, **kwargs)

    encoder.forward = counting
    scores = backend.pair_log_probs(range(6))
    assert rows == [3]
    for k, p in enumerate(pairs):
        expected = seq2seq_reference(marian, p.source, p.target, p.source_context[0], p.target_context[0])
        np.testing.assert_allclose(scores[k], expected, atol=1e-4)
