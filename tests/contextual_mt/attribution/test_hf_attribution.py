"""The HF attribution backend against plain per-example computations written here: one
sentence at a time, full ``transformers`` forwards, gradients from a hook of the test's own, and
the context tokens located by an independent rule (Marian: each sentence tokenized alone, the
pieces concatenate to the model input; GPT-2: the fast tokenizer's character offsets). Context
size 2/2 on the two documents of EN/FR (the second starts at sentence 7)."""

from typing import Dict, List, Tuple

import numpy as np
import pytest
import torch

from contextual_mt.attribution.interface import CueRequest
from contextual_mt.backends.hf.attribution import HFAttributionBackend
from contextual_mt.backends.hf.options import HFModelOptions
from tests.hf_models import EN, FR

STARTS = np.array([0] * 6 + [6] * 6)
K = 2


def options(kind, folder):
    extra = {"src_lang": "English", "tgt_lang": "French"} if kind == "gpt2" else {}
    return HFModelOptions(str(folder), source_context_size=K, target_context_size=K, **extra)


@pytest.fixture(scope="module", params=["marian", "gpt2"])
def setup(request):
    kind = request.param
    folder = request.getfixturevalue(kind)
    backend = HFAttributionBackend.open(options(kind, folder), max_tokens=300)
    backend.load(EN, FR, STARTS)
    return kind, folder, backend, Reference(kind, folder)


def input_embeddings(model, kind) -> List[torch.nn.Module]:
    """The distinct embedding modules a forward calls. Marian under transformers 4.57: one
    ``shared`` module called by the encoder and then the decoder; under transformers 5 the
    encoder and the decoder each call their own ``embed_tokens`` (the weights stay tied) and
    ``get_input_embeddings()`` is the encoder's alone, so hooking it would miss the decoder."""
    if kind != "marian":
        return [model.get_input_embeddings()]
    encoder, decoder = model.get_encoder().embed_tokens, model.get_decoder().embed_tokens
    return [encoder] if encoder is decoder else [encoder, decoder]


def context_of(i: int) -> Tuple[List[str], List[str]]:
    first = 0 if i < 6 else 6
    return EN[max(first, i - K) : i], FR[max(first, i - K) : i]


