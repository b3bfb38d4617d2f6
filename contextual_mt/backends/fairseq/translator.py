"""Document translation with a fairseq ``document_translation`` checkpoint, its target context
the model's own previous translations (or the references), in the waves of ``inference.waves``.
The context prefix goes through the decoder once per sentence, in one parallel pass, and is
cached for incremental decoding (inference.beam_search).

A CADec checkpoint decodes in two passes (Voita et al. 2019, §5.2; ``CADecPasses``): its frozen
base model translates every sentence first (one pass, batched by length); then CADec refines each
sentence that has context, reading the base translation and the two-pass translations of the
previous sentences. A sentence without context keeps its base translation. Scoring
(``scoring.CADecScoringBackend``) reads the base translation the same way.
"""

from __future__ import annotations

import logging
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import torch
from tqdm import tqdm

from commandkit.documents import document_spans
from contextual_mt.backends.fairseq.codec import unknown_warning
from contextual_mt.backends.fairseq.data.model_input import build_encoder_input
from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.batching import filled, length_batches
from contextual_mt.inference.context_trim import last_sentences, nearest_context
from contextual_mt.inference.decoding import DecodingOptions
from contextual_mt.inference.waves import Item, Translations, decode_documents
from contextual_mt.symbols import BRK

logger = logging.getLogger(__name__)


class SinglePass:
    """How a model that reads only its source and context decodes: every sentence by the model."""

    def prepare(self, src_ids: List[List[int]], progress: bool) -> None:
        """Work done once before the waves."""

    def settle(self, rows: List[Dict]) -> Tuple[List[Tuple[int, List[int]]], List[Dict]]:
        """(translations known without decoding, the rows left to decode)."""
        return [], rows

    def add_inputs(self, net_input: Dict, rows: List[Dict]) -> None:
        """Extra encoder inputs of a batch of rows."""


