"""``translate --unit document`` with a Hugging Face model: each chunk of whole sentences (cut by
``inference.document_unit``) is one source text translated in one generation, laid out as a
sentence is (``HFDocumentTranslator.prompt``): seq2seq, the previous chunk's source joined before
the chunk on the encoder side and its translation forced as the decoder's prefix; decoder-only,
the previous chunk as one example pair of the prompt template (or one user/assistant turn of the
chat template). The previous chunk is read where it fits the model's positions with room for
the translation, and when ``--source/target-context-size`` are not 0. Batching and generation
are the sentence translator's."""

from __future__ import annotations

from typing import Iterator, Optional, Sequence, Tuple

from contextual_mt.backends.hf.model import HFModel
from contextual_mt.backends.hf.translator import HFDocumentTranslator
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.decoding import DecodingOptions
from contextual_mt.inference.interface import ChunkRequest


class HFChunkTranslator:
    def __init__(self, hf: HFModel, options: Optional[DecodingOptions] = None):
        self.hf = hf
        self.sentences = HFDocumentTranslator(hf, options)
        self.options = self.sentences.options
        # a chunk reads at most the previous chunk (both sides for a decoder-only model: one pair)
        self.n_src, self.n_tgt = min(self.sentences.n_src, 1), min(self.sentences.n_tgt, 1)

    def source_tokens(self, text: str) -> int:
        return len(self.sentences.layout.lm_ids(text, special=False))

    def overhead(self) -> int:
        """Positions taken whatever the source: the special tokens (seq2seq) or the prompt
        template around an empty source without context (decoder-only)."""
        lay = self.sentences.layout
        if self.hf.seq2seq:
            return max(len(lay.source_ids("")), len(lay.start + self.sentences.lead))
        return len(lay.row("", "", [], [], 0, 0, lambda: "").prefix)

    def largest_source(self) -> int:
        # a decoder-only prompt also holds the first token of the translation
        return self.sentences.layout.limit - self.overhead() - (0 if self.hf.seq2seq else 1)

    def default_budget(self) -> int:
        """The largest n with overhead + n + (a * n + b) <= the model's positions."""
        o, limit = self.options, self.sentences.layout.limit
        n = int((limit - self.overhead() - o.max_len_b) / (1 + o.max_len_a))
        if n < 1:
            raise InputError(
                f"{self.hf.folder}: --max-len-a {o.max_len_a:g} and --max-len-b {o.max_len_b} leave no room for a "
                f"source text in its {limit} positions; lower them (or give --max-source-tokens)",
                code=Code.OPTION_VALUE,
            )
        return n

    def translate_chunks(self, requests: Sequence[ChunkRequest]) -> Iterator[Tuple[int, str]]:
        prompts = []
        for k, r in enumerate(requests):
            src_ctx = [r.context_source] if r.context_source is not None else []
            tgt_ctx = [r.context_target] if r.context_target is not None else []
            prompt = self.sentences.prompt(
                r.source, src_ctx, tgt_ctx, self.n_src, self.n_tgt, r.where, "the chunk", "lower --max-source-tokens"
            )
            prompts.append((k, prompt))
        for batch in self.sentences.batches(prompts):  # each batch's translations as soon as it is decoded
            yield from zip((k for k, _ in batch), self.sentences.generate([p for _, p in batch]), strict=True)
