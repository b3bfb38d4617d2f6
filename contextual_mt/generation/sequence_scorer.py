"""Reference scoring (``--score-reference``) for targets that carry a context prefix.

fairseq's SequenceScorer assumes the non-pad target tokens form one contiguous run from the
start; here the target-context positions are padding, so scores are gathered by mask.
"""
from __future__ import annotations

from typing import Dict, List

import torch


class ContextSequenceScorer:
    """Scores the current target sentence given its (gold) context; averages an ensemble
    in probability space like fairseq's scorer."""

    def __init__(self, tgt_dict, compute_alignment: bool = False):
        self.pad = tgt_dict.pad()
        self.eos = tgt_dict.eos()
        self.compute_alignment = compute_alignment

    @torch.no_grad()
    def token_log_probs(self, models, sample) -> torch.Tensor:
        """log p(target_t | ...) for every target position (padding positions included)."""
        target = sample["target"]
        avg = None
        for model in models:
            model.eval()
            net_output = model(**sample["net_input"])
            lprobs = model.get_normalized_probs(net_output, log_probs=True, sample=sample)
            scores = lprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1).float()
            avg = scores if avg is None else torch.logaddexp(avg, scores)
        if len(models) > 1:
            avg = avg - torch.log(torch.tensor(float(len(models))))
        return avg

    @torch.no_grad()
    def generate(self, models, sample, **kwargs) -> List[List[Dict]]:
        scores = self.token_log_probs(models, sample)
        target = sample["target"]
        keep = target.ne(self.pad)
        hypos = []
        for i in range(target.size(0)):
            positional = scores[i][keep[i]]
            hypos.append(
                [
                    {
                        "tokens": target[i][keep[i]],
                        "score": positional.sum() / max(len(positional), 1),
                        "attention": None,
                        "alignment": None,
                        "positional_scores": positional,
                    }
                ]
            )
        return hypos