class Reference:
    """One example, as the issue defines it, with the model loaded with eager attention."""

    def __init__(self, kind, folder):
        from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

        self.kind = kind
        self.tok = AutoTokenizer.from_pretrained(folder)
        auto = AutoModelForSeq2SeqLM if kind == "marian" else AutoModelForCausalLM
        self.model = auto.from_pretrained(folder, attn_implementation="eager").eval()
        self.embeddings = input_embeddings(self.model, kind)

    def example(self, i: int, context: bool) -> Dict:
        """The inputs, the scored tokens, the first position predicting them, the number of plain
        target tokens, and per context sentence (source first, oldest first) its stream
        (0 encoder, 1 decoder) and positions."""
        tok = self.tok
        src, tgt = context_of(i) if context else ([], [])
        sentences = []
        if self.kind == "marian":
            enc, pos = [], 0
            for s in src:  # each sentence alone: its pieces concatenate to the encoder input
                ids = tok(s, add_special_tokens=False).input_ids
                sentences.append(("source", s, 0, list(range(pos, pos + len(ids)))))
                enc, pos = enc + ids, pos + len(ids)
            assert tok(" ".join([*src, EN[i]])).input_ids == enc + tok(EN[i]).input_ids
            forced = [self.model.config.decoder_start_token_id]
            for s in tgt:
                ids = tok(text_target=s, add_special_tokens=False).input_ids
                sentences.append(("target", s, 1, list(range(len(forced), len(forced) + len(ids)))))
                forced += ids
            plain = tok(text_target=FR[i], add_special_tokens=False).input_ids
            scored = tok(text_target=FR[i]).input_ids
            inputs = {
                "input_ids": torch.tensor([enc + tok(EN[i]).input_ids]),
                "decoder_input_ids": torch.tensor([forced + scored[:-1]]),
            }
            return {
                "inputs": inputs,
                "scored": scored,
                "first": len(forced) - 1,
                "plain": len(plain),
                "sentences": sentences,
            }
        pairs, spans = "", []
        head = "Translate from English to French.\n"
        for s, t in zip(src, tgt, strict=True):
            a = len(head) + len(pairs) + len("English: ")
            spans.append(("source", s, a, a + len(s)))
            b = a + len(s) + len("\nFrench: ")
            spans.append(("target", t, b, b + len(t)))
            pairs += f"English: {s}\nFrench: {t}\n"
        prompt = f"{head}{pairs}English: {EN[i]}\nFrench:"
        enc = tok(prompt, return_offsets_mapping=True)
        for side, s, a, b in spans:
            assert prompt[a:b] == s
            # a token is the sentence's when its characters are in the sentence's span (a space
            # token between two words included, the one before the sentence not)
            inside = [p for p, (x, y) in enumerate(enc.offset_mapping) if y > x and a <= x and y <= b]
            sentences.append((side, s, 1, inside))
        sentences.sort(key=lambda x: x[0] != "source")  # source side first (stable: oldest first)
        plain = tok(" " + FR[i], add_special_tokens=False).input_ids
        scored = plain + tok("\n", add_special_tokens=False).input_ids
        inputs = {"input_ids": torch.tensor([enc.input_ids + scored[:-1]])}
        return {
            "inputs": inputs,
            "scored": scored,
            "first": len(enc.input_ids) - 1,
            "plain": len(plain),
            "sentences": sentences,
        }

    @torch.no_grad()
    def log_softmax(self, i: int, context: bool) -> torch.Tensor:
        ex = self.example(i, context)
        logits = self.model(**ex["inputs"]).logits[0]
        return torch.log_softmax(logits.float(), -1)[ex["first"] : ex["first"] + len(ex["scored"])]

    def positions(self, ex) -> Tuple[np.ndarray, np.ndarray]:
        stream = np.array([s for _, _, s, ps in ex["sentences"] for _ in ps])
        pos = np.array([p for _, _, _, ps in ex["sentences"] for p in ps])
        return stream, pos

    def gradient_scores(self, i: int, token: int, foil, method: str) -> np.ndarray:
        ex = self.example(i, True)
        captured = []

        def hook(module, inputs, output):
            leaf = output.detach().requires_grad_(True)
            captured.append(leaf)
            return leaf

        handles = [m.register_forward_hook(hook) for m in self.embeddings]
        try:
            logits = self.model(**ex["inputs"]).logits[0, ex["first"] + token]
        finally:
            for h in handles:
                h.remove()
        # one output per stream (Marian: the encoder's, then the decoder's), never one stream twice
        assert len(captured) == (2 if self.kind == "marian" else 1)
        lp = torch.log_softmax(logits.float(), -1)
        value = lp[ex["scored"][token]] - (lp[foil] if foil is not None else 0)
        grads = torch.autograd.grad(value, captured)
        per_stream = []
        for e, g in zip(captured, grads, strict=True):
            v = g[0] if method == "saliency" else e[0] * g[0]
            per_stream.append(v.norm(dim=-1).detach().numpy())
        if len(per_stream) == 1:
            per_stream = per_stream * 2
        stream, pos = self.positions(ex)
        return np.array([per_stream[s][p] for s, p in zip(stream, pos, strict=True)])

    @torch.no_grad()
    def attention_scores(self, i: int, token: int) -> np.ndarray:
        ex = self.example(i, True)
        out = self.model(**ex["inputs"], output_attentions=True)
        at = ex["first"] + token
        if self.kind == "marian":
            per_stream = [out.cross_attentions[-1][0].mean(0)[at], out.decoder_attentions[-1][0].mean(0)[at]]
        else:
            per_stream = [out.attentions[-1][0].mean(0)[at]] * 2
        stream, pos = self.positions(ex)
        return np.array([per_stream[s][p].item() for s, p in zip(stream, pos, strict=True)])


def merge(v: np.ndarray, n: int) -> np.ndarray:
    return np.append(v[:n], v[n:].sum())


