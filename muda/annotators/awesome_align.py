"""Word alignment by the awesome-align method (Dou and Neubig, 2021): contextual embeddings from
a multilingual BERT layer, softmax extraction in both directions, and the intersection of
subword links above a threshold, mapped back to words. Batched; on GPU when present."""

from __future__ import annotations

from typing import List, Optional, Sequence

from commandkit.errors import Code, InputError
from muda.formats.pharaoh import Alignment


class AwesomeAligner:
    def __init__(
        self,
        model: str = "bert-base-multilingual-cased",
        layer: int = 8,
        threshold: float = 1e-3,
        batch_size: int = 32,
        device: Optional[str] = None,
    ):
        import torch
        from transformers import AutoModel, AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=True)
            self.model = AutoModel.from_pretrained(model, local_files_only=True)
        except (OSError, ValueError) as e:
            raise InputError(
                f"alignment model {model!r} not found locally ({type(e).__name__}); on a machine with network run "
                f"`huggingface-cli download {model}` (or save it and pass --align-model PATH), "
                f"or give pre-computed --alignments",
                code=Code.MODEL,
            ) from None
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model.to(self.device).eval()
        self.layer, self.threshold, self.batch_size = layer, threshold, batch_size

    def _embed(self, sentences: Sequence[Sequence[str]]):
        import torch

        enc = self.tokenizer(
            [list(s) for s in sentences], is_split_into_words=True, padding=True, truncation=True, return_tensors="pt"
        )
        word_ids = [enc.word_ids(b) for b in range(len(sentences))]
        with torch.no_grad():
            out = self.model(**{k: v.to(self.device) for k, v in enc.items()}, output_hidden_states=True)
        layer = min(self.layer, len(out.hidden_states) - 1)
        return out.hidden_states[layer], word_ids

    def align(self, src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]]) -> List[Alignment]:
        import torch

        if len(src) != len(tgt):
            raise ValueError("src and tgt must have the same number of sentences")
        result: List[Alignment] = []
        from tqdm import tqdm

        for b in tqdm(
            range(0, len(src), self.batch_size), desc="aligning", unit="batch", disable=len(src) <= 4 * self.batch_size
        ):
            s_batch, t_batch = src[b : b + self.batch_size], tgt[b : b + self.batch_size]
            todo = [k for k in range(len(s_batch)) if s_batch[k] and t_batch[k]]
            aligns: List[Alignment] = [set() for _ in s_batch]
            if todo:
                s_emb, s_ids = self._embed([s_batch[k] for k in todo])
                t_emb, t_ids = self._embed([t_batch[k] for k in todo])
                for r, k in enumerate(todo):
                    si = [p for p, w in enumerate(s_ids[r]) if w is not None]
                    ti = [p for p, w in enumerate(t_ids[r]) if w is not None]
                    sim = s_emb[r, si] @ t_emb[r, ti].T
                    both = (torch.softmax(sim, dim=-1) > self.threshold) & (torch.softmax(sim, dim=0) > self.threshold)
                    for a, c in both.nonzero().tolist():
                        aligns[k].add((s_ids[r][si[a]], t_ids[r][ti[c]]))
            result.extend(aligns)
        return result
