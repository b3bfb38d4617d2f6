"""Context building, dynamic context size, CoWord dropout and the loss mask."""

import numpy as np
import pytest
import torch
from fairseq.data import Dictionary

from commandkit.documents import document_starts
from contextual_mt.backends.fairseq.data.context_dataset import ContextDataset, ContextOptions


def make_dict():
    d = Dictionary()
    for i in range(200):
        d.add_symbol(f"w{i}")
    d.add_symbol("<brk>")
    d.add_symbol("<mask>")
    return d


DICTIONARY = make_dict()
BRK, MASK, EOS, PAD = DICTIONARY.index("<brk>"), DICTIONARY.index("<mask>"), DICTIONARY.eos(), DICTIONARY.pad()


def sentences(n, length=3, offset=0):
    """Sentence i is [w(i*len)..] + </s>, so every token names its sentence."""
    return [
        torch.tensor([DICTIONARY.index(f"w{(offset + i * length + j) % 200}") for j in range(length)] + [EOS])
        for i in range(n)
    ]


def dataset(doc_ids, n_src=2, n_tgt=2, src_len=3, tgt_len=3, **kw):
    n = len(doc_ids)
    src, tgt = sentences(n, src_len), sentences(n, tgt_len, offset=100)
    return (
        ContextDataset(
            src,
            np.array([len(s) for s in src]),
            DICTIONARY,
            tgt,
            np.array([len(t) for t in tgt]),
            DICTIONARY,
            document_starts(doc_ids),
            ContextOptions(source_context_size=n_src, target_context_size=n_tgt, **kw),
        ),
        src,
        tgt,
    )


def expected_context(seqs, i, k):
    parts = [torch.cat([seqs[j][:-1], torch.tensor([BRK])]) for j in range(i - k, i)]
    return torch.cat(parts) if parts else torch.empty(0, dtype=torch.long)


@pytest.mark.parametrize("size", [0, 1, 2, 3])
def test_context_never_crosses_document_boundaries(size):
    ids = ["a", "a", "a", "b", "b", "c", "a", "a", "a", "a"]
    ds, src, tgt = dataset(ids, n_src=size, n_tgt=size)
    starts = document_starts(ids)
    for i in range(len(ids)):
        k = min(size, i - starts[i])
        item = ds[i]
        assert torch.equal(item["src_context"], expected_context(src, i, k)), i
        assert torch.equal(item["tgt_context"], expected_context(tgt, i, k)), i
        assert torch.equal(item["source"], src[i]) and torch.equal(item["target"], tgt[i])
        # lengths used for batching are those of the actual concatenation
        assert ds.size(i) == (len(item["src_context"]) + len(src[i]), len(item["tgt_context"]) + len(tgt[i]))
        assert ds.num_tokens(i) == max(ds.size(i))
    # the first sentence of the data, and of each document, has no context
    for first in (0, 3, 5, 6):
        assert len(ds[first]["src_context"]) == 0 and len(ds[first]["tgt_context"]) == 0


def test_source_and_target_sizes_are_independent():
    ds, _, _ = dataset(["d"] * 6, n_src=1, n_tgt=3)
    assert len(ds[5]["src_context"]) == 4 and len(ds[5]["tgt_context"]) == 12


def test_concatenated_source_layout():
    ds, src, _ = dataset(["d"] * 3, n_src=2, n_tgt=0)
    batch = ds.collater([ds[2]])
    tokens = batch["net_input"]["src_tokens"][0]
    want = torch.cat([src[0][:-1], torch.tensor([BRK]), src[1][:-1], torch.tensor([BRK]), src[2]])
    assert torch.equal(tokens, want)


def test_context_trimmed_to_max_positions_not_dropped():
    ds, _, _ = dataset(["d"] * 5, n_src=4, n_tgt=4, max_source_positions=9, max_target_positions=12)
    # each sentence is 4 tokens; 9 positions fit the sentence and one context sentence
    assert ds.src_k[4] == 1 and ds.tgt_k[4] == 2
    assert ds.src_sizes.max() <= 9 and ds.tgt_sizes.max() <= 12
    assert len(ds.filter_indices_by_size(np.arange(5), (9, 12))[0]) == 5


