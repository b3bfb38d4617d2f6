"""CTI from the two next-token distributions of the same target positions: the target token's
log-probability with and without context, KL(p_C || p_A), and the no-context foil."""

from __future__ import annotations

from typing import Tuple

import numpy as np
import torch


def compare_distributions(
    lp_context: torch.Tensor, lp_no_context: torch.Tensor, targets: torch.Tensor
) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``lp_*``: log-softmax [positions, vocabulary] at the same target positions; ``targets``
    [positions]. Returns (log p_C(y), log p_A(y), KL(p_C || p_A), foil ids) as float64/int64
    numpy arrays. The foil is p_A's first choice, or its second when the first is y."""
    lp_c, lp_a = lp_context.float(), lp_no_context.float()
    y = targets.view(-1, 1)
    kl = (lp_c.exp() * (lp_c - lp_a)).sum(-1).clamp_min(0.0)  # >= 0 in exact arithmetic
    top2 = lp_a.topk(2, dim=-1).indices
    foil = torch.where(top2[:, 0] == targets, top2[:, 1], top2[:, 0])
    return (
        lp_c.gather(-1, y).squeeze(-1).double().cpu().numpy(),
        lp_a.gather(-1, y).squeeze(-1).double().cpu().numpy(),
        kl.double().cpu().numpy(),
        foil.cpu().numpy().astype(np.int64),
    )