class DocumentTranslator:
    """Translates documents with a ``document_translation`` (or ``cadec_translation``) checkpoint.

    >>> translator = DocumentTranslator(FairseqModelOptions("checkpoints/ctx/checkpoint_best.pt", spm="spm.model"))
    >>> translator.translate(["I see the car.", "It is red."], ["d1", "d1"])
    """

    def __init__(self, model: Union[FairseqModelOptions, DocumentModel], options: Optional[DecodingOptions] = None):
        """``model``: a checkpoint's options (it is loaded) or an already loaded model."""
        self.model = model if isinstance(model, DocumentModel) else DocumentModel.load(model)
        m = self.model
        self.task, self.cfg, self.models, self.device = m.task, m.cfg, m.models, m.device
        self.options = options or DecodingOptions()
        self.multi_encoder = m.multi_encoder
        self.src_dict, self.tgt_dict = m.src_dict, m.tgt_dict
        self.n_src, self.n_tgt = m.source_context_size, m.target_context_size
        self.src_codec, self.tgt_codec = m.src_codec, m.tgt_codec
        self.max_src, self.max_tgt = m.max_source_positions, m.max_target_positions
        # a CADec checkpoint decodes in two passes: the frozen base model, then CADec's refinement
        self.passes: Union[CADecPasses, SinglePass] = CADecPasses(self) if m.cadec else SinglePass()

    # ------------------------------------------------------------------ encoding
    def encode_sources(self, lines: Sequence[str], name: str = "source") -> List[List[int]]:
        """Dictionary ids of each source line (without </s>). ``name`` (the file) is what
        warnings and errors name: a line too long for the model is an error."""
        unk = self.src_dict.unk()
        encoded, unk_lines, unknown = [], [], []
        for lineno, line in enumerate(lines, start=1):
            pieces = self.src_codec.encode(line)
            ids = self.src_codec.to_ids(pieces)
            if unk in ids:
                unk_lines.append(lineno)
                unknown += self.src_codec.unknown_pieces(pieces)
            encoded.append(ids)
        self.model.check_fits([len(ids) + 1 for ids in encoded], name, "source")
        if unk_lines:
            what = unknown_warning(self.src_codec, f"{len(unk_lines)} lines", f"first at line {unk_lines[0]}", unknown)
            logger.warning("%s: %s", name, what)
        return encoded

    # ------------------------------------------------------------------ decoding
    def _batch(self, rows: List[Dict]) -> Dict:
        def tensors(key: str) -> List[torch.Tensor]:
            return [torch.tensor(r[key], dtype=torch.long) for r in rows]

        return build_encoder_input(
            tensors("source"),
            tensors("src_ctx"),
            tensors("tgt_ctx"),
            self.src_dict.pad(),
            self.src_dict.eos(),
            self.multi_encoder,
            left_pad_source=True,
        )

    def beam_search(self, model, net_input: Dict, rows: List[Dict], prefixes: List[List[int]]) -> List[List[int]]:
        """Beam search of ``model`` over a batch of rows, each with its forced target prefix."""
        from fairseq import utils

        from contextual_mt.backends.fairseq.beam_search import beam_search

        if self.device.type == "cuda":
            net_input = utils.move_to_cuda(net_input)
        o = self.options
        limits = [int(o.max_len_a * (len(r["source"]) - 1) + o.max_len_b) for r in rows]
        return beam_search(
            model, net_input, prefixes, beam=o.beam, lenpen=o.lenpen, max_lengths=limits, incremental=o.incremental
        )

    @torch.no_grad()
    def _decode(self, rows: List[Dict]) -> List[List[int]]:
        net_input = self._batch(rows)
        self.passes.add_inputs(net_input, rows)
        prefixes = [[] if self.multi_encoder else r["tgt_ctx"] for r in rows]
        return self.beam_search(self.models[0], net_input, rows, prefixes)

    def _row(self, i: int, src_ids: List[List[int]], prev: Sequence[int], tgt_prev: List[List[int]]) -> Dict:
        """Sentence ``i`` with the nearest context that fits beside it (and its translation's room)."""
        eos = 1  # room for </s>
        row: Dict[str, Any] = {"index": i, "source": src_ids[i] + [self.src_dict.eos()]}
        row["src_ctx"] = nearest_context(
            [src_ids[j] for j in prev], self.n_src, self.src_dict.index(BRK), self.max_src - len(row["source"])
        )
        row["tgt_ctx"] = nearest_context(
            tgt_prev,
            self.n_tgt,
            self.tgt_dict.index(BRK),
            self.max_tgt - len(src_ids[i]) - self.options.max_len_b - eos,
        )
        return row

    def translate(
        self,
        sources: Sequence[str],
        docids: Sequence[str],
        gold_targets: Optional[Sequence[str]] = None,
        progress: bool = True,
        source_name: str = "source",
    ) -> Translations:
        """Translate ``sources`` (one sentence per item, documents given by ``docids``);
        ``source_name`` (their file) is what messages name."""
        if len(sources) != len(docids):
            raise InputError(f"{len(sources)} source sentences but {len(docids)} document ids", code=Code.LINE_COUNT)
        if gold_targets is not None and len(gold_targets) != len(sources):
            raise InputError(f"{len(gold_targets)} gold targets but {len(sources)} sources", code=Code.LINE_COUNT)
        src_ids = self.encode_sources(sources, source_name)
        gold_ids = None
        if gold_targets is not None:
            gold_ids = [self.tgt_codec.to_ids(self.tgt_codec.encode(t)) for t in gold_targets]
        docs = [list(range(a, b)) for a, b in document_spans(docids)]
        docs.sort(key=len, reverse=True)  # wave t is then a prefix of this list
        self.passes.prepare(src_ids, progress)

        def decode_wave(
            wave: List[Item], predicted: Sequence[Optional[List[int]]]
        ) -> Iterator[List[Tuple[int, List[int]]]]:
            rows = [
                self._row(
                    i,
                    src_ids,
                    prev,
                    # predicted: only the nearest n_tgt are read (and decoded before; not so without target context)
                    [gold_ids[j] for j in prev]
                    if gold_ids is not None
                    else filled(predicted, last_sentences(prev, self.n_tgt)),
                )
                for i, prev in wave
            ]
            settled, rows = self.passes.settle(rows)
            yield settled
            empty = [r for r in rows if len(r["source"]) == 1]
            todo = [r for r in rows if len(r["source"]) > 1]
            for chunk in self._chunks(todo):
                yield list(zip((r["index"] for r in chunk), self._decode(chunk), strict=True))
            yield [(r["index"], []) for r in empty]

        no_tokens: List[int] = []  # what a sentence not decoded yet reads as (in rounds)
        # the t-th sentences of all documents wait for the (t-1)-th when the target context is
        # predicted; otherwise one pass, batched freely by length
        predicted, record, rounds = decode_documents(
            docs,
            len(sources),
            decode_wave,
            self.options,
            self.device.type,
            predicted_context=gold_ids is None and self.n_tgt > 0,
            target_context_size=self.n_tgt,
            empty=no_tokens,
            desc=f"translating {len(docs)} documents",
            progress=progress,
        )
        return Translations((self.tgt_codec.decode(ids) for ids in filled(predicted)), record, rounds)

    def _chunks(self, rows: List[Dict]) -> Iterator[List[Dict]]:
        """Batches by the one rule (``inference.batching``): similar source lengths together (their
        rows finish decoding at about the same step); a row's length is its source with context."""
        sentences, tokens = self.options.batching(wide=self.device.type == "cuda")
        size = [len(r["source"]) + len(r["src_ctx"]) + len(r["tgt_ctx"]) for r in rows]
        for batch in length_batches(
            range(len(rows)), size.__getitem__, sentences, tokens, order=lambda k: (len(rows[k]["source"]), k)
        ):
            yield [rows[k] for k in batch]