def test_dynamic_context_size_distribution():
    n = 40000
    ds, _, _ = dataset(["d"] * n, n_src=3, n_tgt=2, sample_context_size=True, seed=7)
    src_k, tgt_k = ds.src_k[10:], ds.tgt_k[10:]  # skip the start, where k is capped
    for k, m in ((src_k, 3), (tgt_k, 2)):
        freq = np.bincount(k, minlength=m + 1) / len(k)
        assert len(freq) == m + 1
        assert np.allclose(freq, 1 / (m + 1), atol=0.015), freq
    assert abs(np.corrcoef(src_k, tgt_k)[0, 1]) < 0.03  # independent draws
    # reproducible from the seed, different per epoch and per seed
    again, _, _ = dataset(["d"] * n, n_src=3, n_tgt=2, sample_context_size=True, seed=7)
    assert np.array_equal(again.src_k, ds.src_k)
    ds.set_epoch(2)
    assert not np.array_equal(again.src_k, ds.src_k)
    other, _, _ = dataset(["d"] * n, n_src=3, n_tgt=2, sample_context_size=True, seed=8)
    assert not np.array_equal(other.src_k, again.src_k)
    # batching sizes follow the sampled sizes of the current epoch
    assert np.array_equal(ds.src_sizes, 4 * (ds.src_k + 1))
    assert not ds.can_reuse_epoch_itr_across_epochs


def test_coword_dropout_rate_and_scope():
    ids = ["d"] * 2000
    ds, src, _ = dataset(ids, n_src=2, n_tgt=2, src_len=10, coword_dropout=0.3, seed=3)
    masked = total = 0
    for i in range(2, len(ids)):
        item = ds[i]
        assert torch.equal(item["src_context"], expected_context(src, i, 2))  # context untouched
        assert item["source"][-1] == EOS  # EOS never masked
        cur = item["source"][:-1]
        changed = cur != src[i][:-1]
        assert torch.all(cur[changed] == MASK)
        masked += int(changed.sum())
        total += len(cur)
    assert abs(masked / total - 0.3) < 0.01, masked / total
    # same seed and epoch -> same masks; a new epoch -> new masks
    assert torch.equal(ds[5]["source"], ds[5]["source"])
    first = torch.stack([ds[i]["source"] for i in range(2, 200)])
    ds.set_epoch(2)
    assert not torch.equal(first, torch.stack([ds[i]["source"] for i in range(2, 200)]))


def test_coword_dropout_never_masks_special_symbols():
    ds, _, _ = dataset(["d"] * 3, coword_dropout=1.0)
    tokens = torch.tensor([BRK, DICTIONARY.unk(), DICTIONARY.bos(), DICTIONARY.index("w5"), EOS])
    out = ds.apply_coword_dropout(tokens, np.zeros(len(tokens)))  # every uniform below p
    assert out.tolist() == [BRK, DICTIONARY.unk(), DICTIONARY.bos(), MASK, EOS]


def test_coword_dropout_whole_sentence():
    ds, _src, _ = dataset(["d"] * 4000, n_src=0, n_tgt=0, src_len=5, coword_dropout=0.25, coword_dropout_type="whole")
    whole = 0
    for i in range(4000):
        cur = ds[i]["source"][:-1]
        n_masked = int((cur == MASK).sum())
        assert n_masked in (0, len(cur))
        whole += n_masked == len(cur)
    assert abs(whole / 4000 - 0.25) < 0.03


def test_coword_dropout_off_without_probability():
    ds, src, _ = dataset(["d"] * 50, coword_dropout=0.0)
    assert all(torch.equal(ds[i]["source"], src[i]) for i in range(50))


