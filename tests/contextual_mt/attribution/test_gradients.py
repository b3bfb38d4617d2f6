"""``gradients.slot_gradients`` and ``checkpointed`` on a small network of the test's own: every
slot's gradient equals a separate ``autograd.grad`` of that column alone, whatever the number
of slots per backward pass, with activation checkpointing or not."""

import pytest
import torch

from contextual_mt.attribution.gradients import Passes, checkpointed, slot_gradients, slot_width


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(6, 6) for _ in range(3))

    def forward(self, x):  # rows never mix: each row's values depend on its own input only
        for layer in self.layers:
            x = torch.tanh(layer(x)) + x
        return x


@pytest.mark.parametrize("checkpoint", [False, True])
@pytest.mark.parametrize("width", [1, 2, 5])
def test_each_slot_gets_the_gradient_of_its_own_column(width, checkpoint):
    net = Net()
    leaf = torch.randn(3, 4, 6, requires_grad=True)  # rows, positions, features
    with checkpointed(list(net.layers) if checkpoint else []):
        out = net(leaf)
    values = out[:, :, 0]  # [rows, slots]: 4 slots, each the first feature at one position
    count = Passes()
    got = torch.cat([g[0] for _first, g in slot_gradients(values, [leaf], width, count)])
    for s in range(4):
        (want,) = torch.autograd.grad(net(leaf)[:, s, 0].sum(), [leaf])
        torch.testing.assert_close(got[s], want)
    assert count.backward == -(-4 // width) and count.widest == min(width, 4) and count.slots == 4 * 3
    assert "forward" not in net.layers[0].__dict__  # the layers' own forward again after the block


def test_a_leaf_the_values_do_not_reach_gets_zeros():
    leaf, other = torch.randn(2, 3, requires_grad=True), torch.randn(2, 3, requires_grad=True)
    values = (leaf * 2)[:, :2]
    (_first, (g_leaf, g_other)), *_ = list(slot_gradients(values, [leaf, other], 2))
    assert torch.equal(g_other, torch.zeros(2, 2, 3))
    assert torch.equal(g_leaf[0, :, 0], torch.full((2,), 2.0)) and torch.equal(g_leaf[0, :, 1], torch.zeros(2))


def test_slot_width_keeps_slots_times_tokens_within_max_tokens():
    assert slot_width(1024, 100) == 10
    assert slot_width(1024, 5000) == 1  # a batch over the budget: one slot per pass
    assert slot_width(None, 100) == 1
