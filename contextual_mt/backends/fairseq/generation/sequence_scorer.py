"""Reference scoring (``--score-reference``) for targets that carry a context prefix.

fairseq's SequenceScorer assumes the non-pad target tokens form one contiguous run from the
start; here the target-context positions are padding, so scores are gathered by mask.
"""

from __future__ import annotations

from typing import Dict, List, Optional

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
        return self._ensemble(models, sample["target"], lambda model: model(**sample["net_input"]))

    @torch.no_grad()
    def shared_encoder_log_probs(
        self, models, encoder_input: Dict, expand: torch.Tensor, prev_output_tokens: torch.Tensor, target: torch.Tensor
    ) -> torch.Tensor:
        """The same, with each distinct source encoded once: row r of the target reads encoder
        row ``expand[r]`` (contrastive candidates of one source share its encoding)."""

        def forward(model):
            encoder_out = model.encoder.reorder_encoder_out(model.encoder(**encoder_input), expand)
            return model.decoder(prev_output_tokens, encoder_out=encoder_out)

        return self._ensemble(models, target, forward)

    @staticmethod
    def _ensemble(models, target: torch.Tensor, forward) -> torch.Tensor:
        avg: Optional[torch.Tensor] = None
        for model in models:
            model.eval()
            lprobs = model.get_normalized_probs(forward(model), log_probs=True, sample={"target": target})
            scores = lprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1).float()
            avg = scores if avg is None else torch.logaddexp(avg, scores)
        if avg is None:
            raise ValueError("no model to score with")
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