def test_loss_mask_and_decoder_input():
    ds, _, tgt = dataset(["d"] * 3, n_src=0, n_tgt=2)
    batch = ds.collater([ds[2], ds[0]])
    order = batch["id"].tolist()
    row = order.index(2)
    prefix = expected_context(tgt, 2, 2)
    target = batch["target"][row]
    prev = batch["net_input"]["prev_output_tokens"][row]
    n = len(prefix)
    assert torch.all(target[:n] == PAD)  # no loss on context positions
    assert torch.equal(target[n : n + len(tgt[2])], tgt[2])
    assert torch.equal(prev[: n + len(tgt[2])], torch.cat([torch.tensor([EOS]), prefix, tgt[2][:-1]]))
    assert batch["ntokens"] == len(tgt[2]) + len(tgt[0])
    assert batch["prefix_lengths"][row] == n
    assert torch.equal(batch["tgt_prefix"][row][:n], prefix)


def test_loss_only_on_current_sentence():
    """The criterion's loss equals -sum log p over the current target tokens only."""
    from argparse import Namespace

    from fairseq.criterions.cross_entropy import CrossEntropyCriterion

    ds, _, tgt = dataset(["d"] * 4, n_src=1, n_tgt=2)
    batch = ds.collater([ds[i] for i in range(4)])
    vocab = len(DICTIONARY)
    torch.manual_seed(0)
    steps = batch["net_input"]["prev_output_tokens"].shape[1]
    logits = torch.randn(4, steps, vocab)

    class Model(torch.nn.Module):
        def forward(self, **net_input):
            return logits, None

        def get_normalized_probs(self, net_output, log_probs, sample=None):
            return torch.log_softmax(net_output[0], -1)

        def get_targets(self, sample, net_output):
            return sample["target"]

    task = Namespace(target_dictionary=DICTIONARY)
    crit = CrossEntropyCriterion(task, sentence_avg=False)
    loss, sample_size, _ = crit(Model(), batch, reduce=True)
    lp = torch.log_softmax(logits, -1)
    manual = 0.0
    for row, i in enumerate(batch["id"].tolist()):
        start = int(batch["prefix_lengths"][row])
        for t, tok in enumerate(tgt[i].tolist()):
            manual -= float(lp[row, start + t, tok])
    assert sample_size == sum(len(tgt[i]) for i in range(4))
    assert abs(float(loss) - manual) < 1e-3


def test_multi_encoder_batches_context_separately():
    ds, src, tgt = dataset(["d"] * 3, n_src=1, n_tgt=2, multi_encoder=True)
    batch = ds.collater([ds[2]])
    ni = batch["net_input"]
    assert torch.equal(ni["src_tokens"][0], src[2])
    assert torch.equal(ni["src_ctx_tokens"][0], expected_context(src, 2, 1))
    assert torch.equal(ni["tgt_ctx_tokens"][0], expected_context(tgt, 2, 2))
    assert torch.equal(batch["target"][0], tgt[2])
    assert batch["tgt_prefix"] is None


def test_coword_masks_do_not_depend_on_the_order_items_are_built():
    # data workers build items in any order and any process: an item's mask is a function of
    # (seed, epoch, index) only
    ds, _, _ = dataset(["d"] * 300, n_src=1, n_tgt=1, src_len=12, coword_dropout=0.4, seed=5)
    forward = [ds[i]["source"] for i in range(300)]
    backward = [ds[i]["source"] for i in reversed(range(300))][::-1]
    assert all(torch.equal(a, b) for a, b in zip(forward, backward, strict=True))
    again, _, _ = dataset(["d"] * 300, n_src=1, n_tgt=1, src_len=12, coword_dropout=0.4, seed=5)
    assert all(torch.equal(forward[i], again[i]["source"]) for i in range(300))
    other, _, _ = dataset(["d"] * 300, n_src=1, n_tgt=1, src_len=12, coword_dropout=0.4, seed=6)
    assert any(not torch.equal(forward[i], other[i]["source"]) for i in range(300))


def test_hashed_uniforms_are_uniform_and_independent_of_neighbours():
    from contextual_mt.backends.fairseq.data.context_dataset import hashed_uniforms

    u = hashed_uniforms(12345, np.arange(200_000))
    assert u.min() >= 0 and u.max() < 1
    counts, _ = np.histogram(u, bins=20, range=(0, 1))
    assert counts.min() > 0.95 * 10_000 and counts.max() < 1.05 * 10_000
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.01  # consecutive tokens are not correlated
    assert not np.array_equal(u[:100], hashed_uniforms(12346, np.arange(100)))
