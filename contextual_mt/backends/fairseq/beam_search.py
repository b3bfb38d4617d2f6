"""Beam search that starts after the target-context prefix.

The prefix (``</s> y[i-M] <brk> ... y[i-1] <brk>``) goes through the decoder in one parallel,
causally masked pass per sentence (not per beam, and not one step per token). Each
self-attention layer's keys and values for it are written into fairseq's incremental state,
so generation continues incrementally from there. Prefixes of different lengths are
right-padded; the padding stays masked in the cache, and positions are computed from the
non-pad tokens so every row continues at its own position. Hypothesis scores are normalised
over the current sentence only; as in fairseq's SequenceGenerator, a hypothesis ends only where
its </s> ranks among a step's first ``beam`` candidates (of ``2 * beam``). Log-probabilities
and scores are float32 whatever the model's dtype (fairseq's log-softmax upcasts half-precision
logits).
"""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence

import torch
import torch.nn as nn
from torch import Tensor


class TokenCountPositions(nn.Module):
    """Positions from the non-pad tokens of the whole decoder input, also in incremental mode
    (fairseq assumes no padding there). Identical to the wrapped module without padding."""

    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner
        self.max_positions = inner.max_positions

    def forward(self, tokens: Tensor, incremental_state=None, timestep=None, positions=None) -> Tensor:
        return self.inner(tokens)


def use_token_count_positions(decoder) -> None:
    if decoder.embed_positions is not None and not isinstance(decoder.embed_positions, TokenCountPositions):
        decoder.embed_positions = TokenCountPositions(decoder.embed_positions)


@torch.no_grad()
def prefill(model, encoder_out: Dict, prefix_tokens: Tensor, incremental_state: Dict) -> Tensor:
    """Run ``prefix_tokens`` (B x T, right-padded, starting with </s>) through the decoder once,
    store every self-attention layer's keys/values in ``incremental_state``, and return the
    log-probabilities of the next token for each row (at its last non-pad position)."""
    decoder = model.decoder
    pad = decoder.padding_idx
    captured: List[Optional[Tensor]] = [None] * len(decoder.layers)
    hooks = []
    for i, layer in enumerate(decoder.layers):

        def hook(module, args, kwargs, i=i):
            captured[i] = kwargs["key"] if "key" in kwargs else args[1]

        hooks.append(layer.self_attn.register_forward_pre_hook(hook, with_kwargs=True))
    try:
        features, extra = decoder(prefix_tokens, encoder_out=encoder_out, features_only=True)
    finally:
        for h in hooks:
            h.remove()
    padding = prefix_tokens.eq(pad)
    bsz, length = prefix_tokens.shape
    for layer, x in zip(decoder.layers, captured, strict=True):
        attn = layer.self_attn
        k = attn.k_proj(x).view(length, bsz, attn.num_heads, attn.head_dim).permute(1, 2, 0, 3)
        v = attn.v_proj(x).view(length, bsz, attn.num_heads, attn.head_dim).permute(1, 2, 0, 3)
        attn._set_input_buffer(
            incremental_state,
            {
                "prev_key": k.contiguous(),
                "prev_value": v.contiguous(),
                "prev_key_padding_mask": padding if padding.any() else None,
            },
        )
    last = (~padding).long().sum(1) - 1
    # only each row's last position needs the output projection (the vocabulary is large)
    logits = decoder.output_layer(features[torch.arange(bsz, device=last.device), last].unsqueeze(1))
    return model.get_normalized_probs((logits, extra), log_probs=True)[:, 0].float()


def _nan_error(model):
    from contextual_mt.errors import Code, InputError

    dtype = str(next(model.parameters()).dtype).replace("torch.", "")
    hint = (
        "its activations overflow that type's range; run it with --dtype float32"
        if dtype != "float32"
        else "are its weights finite?"
    )
    return InputError(f"beam search: the model in {dtype} gave NaN log-probabilities ({hint})", code=Code.MODEL)


def _normalized(score: float, length: int, lenpen: float) -> float:
    """``score / length ** lenpen`` in float32, as fairseq divides its float32 scores (so that
    hypotheses of different lengths compare as they do there)."""
    return (torch.tensor(score, dtype=torch.float32) / length**lenpen).item()


