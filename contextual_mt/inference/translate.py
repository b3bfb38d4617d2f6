"""Document translation with the model's own previous translations as target context.

Documents are decoded in waves: wave t translates the t-th sentence of every document that
has one, batched across documents, so each sentence's target context (its document's previous
translations) is ready when it is decoded. The context prefix goes through the decoder once per
sentence, in one parallel pass, and is cached for incremental decoding (inference.beam_search).

A CADec checkpoint decodes in two passes (Voita et al. 2019, §5.2): its frozen base model
translates every sentence first (one pass, batched by length); then, in waves, CADec refines
each sentence that has context, reading the base translation and the two-pass translations of
the previous sentences. A sentence without context keeps its base translation.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Union

import torch
from tqdm import tqdm

from contextual_mt.data.model_input import build_encoder_input
from contextual_mt.errors import ContextualMTError
from contextual_mt.inference.checkpoint import DocumentModel, ModelOptions
from contextual_mt.inference.decoding import DecodingOptions  # noqa: F401  (re-exported)
from contextual_mt.symbols import BRK
from muda.io import atomic_write_lines, check_line_count, document_spans, outputs, read_docids, read_lines

logger = logging.getLogger(__name__)


class DocumentTranslator:
    """Translates documents with a ``document_translation`` checkpoint.

    >>> translator = DocumentTranslator("checkpoints/ctx/checkpoint_best.pt", spm="spm.model")
    >>> translator.translate(["I see the car.", "It is red."], ["d1", "d1"])
    """

    def __init__(
        self,
        path: Union[str, DocumentModel],
        spm: Optional[str] = None,
        data: Optional[str] = None,
        source_context_size: Optional[int] = None,
        target_context_size: Optional[int] = None,
        options: Optional[DecodingOptions] = None,
        cpu: bool = False,
    ):
        """``path``: a checkpoint (loaded with the other arguments) or an already loaded model."""
        self.model = path if isinstance(path, DocumentModel) else DocumentModel.load(
            ModelOptions(path, spm, data, source_context_size, target_context_size, cpu))
        m = self.model
        self.task, self.cfg, self.models, self.device = m.task, m.cfg, m.models, m.device
        self.options = options or DecodingOptions()
        self.multi_encoder = m.multi_encoder
        self.src_dict, self.tgt_dict = m.src_dict, m.tgt_dict
        self.n_src, self.n_tgt = m.source_context_size, m.target_context_size
        self.src_codec, self.tgt_codec = m.src_codec, m.tgt_codec
        self.max_src, self.max_tgt = m.max_source_positions, m.max_target_positions
        self.cadec = m.cadec  # two passes: the frozen base model, then CADec's refinement

    # ------------------------------------------------------------------ encoding
    def encode_sources(self, lines: Sequence[str], name: str = "source") -> List[List[int]]:
        """Dictionary ids of each source line (without </s>). ``name`` (the file) is what
        warnings and errors name: a line too long for the model is an error."""
        unk = self.src_dict.unk()
        encoded, unk_lines = [], []
        for lineno, line in enumerate(lines, start=1):
            ids = self.src_codec.to_ids(self.src_codec.encode(line))
            if unk in ids:
                unk_lines.append(lineno)
            encoded.append(ids)
        self.model.check_fits([len(ids) + 1 for ids in encoded], name, "source")
        if unk_lines:
            logger.warning(
                "%s: %d lines contain pieces missing from the dictionary (mapped to <unk>), "
                "first at line %d", name, len(unk_lines), unk_lines[0],
            )
        return encoded

    def _context(self, previous: List[List[int]], k: int, brk: int, budget: int) -> List[int]:
        """The last k sentences of ``previous``, each closed by <brk>, trimmed to ``budget``."""
        chosen = previous[len(previous) - k:] if k > 0 else []
        while chosen and sum(len(s) + 1 for s in chosen) > budget:
            chosen = chosen[1:]
        return [t for s in chosen for t in (*s, brk)]

    # ------------------------------------------------------------------ decoding
    def _batch(self, rows: List[Dict]) -> Dict:
        def tensors(key: str) -> List[torch.Tensor]:
            return [torch.tensor(r[key], dtype=torch.long) for r in rows]

        return build_encoder_input(tensors("source"), tensors("src_ctx"), tensors("tgt_ctx"), self.src_dict.pad(),
                                   self.src_dict.eos(), self.multi_encoder, left_pad_source=True)

    @torch.no_grad()
    def _decode(self, rows: List[Dict]) -> List[List[int]]:
        from fairseq import utils
        from fairseq.data import data_utils

        from contextual_mt.inference.beam_search import beam_search

        net_input = self._batch(rows)
        if self.cadec:
            net_input["first_pass"] = data_utils.collate_tokens(
                [torch.tensor(r["first_pass"], dtype=torch.long) for r in rows], self.tgt_dict.pad(),
                self.tgt_dict.eos(), left_pad=False)
        if self.device.type == "cuda":
            net_input = utils.move_to_cuda(net_input)
        o = self.options
        prefixes = [[] if self.multi_encoder else r["tgt_ctx"] for r in rows]
        limits = [int(o.max_len_a * (len(r["source"]) - 1) + o.max_len_b) for r in rows]
        return beam_search(self.models[0], net_input, prefixes, beam=o.beam, lenpen=o.lenpen,
                           max_lengths=limits, incremental=o.incremental)

    @torch.no_grad()
    def first_pass(self, src_ids: List[List[int]], progress: bool = True) -> List[List[int]]:
        """CADec's first pass: the frozen base model's beam translation of every sentence, in one
        pass batched by length (no sentence waits for another)."""
        from fairseq import utils

        from contextual_mt.inference.beam_search import beam_search

        base, o, eos = self.models[0].base, self.options, self.src_dict.eos()
        out: List[List[int]] = [[] for _ in src_ids]
        todo = sorted((i for i in range(len(src_ids)) if src_ids[i]), key=lambda i: len(src_ids[i]))
        rows = [{"index": i, "source": src_ids[i] + [eos], "src_ctx": [], "tgt_ctx": []} for i in todo]
        bar = tqdm(total=len(rows), unit="sent", desc="first pass (base model)", disable=not progress)
        for chunk in self._chunks(rows):
            net_input = build_encoder_input([torch.tensor(r["source"]) for r in chunk], [torch.empty(0, dtype=torch.long)] * len(chunk),
                                            [torch.empty(0, dtype=torch.long)] * len(chunk), self.src_dict.pad(), eos,
                                            multi_encoder=False, left_pad_source=True)
            if self.device.type == "cuda":
                net_input = utils.move_to_cuda(net_input)
            limits = [int(o.max_len_a * (len(r["source"]) - 1) + o.max_len_b) for r in chunk]
            for r, ids in zip(chunk, beam_search(base, net_input, [[]] * len(chunk), beam=o.beam, lenpen=o.lenpen,
                                                 max_lengths=limits, incremental=o.incremental)):
                out[r["index"]] = ids
            bar.update(len(chunk))
        bar.close()
        return out

    def translate(
        self,
        sources: Sequence[str],
        docids: Sequence[str],
        gold_targets: Optional[Sequence[str]] = None,
        progress: bool = True,
        source_name: str = "source",
    ) -> List[str]:
        """Translate ``sources`` (one sentence per item, documents given by ``docids``);
        ``source_name`` (their file) is what messages name."""
        if len(sources) != len(docids):
            raise ContextualMTError(f"{len(sources)} source sentences but {len(docids)} document ids")
        if gold_targets is not None and len(gold_targets) != len(sources):
            raise ContextualMTError(f"{len(gold_targets)} gold targets but {len(sources)} sources")
        src_ids = self.encode_sources(sources, source_name)
        gold_ids = None
        if gold_targets is not None:
            gold_ids = [self.tgt_codec.to_ids(self.tgt_codec.encode(t)) for t in gold_targets]
        docs = [list(range(a, b)) for a, b in document_spans(docids)]
        docs.sort(key=len, reverse=True)  # wave t is then a prefix of this list
        predicted: List[Optional[List[int]]] = [None] * len(sources)
        first = self.first_pass(src_ids, progress) if self.cadec else None
        brk_s, brk_t = self.src_dict.index(BRK), self.tgt_dict.index(BRK)
        eos = 1  # room for </s>
        o = self.options
        if (gold_ids is None and self.n_tgt > 0) or not o.free_batching:
            # the t-th sentences of all documents wait for the (t-1)-th: decode in waves
            waves = [[(d, t) for d in docs if len(d) > t] for t in range(len(docs[0]) if docs else 0)]
        else:
            # no sentence waits for another's translation: one wave, batched freely by length
            waves = [[(d, t) for d in docs for t in range(len(d))]]
        bar = tqdm(total=len(sources), unit="sent", desc=f"translating {len(docs)} documents",
                   disable=not progress)
        for wave in waves:
            rows = []
            for doc, t in wave:
                i, prev = doc[t], doc[:t]
                tgt_prev = [gold_ids[j] for j in prev] if gold_ids is not None else [predicted[j] for j in prev]
                row = {"index": i, "source": src_ids[i] + [self.src_dict.eos()]}
                row["src_ctx"] = self._context([src_ids[j] for j in prev], self.n_src, brk_s,
                                               self.max_src - len(row["source"]))
                row["tgt_ctx"] = self._context(tgt_prev, self.n_tgt, brk_t,
                                               self.max_tgt - len(src_ids[i]) - o.max_len_b - eos)
                rows.append(row)
            if first is not None:
                # CADec refines sentences that have context; the others keep the base translation
                kept = [r for r in rows if not (r["src_ctx"] or r["tgt_ctx"]) and len(r["source"]) > 1]
                for r in kept:
                    predicted[r["index"]] = first[r["index"]]
                bar.update(len(kept))
                rows = [r for r in rows if r not in kept]
                for r in rows:
                    r["first_pass"] = first[r["index"]] + [self.tgt_dict.eos()]
            empty = [r for r in rows if len(r["source"]) == 1]
            for r in empty:
                predicted[r["index"]] = []
            # similar lengths in a batch: its rows finish decoding at about the same step
            todo = sorted((r for r in rows if len(r["source"]) > 1), key=lambda r: len(r["source"]))
            for chunk in self._chunks(todo):
                for r, ids in zip(chunk, self._decode(chunk)):
                    predicted[r["index"]] = ids
                bar.update(len(chunk))
            bar.update(len(empty))
        bar.close()
        return [self.tgt_codec.decode(ids) for ids in predicted]

    def _chunks(self, rows: List[Dict]):
        o = self.options
        chunk: List[Dict] = []
        tokens = 0
        for r in rows:
            size = len(r["source"]) + len(r["src_ctx"]) + len(r["tgt_ctx"])
            if chunk and (len(chunk) >= o.batch_size or (o.max_tokens and tokens + size > o.max_tokens)):
                yield chunk
                chunk, tokens = [], 0
            chunk.append(r)
            tokens += size
        if chunk:
            yield chunk


@dataclass
class TranslateOptions:
    """``contextual-mt translate``: which model, which documents, where to, and how to decode."""

    model: ModelOptions  # or HFModelOptions: a Hugging Face model
    source: str
    docids: str
    output: str
    gold_target_context: Optional[str] = None  # references as target context instead of predictions
    decoding: DecodingOptions = field(default_factory=DecodingOptions)
    progress: bool = True


def translate_files(options: TranslateOptions) -> List[str]:
    """File-level entry point of ``contextual-mt translate``; writes the output atomically
    (checked writable before anything is computed; nothing written on failure)."""
    with outputs(options.output):
        return _translate_files(options)


def _translate_files(options: TranslateOptions) -> List[str]:
    o = options
    sources = read_lines(o.source)
    ids = read_docids(o.docids)
    check_line_count(ids, o.docids, len(sources), o.source)
    gold = None
    if o.gold_target_context is not None:
        gold = read_lines(o.gold_target_context)
        if len(gold) != len(sources):
            raise ContextualMTError(
                f"{o.gold_target_context}: has {len(gold)} lines but {o.source} has {len(sources)}"
            )
    empty = [n for n, line in enumerate(sources, start=1) if not line.strip()]
    if empty:
        logger.warning("%s: %d empty lines (first: line %d) are kept as empty output lines",
                       o.source, len(empty), empty[0])
    if isinstance(o.model, ModelOptions):
        translator = DocumentTranslator(DocumentModel.load(o.model), options=o.decoding)
    else:
        from contextual_mt.hf.model import HFModel
        from contextual_mt.hf.translate import HFDocumentTranslator

        translator = HFDocumentTranslator(HFModel.load(o.model), o.decoding)
    hyps = translator.translate(sources, ids, gold, progress=o.progress, source_name=o.source)
    atomic_write_lines(o.output, hyps)
    return hyps
