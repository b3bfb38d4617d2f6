"""attribute with a fairseq checkpoint: the batched CTI and CCI against plain per-example
computations written here independently (one sentence, one token at a time, full forwards)."""

import numpy as np
import pytest
import torch

from commandkit.documents import document_starts
from contextual_mt.attribution.interface import CueRequest
from contextual_mt.backends.fairseq.attribution import FairseqAttributionBackend
from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions


@pytest.fixture(scope="module", params=[2, 0], ids=["source-context-2", "source-context-0"])
def loaded(request, dynamic_model, raw_corpus, data_bin):
    # without source context, the rows of a sentence share one encoder pass (another code path)
    model = DocumentModel.load(
        FairseqModelOptions(str(dynamic_model), data=str(data_bin), source_context_size=request.param)
    )
    backend = FairseqAttributionBackend(model, max_tokens=64)  # small batches: several per call
    src = (raw_corpus / "test.en").read_text().splitlines()
    tgt = (raw_corpus / "test.fr").read_text().splitlines()
    ids = (raw_corpus / "test.docids").read_text().splitlines()
    starts = document_starts(ids)
    backend.load(src, tgt, starts)
    return model, backend, src, tgt, starts


def example(model, src, tgt, starts, i):
    """One sentence as the model reads it, built by hand: x[-k] <brk> .. x </s> and
    </s> y[-k] <brk> .. y; returns (encoder ids, decoder input ids, target ids, context positions)."""
    sd, td = model.src_dict, model.tgt_dict
    k_src = min(model.source_context_size, i - int(starts[i]))
    k = min(2, i - int(starts[i]))
    enc, dec, enc_ctx, dec_ctx = [], [td.eos()], [], []
    for j in range(i - k_src, i):
        for w in src[j].split():
            enc_ctx.append(len(enc))
            enc.append(sd.index(w))
        enc.append(sd.index("<brk>"))
    for j in range(i - k, i):
        for w in tgt[j].split():
            dec_ctx.append(len(dec))
            dec.append(td.index(w))
        dec.append(td.index("<brk>"))
    enc += [sd.index(w) for w in src[i].split()] + [sd.eos()]
    target = [td.index(w) for w in tgt[i].split()] + [td.eos()]
    prefix = len(dec) - 1  # decoder position of the first target token
    dec += target[:-1]
    return enc, dec, target, prefix, enc_ctx, dec_ctx


def forward(model, enc, dec, hook=None):
    net = model.models[0]
    net.eval()
    handles = (
        [
            m.register_forward_hook(hook)
            for m in {id(e): e for e in (net.encoder.embed_tokens, net.decoder.embed_tokens)}.values()
        ]
        if hook
        else []
    )
    try:
        logits, extra = net(
            src_tokens=torch.tensor([enc]), src_lengths=torch.tensor([len(enc)]), prev_output_tokens=torch.tensor([dec])
        )
    finally:
        for h in handles:
            h.remove()
    return torch.log_softmax(logits.double(), dim=-1)[0], extra


def test_cti_equals_two_full_forwards_per_sentence(loaded):
    model, backend, src, tgt, starts = loaded
    got = backend.contrast(range(len(src)))
    for i in range(len(src)):
        enc, dec, target, prefix, _, _ = example(model, src, tgt, starts, i)
        with torch.no_grad():
            lp_c = forward(model, enc, dec)[0][prefix : prefix + len(target)]
            e0, d0, _, p0, _, _ = example(model, src, tgt, np.arange(len(src)), i)  # no context
            lp_a = forward(model, e0, d0)[0][p0 : p0 + len(target)]
        y = torch.tensor(target)
        kl = (lp_c.exp() * (lp_c - lp_a)).sum(-1)
        c = got[i]
        assert np.allclose(c.log_prob_context, lp_c[range(len(y)), y].numpy(), atol=1e-4)
        assert np.allclose(c.log_prob_no_context, lp_a[range(len(y)), y].numpy(), atol=1e-4)
        assert np.allclose(c.kl, kl.numpy(), atol=1e-4)
        order = lp_a.argsort(dim=-1, descending=True)
        want = [int(o[1]) if int(o[0]) == t else int(o[0]) for o, t in zip(order, target, strict=True)]
        assert c.foil.tolist() == want


def gradient_loop(model, src, tgt, starts, i, t, foil, method):
    enc, dec, target, prefix, enc_ctx, dec_ctx = example(model, src, tgt, starts, i)
    leaves = []

    def hook(module, inputs, output):
        leaf = output.detach().requires_grad_(True)
        leaves.append(leaf)
        return leaf

    with torch.enable_grad():
        lp, _ = forward(model, enc, dec, hook)
        f = lp[prefix + t, target[t]] - (lp[prefix + t, foil] if foil is not None else 0)
        f.backward()
    enc_leaf, dec_leaf = leaves
    reduce = (lambda e: e.grad.norm(dim=-1)) if method == "saliency" else (lambda e: (e * e.grad).norm(dim=-1))
    return np.concatenate(
        [reduce(enc_leaf)[0, enc_ctx].detach().numpy(), reduce(dec_leaf)[0, dec_ctx].detach().numpy()]
    )