# the beam of the base translation when scoring, as CADec's authors score test sets
SCORING_BEAM = 4


class CADecPasses(SinglePass):
    """The two passes of a CADec checkpoint, for a ``DocumentTranslator``."""

    def __init__(self, translator: DocumentTranslator):
        self.t = translator
        self.first: List[List[int]] = []

    @torch.no_grad()
    def first_pass(self, src_ids: List[List[int]], progress: bool = True) -> List[List[int]]:
        """The frozen base model's beam translation of every sentence, in one pass batched by
        length (no sentence waits for another)."""
        t = self.t
        eos, o = t.src_dict.eos(), t.options
        out: List[List[int]] = [[] for _ in src_ids]
        todo = [i for i in range(len(src_ids)) if src_ids[i]]
        bar = tqdm(total=len(todo), unit="sent", desc="first pass (base model)", disable=not progress)
        sentences, tokens = o.batching(wide=t.device.type == "cuda")
        for batch in length_batches(todo, lambda i: len(src_ids[i]) + 1, sentences, tokens):
            rows = [{"source": src_ids[i] + [eos]} for i in batch]
            none = [torch.empty(0, dtype=torch.long)] * len(rows)
            net_input = build_encoder_input(
                [torch.tensor(r["source"]) for r in rows],
                none,
                none,
                t.src_dict.pad(),
                eos,
                multi_encoder=False,
                left_pad_source=True,
            )
            for i, ids in zip(batch, t.beam_search(t.models[0].base, net_input, rows, [[]] * len(rows)), strict=True):
                out[i] = ids
            bar.update(len(batch))
        bar.close()
        return out

    def prepare(self, src_ids: List[List[int]], progress: bool) -> None:
        self.first = self.first_pass(src_ids, progress)

    def settle(self, rows: List[Dict]) -> Tuple[List[Tuple[int, List[int]]], List[Dict]]:
        # CADec refines sentences that have context; the others keep the base translation
        kept = [r for r in rows if not (r["src_ctx"] or r["tgt_ctx"]) and len(r["source"]) > 1]
        rows = [r for r in rows if r not in kept]
        for r in rows:
            r["first_pass"] = self.first[r["index"]] + [self.t.tgt_dict.eos()]
        return [(r["index"], self.first[r["index"]]) for r in kept], rows

    def add_inputs(self, net_input: Dict, rows: List[Dict]) -> None:
        net_input["first_pass"] = collate_first_passes(
            self.t.tgt_dict, [torch.tensor(r["first_pass"], dtype=torch.long) for r in rows]
        )


def collate_first_passes(tgt_dict, rows: List[torch.Tensor]) -> torch.Tensor:
    """Base translations (with </s>) padded on the right: CADec's second encoder input."""
    from fairseq.data import data_utils

    return data_utils.collate_tokens(rows, tgt_dict.pad(), tgt_dict.eos(), left_pad=False)


def base_translations(model, sources: List[List[int]]) -> List[torch.Tensor]:
    """What CADec reads when scoring: the frozen base model's beam translation (beam 4, its
    authors' setting) of each distinct source (ids without </s>), with </s>."""
    keys = list({tuple(s): None for s in sources})
    passes = DocumentTranslator(model, options=DecodingOptions(beam=SCORING_BEAM)).passes
    if not isinstance(passes, CADecPasses):
        raise ValueError(f"{model.path}: base translations are a CADec model's")
    translated = passes.first_pass([list(k) for k in keys], progress=False)
    eos = model.tgt_dict.eos()
    by_source = {k: torch.tensor([*t, eos], dtype=torch.long) for k, t in zip(keys, translated, strict=True)}
    return [by_source[tuple(s)] for s in sources]