@torch.no_grad()
def beam_search(
    model,
    net_input: Dict[str, Tensor],
    prefixes: Sequence[Sequence[int]],
    beam: int = 5,
    lenpen: float = 1.0,
    max_lengths: Optional[Sequence[int]] = None,
    min_length: int = 1,
    incremental: bool = True,
) -> List[List[int]]:
    """Translate one batch; returns the best hypothesis of each row, without </s>.

    ``incremental=False`` recomputes the whole decoder input (prefix included) at every step;
    it gives the same output and exists to measure what incremental decoding saves."""
    decoder = model.decoder
    use_token_count_positions(decoder)
    pad, eos = decoder.padding_idx, decoder.dictionary.eos()
    bsz = len(prefixes)
    device = net_input["src_tokens"].device
    max_lengths = list(max_lengths or [200] * bsz)
    max_steps = max(max_lengths) + 1

    encoder_out = model.encoder(**net_input)
    width = 1 + max(len(p) for p in prefixes)
    prefix = torch.full((bsz, width), pad, dtype=torch.long, device=device)
    for i, p in enumerate(prefixes):
        prefix[i, 0] = eos
        if p:
            prefix[i, 1 : 1 + len(p)] = torch.tensor(p, dtype=torch.long, device=device)
    state: Dict = {}
    lprobs = prefill(model, encoder_out, prefix, state)  # B x V

    # expand to beams: row b*beam + k
    order = torch.arange(bsz, device=device).repeat_interleave(beam)
    encoder_out = model.encoder.reorder_encoder_out(encoder_out, order)
    decoder.reorder_incremental_state_scripting(state, order)
    lprobs = lprobs.index_select(0, order)
    tokens = prefix.index_select(0, order)
    scores = torch.full((bsz, beam), -math.inf, device=device)
    scores[:, 0] = 0.0  # all beams are equal at the start: expand the first only
    limits = torch.tensor(max_lengths, device=device).repeat_interleave(beam)
    finished: List[List[tuple]] = [[] for _ in range(bsz)]
    generated = torch.empty((bsz * beam, 0), dtype=torch.long, device=device)
    vocab = lprobs.size(-1)

    active = list(range(bsz))  # sentences still decoding; tensors hold len(active) * beam rows
    for step in range(max_steps):
        n = len(active)
        lprobs[:, pad] = -math.inf
        if step < min_length:
            lprobs[:, eos] = -math.inf
        at_limit = limits.le(step)
        if at_limit.any():  # force </s> where the row reached its length limit
            eos_col = lprobs[at_limit, eos].clone()
            lprobs[at_limit] = -math.inf
            lprobs[at_limit, eos] = torch.where(torch.isfinite(eos_col), eos_col, torch.zeros_like(eos_col))
        cand = (scores.view(-1, 1) + lprobs).view(n, beam * vocab)
        top_scores, top_idx = cand.topk(2 * beam, dim=1)
        ts, tt, tb = top_scores.tolist(), (top_idx % vocab).tolist(), (top_idx // vocab).tolist()
        if any(math.isnan(x) for row in ts for x in row):  # topk ranks NaN first: a row with one shows it
            raise _nan_error(model)
        new_rows, new_tokens, new_scores, still = [], [], [], []
        for i, b in enumerate(active):
            rows_b: List[int] = []
            tokens_b: List[int] = []
            scores_b: List[float] = []
            for rank, (s, t, k) in enumerate(zip(ts[i], tt[i], tb[i], strict=True)):
                if len(rows_b) == beam or s == -math.inf:
                    break
                row = i * beam + k
                if t == eos:
                    # as fairseq: a hypothesis ends only where its </s> ranks among the first
                    # `beam` candidates; one ranked lower is dropped (neither finished nor kept)
                    if rank < beam and len(finished[b]) < beam:
                        hyp = generated[row].tolist()
                        finished[b].append((_normalized(s, len(hyp) + 1, lenpen), hyp))
                    continue
                rows_b.append(row)
                tokens_b.append(t)
                scores_b.append(s)
            if len(finished[b]) >= beam or not rows_b:
                continue  # done: the sentence leaves the batch, as in fairseq
            while len(rows_b) < beam:  # fewer live candidates than beams: pad with dead ones
                rows_b.append(rows_b[0])
                tokens_b.append(pad)
                scores_b.append(-math.inf)
            still.append(b)
            new_rows += rows_b
            new_tokens += tokens_b
            new_scores += scores_b
        active = still
        if not active or step == max_steps - 1:
            break
        rows = torch.tensor(new_rows, device=device)
        scores = torch.tensor(new_scores, device=device).view(len(active), beam)
        new_tok = torch.tensor(new_tokens, device=device).unsqueeze(1)
        generated = torch.cat([generated.index_select(0, rows), new_tok], dim=1)
        tokens = torch.cat([tokens.index_select(0, rows), new_tok], dim=1)
        encoder_out = model.encoder.reorder_encoder_out(encoder_out, rows)
        limits = limits.index_select(0, rows)
        if incremental:
            decoder.reorder_incremental_state_scripting(state, rows)
            out = decoder(tokens, encoder_out=encoder_out, incremental_state=state)
        else:
            out = decoder(tokens, encoder_out=encoder_out)
        lprobs = model.get_normalized_probs(out, log_probs=True)[:, -1].float()

    results = []
    for b in range(bsz):
        # every sentence finishes: at its length limit only </s> is allowed
        results.append(max(finished[b], key=lambda h: h[0])[1] if finished[b] else [])
    return results
