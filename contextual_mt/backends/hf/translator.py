"""Document translation with a Hugging Face model, in the waves of ``inference.waves`` (the t-th
sentence of every document in one wave), its context the previous sources and the model's own
previous translations (or the references), laid out as for scoring (``inputs``). ``generate``
decodes each batch with beam search and incremental decoding; a seq2seq batch holds forced target
prefixes of one length (no padding inside the decoder), a decoder-only batch is padded on the left.
``prompt``, ``batches`` and ``generate`` are also what ``--unit document`` translates a chunk of
sentences with (``document_translator``)."""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import torch

from commandkit.documents import group_by_document
from contextual_mt.backends.hf.inputs import InputLayout, lm_context_sizes
from contextual_mt.backends.hf.model import HFModel
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.batching import filled, length_batches
from contextual_mt.inference.context_trim import last_sentences, nearest_fitting
from contextual_mt.inference.decoding import DecodingOptions
from contextual_mt.inference.waves import Item, Translations, decode_documents


class HFDocumentTranslator:
    def __init__(self, hf: HFModel, options: Optional[DecodingOptions] = None):
        self.hf = hf
        self.options = options or DecodingOptions()
        self.layout = InputLayout(hf)
        self.n_src, self.n_tgt = lm_context_sizes(hf, hf.options.source_context_size, hf.options.target_context_size)
        tok = hf.tokenizer
        self.pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
        if hf.seq2seq:
            self.lead = self.layout.target_parts("x")[0]  # the target language code, if any

    def translate(
        self,
        sources: Sequence[str],
        docids: Sequence[str],
        gold_targets: Optional[Sequence[str]] = None,
        progress: bool = True,
        source_name: str = "source",
    ) -> Translations:
        docs = group_by_document(list(range(len(sources))), list(docids))

        def decode_wave(wave: List[Item], predicted: Sequence[Optional[str]]) -> Iterator[List[Tuple[int, str]]]:
            requests = []
            for i, prev in wave:
                if not sources[i].strip():
                    yield [(i, "")]
                    continue
                # predicted: only the nearest n_tgt are read (and decoded before; not so without target context)
                targets = (
                    [gold_targets[j] for j in prev]
                    if gold_targets is not None
                    else filled(predicted, last_sentences(prev, self.n_tgt))
                )
                src_ctx = [sources[j] for j in prev]
                where = f"{source_name}:{i + 1}"
                requests.append((i, self.prompt(sources[i], src_ctx, targets, self.n_src, self.n_tgt, where)))
            for batch in self.batches(requests):
                yield list(zip((i for i, _ in batch), self.generate([p for _, p in batch]), strict=True))

        predicted, record, rounds = decode_documents(
            docs,
            len(sources),
            decode_wave,
            self.options,
            torch.device(self.hf.device).type,
            predicted_context=gold_targets is None and self.n_tgt > 0,
            target_context_size=self.n_tgt,
            empty="",
            desc="translate",
            progress=progress,
        )
        return Translations((p or "" for p in predicted), record, rounds)

    def max_new_tokens(self, source_length: int) -> int:
        o = self.options
        return max(1, int(o.max_len_a * source_length + o.max_len_b))

    def prompt(
        self,
        source: str,
        src_ctx: Sequence[str],
        tgt_ctx: Sequence[str],
        n_src: int,
        n_tgt: int,
        where: str,
        what: str = "the sentence",
        fix: str = "split the line",
    ) -> Tuple:
        """(encoder ids or None, forced decoder ids / prompt, new tokens allowed) of ``source``
        with the nearest context (up to ``n_src``/``n_tgt`` of ``src_ctx``/``tgt_ctx``, oldest
        first) that leaves room for the translation; ``where`` (file:line) names it in the error."""
        lay, limit = self.layout, self.layout.limit

        def attempt(n_src: int, n_tgt: int) -> Tuple[bool, Tuple]:
            sc, tc = last_sentences(src_ctx, n_src), last_sentences(tgt_ctx, n_tgt)
            if self.hf.seq2seq:
                encoder = lay.source_ids(self.hf.options.separator.join([*sc, source]))
                prefix = lay.start + self.lead + lay.target_context_ids(tc)
                fits = len(encoder) <= limit
                wanted = self.max_new_tokens(len(lay.source_ids(source)))
            else:
                encoder, prefix = None, lay.row(source, "", sc, tc, n_src, n_tgt, lambda: where).prefix
                fits = True
                wanted = self.max_new_tokens(len(lay.lm_ids(source, special=False)))
            room = limit - len(prefix)
            # context goes before the translation's room; without context, what room is left
            fits = fits and room >= 1 and (room >= wanted or (n_src == 0 and n_tgt == 0))
            return fits, (encoder, prefix, min(wanted, room))

        def error(_) -> InputError:
            return InputError(
                f"{where}: {what} does not fit in the {limit} positions of {self.hf.folder}; {fix}", code=Code.TOO_LONG
            )

        return nearest_fitting(min(n_src, len(src_ctx)), min(n_tgt, len(tgt_ctx)), attempt, error)

    def batches(self, requests: List[Tuple[Any, Tuple]]) -> Iterator[List[Tuple[Any, Tuple]]]:
        """Batches of similar length (``--batch-size``, ``--max-tokens``); the rows of a seq2seq
        batch share the length of their forced prefix (no padding inside the decoder), and the rows
        of any batch their room for new tokens (``generate`` takes one limit per batch): so a row's
        translation never depends on the rows beside it (parallel decoding relies on it)."""
        sentences, tokens = self.options.batching(wide=False)
        size = [len(r[1][0] or ()) + len(r[1][1]) for r in requests]
        groups: Dict[Tuple[int, int], List[int]] = {}
        for k, r in enumerate(requests):
            groups.setdefault((len(r[1][1]) if self.hf.seq2seq else 0, r[1][2]), []).append(k)
        for _, members in sorted(groups.items()):
            for batch in length_batches(members, size.__getitem__, sentences, tokens):
                yield [requests[k] for k in batch]

    @torch.no_grad()
    def generate(self, prompts: Sequence[Tuple]) -> List[str]:
        hf, o, device = self.hf, self.options, self.hf.device
        new = min(p[2] for p in prompts)  # one limit per batch (``batches`` groups rows by it: all the same)
        new = max(new, 1)
        kwargs: Dict = {
            "num_beams": o.beam,
            "max_new_tokens": new,
            "length_penalty": o.lenpen,
            "do_sample": False,
            "early_stopping": o.beam > 1,
            "pad_token_id": self.pad,
        }
        if hf.seq2seq:
            enc = [p[0] for p in prompts]
            width = max(len(e) for e in enc)
            ids = torch.tensor([list(e) + [self.pad] * (width - len(e)) for e in enc], device=device)
            mask = torch.tensor([[1] * len(e) + [0] * (width - len(e)) for e in enc], device=device)
            decoder = torch.tensor([list(p[1]) for p in prompts], device=device)
            with hf.attention():
                out = hf.model.generate(input_ids=ids, attention_mask=mask, decoder_input_ids=decoder, **kwargs)
            cut = decoder.shape[1]
        else:
            width = max(len(p[1]) for p in prompts)
            ids = torch.tensor([[self.pad] * (width - len(p[1])) + list(p[1]) for p in prompts], device=device)
            mask = torch.tensor([[0] * (width - len(p[1])) + [1] * len(p[1]) for p in prompts], device=device)
            end = self._end_ids()
            if end:
                kwargs["eos_token_id"] = end
            with hf.attention():
                out = hf.model.generate(input_ids=ids, attention_mask=mask, **kwargs)
            cut = width
        texts = hf.tokenizer.batch_decode(out[:, cut:], skip_special_tokens=True)
        return [self._clean(t) for t in texts]

    def _end_ids(self) -> List[int]:
        """Generation stops at every end token the model declares, at the chat template's end of
        the answer, and at a template's one-token end string."""
        t = self.hf.prompt
        ids = self.hf.end_token_ids()
        if t.chat and self.layout.chat_end[-1] not in ids:
            ids.append(self.layout.chat_end[-1])
        if not t.chat and t.end not in ("eos", ""):
            end = list(self.layout.lm_ids(t.end, special=False))
            if len(end) == 1:  # a one-token end string (a newline) stops generation; longer ones are cut after
                ids.append(end[0])
        return ids

    def _clean(self, text: str) -> str:
        t = self.hf.template
        if t is not None and not t.chat and t.end not in ("eos", "") and t.end in text:
            text = text[: text.index(t.end)]
        return " ".join(text.split())