@pytest.mark.parametrize("method", ["saliency", "input_x_gradient"])
@pytest.mark.parametrize("with_foil", [True, False])
def test_cci_equals_a_per_token_gradient_loop(loaded, method, with_foil):
    model, backend, src, tgt, starts = loaded
    contrasts = backend.contrast(range(len(src)))
    requests = [
        CueRequest(i, t, int(contrasts[i].foil[t]) if with_foil else None)
        for i in range(len(src))
        if backend.context_tokens(i)
        for t in range(len(tgt[i].split()) + 1)
    ]
    assert len({r.index for r in requests}) >= 3
    got = backend.cue_scores(requests, method)  # one call: rows of many sentences and tokens batched
    for r, scores in zip(requests, got, strict=True):
        want = gradient_loop(model, src, tgt, starts, r.index, r.token, r.foil, method)
        assert len(scores) == len(backend.context_tokens(r.index)) == len(want)
        assert np.allclose(scores, want, atol=1e-4, rtol=1e-4), (r, scores, want)
        assert scores.max() > 0


def test_attention_equals_the_per_example_weights(loaded):
    model, backend, src, tgt, starts = loaded
    net = model.models[0]
    requests = [
        CueRequest(i, t) for i in range(len(src)) if backend.context_tokens(i) for t in range(len(tgt[i].split()) + 1)
    ]
    got = backend.cue_scores(requests, "attention")
    for r, scores in zip(requests, got, strict=True):
        enc, dec, _target, prefix, enc_ctx, dec_ctx = example(model, src, tgt, starts, r.index)
        kept = []
        attn = net.decoder.layers[-1].self_attn
        handle = attn.register_forward_hook(
            lambda m, a, kw, out, kept=kept: kept.append(m.forward(*a, **{**kw, "need_weights": True})[1]),
            with_kwargs=True,
        )
        try:
            with torch.no_grad():
                encoder_out = net.encoder(torch.tensor([enc]), src_lengths=torch.tensor([len(enc)]))
                _, extra = net.decoder(
                    torch.tensor([dec]), encoder_out=encoder_out, alignment_layer=len(net.decoder.layers) - 1
                )
        finally:
            handle.remove()
        p = prefix + r.token
        want = np.concatenate([extra["attn"][0][0, p, enc_ctx].numpy(), kept[0][0, p, dec_ctx].numpy()])
        assert np.allclose(scores, want, atol=1e-5)
        assert abs(extra["attn"][0][0, p].sum().item() - 1) < 1e-4  # weights of one position


def test_context_tokens_name_the_words_of_the_previous_sentences(loaded):
    model, backend, src, tgt, starts = loaded
    for i in range(len(src)):
        k = min(2, i - int(starts[i]))
        tokens = backend.context_tokens(i)
        for side, text in (("source", src), ("target", tgt)):
            for s in range(-min(k, model.source_context_size if side == "source" else 2), 0):
                words = [c.token for c in tokens if c.side == side and c.sentence == s]
                assert words == text[i + s].split()
                assert [c.position for c in tokens if c.side == side and c.sentence == s] == list(range(len(words)))
        assert {c.sentence for c in tokens} == set(range(-k, 0))


@pytest.mark.parametrize("max_tokens", [1, 100_000], ids=["one-slot-per-pass", "all-slots-in-one-pass"])
def test_one_forward_per_sentence_equals_the_per_token_loop(loaded, max_tokens):
    """Issue 41, item 1: the sentences' rows are read once each, not once per attributed token;
    every token's gradients (one backward pass each, or all in one vectorized pass) equal the loop's."""
    model, backend, src, tgt, starts = loaded
    net = model.models[0]
    requests = [CueRequest(i, t, 3) for i in range(len(src)) if backend.context_tokens(i) for t in range(3)]
    rows = []
    handle = net.decoder.embed_tokens.register_forward_hook(lambda m, i, o: rows.append(int(o.shape[0])))
    before = backend.max_tokens
    backend.max_tokens = max_tokens
    try:
        got = backend.cue_scores(requests, "input_x_gradient")
    finally:
        backend.max_tokens = before
        handle.remove()
    sentences = len({r.index for r in requests})
    encoder_calls = 2 if net.encoder.embed_tokens is net.decoder.embed_tokens else 1  # shared table: both sides
    assert sum(rows) == encoder_calls * sentences < len(requests)
    for r, scores in zip(requests, got, strict=True):
        want = gradient_loop(model, src, tgt, starts, r.index, r.token, r.foil, "input_x_gradient")
        np.testing.assert_allclose(scores, want, atol=1e-4, rtol=1e-4)
