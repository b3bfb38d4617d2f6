"""Beam search that stays a real beam search after a forced target-context prefix.

fairseq forces a prefix by keeping one candidate per beam, so when the prefix ends all beams
hold the same hypothesis, and the first free step would fill the beam with copies of the same
token. Like fairseq's own step 0, the first free step of each sentence here expands beam 0 only.
"""

from __future__ import annotations

import math
from typing import Optional

from fairseq.search import BeamSearch
from torch import Tensor


class PrefixBeamSearch(BeamSearch):
    def __init__(self, tgt_dict, prefix_lengths: Optional[Tensor] = None):
        super().__init__(tgt_dict)
        # indexed like fairseq's original_batch_idxs (the sample ids when the batch has them)
        self.prefix_lengths = prefix_lengths

    def step(
        self,
        step: int,
        lprobs: Tensor,
        scores: Optional[Tensor],
        prev_output_tokens: Optional[Tensor] = None,
        original_batch_idxs: Optional[Tensor] = None,
    ):
        if step > 0 and self.prefix_lengths is not None and original_batch_idxs is not None:
            lengths = self.prefix_lengths.to(lprobs.device)[original_batch_idxs]
            first_free = lengths.eq(step)
            if first_free.any():
                lprobs = lprobs.clone()
                lprobs[first_free, 1:, :] = -math.inf
        return super().step(step, lprobs, scores, prev_output_tokens, original_batch_idxs)
