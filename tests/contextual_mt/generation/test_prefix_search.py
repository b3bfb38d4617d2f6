"""After a forced prefix, beam search keeps distinct hypotheses."""

import torch
from fairseq.data import Dictionary
from fairseq.search import BeamSearch

from contextual_mt.backends.fairseq.generation.prefix_search import PrefixBeamSearch


def test_first_free_step_expands_one_beam_only():
    d = Dictionary()
    for i in range(10):
        d.add_symbol(f"w{i}")
    bsz, beam, vocab = 2, 3, len(d)
    torch.manual_seed(0)
    row = torch.randn(vocab).log_softmax(-1)
    lprobs = row.repeat(bsz, beam, 1)  # identical beams, as after a forced prefix
    scores = torch.zeros(bsz, beam, 2)
    step = 2
    stock = BeamSearch(d)
    _, tokens, beams = stock.step(step, lprobs.clone(), scores)
    assert len(set(tokens[0, :beam].tolist())) == 1  # stock: the same token from every beam
    ours = PrefixBeamSearch(d, prefix_lengths=torch.tensor([2, 5]))
    _, tokens, beams = ours.step(step, lprobs.clone(), scores, original_batch_idxs=torch.tensor([0, 1]))
    assert len(set(tokens[0, :beam].tolist())) == beam and set(beams[0].tolist()) == {0}
    assert len(set(tokens[1, :beam].tolist())) == 1  # row 1 is still inside its prefix