def requests_for(backend) -> List[CueRequest]:
    """Several sentences, several tokens each (the first, a middle one, the merged end)."""
    out = []
    for i in (1, 4, 8, 11):
        n = len(backend._with[i].pieces)
        for t, foil in ((0, None), (n // 2, 7), (n, None), (n, 5)):
            out.append(CueRequest(i, t, foil))
    return out


def test_context_tokens_are_the_sentences_pieces(setup):
    _kind, _folder, backend, ref = setup
    for i in range(12):
        tokens = backend.context_tokens(i)
        src, tgt = context_of(i)
        ex = ref.example(i, True)
        assert len(tokens) == len(backend._locate(i).position) == sum(len(ps) for *_, ps in ex["sentences"])
        _, expected = ref.positions(ex)
        np.testing.assert_array_equal(backend._locate(i).position, expected)
        for side, texts in (("source", src), ("target", tgt)):
            mine = [t for t in tokens if t.side == side]
            assert sorted({t.sentence for t in mine}) == list(range(-len(texts), 0))
            for j, text in enumerate(texts):
                sentence = [t for t in mine if t.sentence == j - len(texts)]
                assert [t.position for t in sentence] == list(range(len(sentence)))
                joined = "".join(t.token for t in sentence).replace("▁", "")
                assert joined == text.replace(" ", "")
        # source side first, oldest sentence first
        order = [(t.side != "source", t.sentence) for t in tokens]
        assert order == sorted(order)


def test_contrast_equals_per_example_forwards(setup):
    _kind, _folder, backend, ref = setup
    got = backend.contrast(range(12))
    without, within = backend.token_log_probs_both(range(12), range(12))
    for i in range(12):
        ex = ref.example(i, False)
        y = torch.tensor(ex["scored"])
        lp_a, lp_c = ref.log_softmax(i, False), ref.log_softmax(i, True)
        n = ex["plain"]
        kl = (lp_c.exp() * (lp_c - lp_a)).sum(-1).numpy()
        top = lp_a.argsort(-1, descending=True)[:, :2]
        foil = torch.where(top[:, 0] == y, top[:, 1], top[:, 0]).numpy()
        c = got[i]
        np.testing.assert_allclose(c.log_prob_context, merge(lp_c[torch.arange(len(y)), y].numpy(), n), atol=1e-4)
        np.testing.assert_allclose(c.log_prob_no_context, merge(lp_a[torch.arange(len(y)), y].numpy(), n), atol=1e-4)
        np.testing.assert_allclose(c.kl, merge(kl, n), atol=1e-4)
        np.testing.assert_array_equal(c.foil, foil[: n + 1])
        # the CXMI scorer's values, to 1e-5
        np.testing.assert_allclose(c.log_prob_context, within[i], atol=1e-5)
        np.testing.assert_allclose(c.log_prob_no_context, without[i], atol=1e-5)
        if i in (0, 6):
            np.testing.assert_array_equal(c.kl, 0)
    assert sum(float(got[i].kl.max()) > 1e-4 for i in range(12)) >= 8  # the context changes the distributions


@pytest.mark.parametrize("method", ["saliency", "input_x_gradient"])
def test_gradient_scores_equal_a_per_token_loop(setup, method):
    _kind, _folder, backend, ref = setup
    requests = requests_for(backend)
    got = backend.cue_scores(requests, method)
    assert all(g.dtype == np.float64 for g in got)
    for q, g in zip(requests, got, strict=True):
        expected = ref.gradient_scores(q.index, q.token, q.foil, method)
        assert len(g) == len(backend.context_tokens(q.index))
        np.testing.assert_allclose(g, expected, atol=1e-4, rtol=1e-4)
        assert np.abs(expected).max() > 0
    # foil and no foil attribute different quantities
    assert not np.allclose(got[2], got[3])


def test_attention_scores_equal_output_attentions(setup):
    _kind, _folder, backend, ref = setup
    requests = requests_for(backend)
    for q, g in zip(requests, backend.cue_scores(requests, "attention"), strict=True):
        np.testing.assert_allclose(g, ref.attention_scores(q.index, q.token), atol=1e-5)


@pytest.mark.parametrize("method", ["saliency", "input_x_gradient", "attention"])
def test_batch_independence(setup, method):
    _kind, _folder, backend, _ref = setup
    requests = requests_for(backend)
    together = backend.cue_scores(requests, method)
    for q, g in zip(requests, together, strict=True):
        np.testing.assert_allclose(backend.cue_scores([q], method)[0], g, atol=1e-6)
    # a sentence without context: no context tokens, nothing to score
    assert backend.cue_scores([CueRequest(0, 0)], method)[0].shape == (0,)


def test_attention_leaves_scoring_unchanged(setup):
    _kind, _folder, backend, _ref = setup
    before = backend.token_log_probs(range(12), context=True)
    backend.cue_scores(requests_for(backend)[:2], "attention")
    after = backend.token_log_probs(range(12), context=True)
    for i in range(12):
        np.testing.assert_array_equal(before[i], after[i])


def test_m2m100_language_codes_are_not_context_tokens(m2m):
    """M2M100: the source language code and EOS of the encoder input, the decoder start and the
    target language code are not context tokens; the pieces are the sentences'; CTI equals the
    CXMI scorer and the scores do not depend on the batch."""
    backend = HFAttributionBackend.open(
        HFModelOptions(str(m2m), src_lang="en", tgt_lang="fr", source_context_size=K, target_context_size=K),
        max_tokens=300,
    )
    backend.load(EN, FR, STARTS)
    special = set(backend.hf.tokenizer.all_special_ids)
    for i in range(12):
        row, loc = backend._with[i], backend._locate(i)
        src, tgt = context_of(i)
        for side, texts, ids, stream in (("source", src, row.encoder, 0), ("target", tgt, row.prefix, 1)):
            for j, text in enumerate(texts):
                mine = [t for t in loc.tokens if t.side == side and t.sentence == j - len(texts)]
                assert "".join(t.token for t in mine).replace("▁", "") == text.replace(" ", "")
            assert all(ids[p] not in special for p in loc.position[loc.stream == stream])
        if tgt:  # the whole forced target context: all the prefix but the start and the language code
            assert (loc.stream == 1).sum() == len(row.prefix) - 2
    got = backend.contrast(range(12))
    without, within = backend.token_log_probs_both(range(12), range(12))
    for i in range(12):
        np.testing.assert_allclose(got[i].log_prob_context, within[i], atol=1e-5)
        np.testing.assert_allclose(got[i].log_prob_no_context, without[i], atol=1e-5)
    requests = requests_for(backend)
    for method in ("saliency", "attention"):
        together = backend.cue_scores(requests, method)
        for q, g in zip(requests[::3], together[::3], strict=True):
            np.testing.assert_allclose(backend.cue_scores([q], method)[0], g, atol=1e-6)


class _RowsRead:
    """Counts the rows (batch entries) the model's input embeddings embed within the block."""

    def __init__(self, kind, backend):
        self.modules = input_embeddings(backend.hf.model, kind)
        self.rows = 0

    def __enter__(self):
        def count(module, inputs, output):
            self.rows += int(output.shape[0])

        self.handles = [m.register_forward_hook(count) for m in self.modules]
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()


@pytest.mark.parametrize("max_tokens", [1, 100_000], ids=["one-slot-per-pass", "all-slots-in-one-pass"])
@pytest.mark.parametrize("method", ["saliency", "input_x_gradient", "attention"])
def test_one_forward_per_sentence_equals_the_per_token_loop(setup, method, max_tokens):
    """Issue 41, item 1: a sentence with k attributed tokens is read once (not once per token);
    its k gradients come from backward passes of that one graph, one slot per pass or all in one
    vectorized pass, and equal the per-token reference."""
    kind, _folder, backend, ref = setup
    requests = requests_for(backend)  # 4 sentences, 4 tokens each
    before = backend.max_tokens
    backend.max_tokens = max_tokens
    try:
        with _RowsRead(kind, backend) as read:
            got = backend.cue_scores(requests, method)
    finally:
        backend.max_tokens = before
    calls_per_row = 2 if kind == "marian" else 1  # seq2seq: the encoder's and the decoder's embeddings
    assert read.rows == calls_per_row * len({q.index for q in requests}) < len(requests)
    for q, g in zip(requests, got, strict=True):
        if method == "attention":
            np.testing.assert_allclose(g, ref.attention_scores(q.index, q.token), atol=1e-5)
        else:
            np.testing.assert_allclose(g, ref.gradient_scores(q.index, q.token, q.foil, method), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("max_tokens", [1, 100_000], ids=["checkpointed", "whole-graph"])
def test_a_sentence_over_max_tokens_is_read_with_activation_checkpointing(setup, max_tokens):
    """Issue 41, item 2: a sentence longer than --max-tokens is a batch alone whose layers keep
    their inputs only (recomputed in each backward pass, one slot per pass); the scores are the
    per-token loop's all the same, and the backend says how it computed them."""
    from contextual_mt.attribution.gradients import Passes

    _kind, _folder, backend, ref = setup
    requests = requests_for(backend)
    before, backend.max_tokens, backend.passes = backend.max_tokens, max_tokens, Passes()
    try:
        got = backend.cue_scores(requests, "saliency")
    finally:
        backend.max_tokens = before
    sentences = len({q.index for q in requests})
    passes = backend.passes
    assert passes.sentences == sentences
    if max_tokens == 1:
        assert passes.forwards == passes.checkpointed == sentences
        assert passes.widest == 1 and passes.backward == len(requests)  # 4 tokens each: 4 passes of one slot
    else:
        assert passes.checkpointed == 0 and passes.forwards == 1 and passes.backward == 1 and passes.widest == 4
    for q, g in zip(requests, got, strict=True):
        np.testing.assert_allclose(g, ref.gradient_scores(q.index, q.token, q.foil, "saliency"), atol=1e-4, rtol=1e-4)


def test_a_model_without_checkpointable_layers_is_not_counted_as_checkpointed(setup, monkeypatch):
    """A sentence over --max-tokens of a model with no layer transformers can checkpoint keeps
    its whole graph: the run does not report (nor log) activation checkpointing it did not do."""
    from contextual_mt.attribution.gradients import Passes

    _kind, _folder, backend, ref = setup
    requests = requests_for(backend)
    monkeypatch.setattr(backend, "_layers", lambda: [])
    before, backend.max_tokens, backend.passes = backend.max_tokens, 1, Passes()
    try:
        got = backend.cue_scores(requests, "saliency")
    finally:
        backend.max_tokens = before
    assert backend.passes.forwards == len({q.index for q in requests}) and backend.passes.checkpointed == 0
    q = requests[0]
    np.testing.assert_allclose(got[0], ref.gradient_scores(q.index, q.token, q.foil, "saliency"), atol=1e-4, rtol=1e-4)
