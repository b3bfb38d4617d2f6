"""Document translation with the model's own previous translations as target context.

Documents are decoded in waves: wave t translates the t-th sentence of every document that
has one, batched across documents, so each sentence's target context (its document's previous
translations) is ready when it is decoded. The context prefix goes through the decoder once per
sentence, in one parallel pass, and is cached for incremental decoding (context_beam_search).
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import torch
from tqdm import tqdm

from muda.io import check_line_count, read_docids
from contextual_mt.errors import ContextualMTError
from muda.io import atomic_write_lines, read_lines

logger = logging.getLogger(__name__)


@dataclass
class DecodingOptions:
    beam: int = 5
    lenpen: float = 1.0
    max_len_a: float = 0.0  # max length = a * source length + b, for the current sentence
    max_len_b: int = 200
    batch_size: int = 32  # documents decoded together
    max_tokens: Optional[int] = None  # or: source tokens (with context) per batch
    incremental: bool = True  # False: recompute the decoder at every step (benchmarking only)


class SentencePieceCodec:
    """Text <-> dictionary ids through a sentencepiece model (or whitespace, without one)."""

    def __init__(self, dictionary, model_path: Optional[str] = None):
        self.dictionary = dictionary
        self.sp = None
        if model_path is not None:
            import sentencepiece as spm

            if not os.path.exists(model_path):
                raise ContextualMTError(f"{model_path}: sentencepiece model not found")
            try:
                self.sp = spm.SentencePieceProcessor(model_file=model_path)
            except Exception as e:  # sentencepiece raises plain RuntimeError/OSError
                raise ContextualMTError(f"{model_path}: not a sentencepiece model ({e})") from None
            # Data encoded with this model yields only its pieces, so (nearly) every regular
            # dictionary symbol must be one. (The converse fails for BPE: merge intermediates.)
            pieces = {self.sp.id_to_piece(i) for i in range(self.sp.get_piece_size())}
            symbols = [w for w in dictionary.symbols[dictionary.nspecial:]
                       if w not in ("<brk>", "<mask>") and not w.startswith("madeupword")]
            foreign = [w for w in symbols if w not in pieces]
            if symbols and len(foreign) > 0.1 * len(symbols):
                raise ContextualMTError(
                    f"{model_path}: sentencepiece model does not match the dictionary "
                    f"({len(foreign)} of {len(symbols)} dictionary symbols are not pieces of "
                    f"this model, e.g. {foreign[:3]})"
                )

    def encode(self, line: str) -> List[str]:
        if not line.strip():
            return []
        return self.sp.encode(line, out_type=str) if self.sp is not None else line.split()

    def to_ids(self, pieces: Sequence[str]) -> List[int]:
        return [self.dictionary.index(p) for p in pieces]

    def decode(self, ids: Sequence[int]) -> str:
        d = self.dictionary
        skip = {d.eos(), d.pad(), d.bos(), d.index("<brk>")}
        pieces = [d[i] for i in ids if i not in skip]
        return self.sp.decode_pieces(pieces) if self.sp is not None else " ".join(pieces)


def load_document_model(path: str, data: Optional[str] = None, source_context_size: Optional[int] = None,
                        target_context_size: Optional[int] = None):
    """Load a ``document_translation`` checkpoint (ensemble of one) and its task; context
    sizes given here replace the trained ones."""
    from fairseq import checkpoint_utils

    overrides = {k: v for k, v in (("source_context_size", source_context_size),
                                   ("target_context_size", target_context_size)) if v is not None}

    if not os.path.isfile(path):
        raise ContextualMTError(f"{path}: checkpoint not found")
    try:
        state = checkpoint_utils.load_checkpoint_to_cpu(path)
    except Exception as e:
        raise ContextualMTError(f"{path}: cannot read checkpoint ({type(e).__name__}: {e})") from None
    cfg = state.get("cfg")
    task_name = getattr(getattr(cfg, "task", None), "_name", None) if cfg is not None else None
    if task_name is None and state.get("args") is not None:
        task_name = getattr(state["args"], "task", None)
    if task_name != "document_translation":
        raise ContextualMTError(
            f"{path}: checkpoint was trained with task '{task_name}', not 'document_translation'"
        )
    candidates = [data] if data else [os.path.dirname(os.path.abspath(path)), cfg.task.data]
    src, tgt = cfg.task.source_lang, cfg.task.target_lang
    if not (src and tgt):  # trained without -s/-t: fairseq inferred them from the data files
        from fairseq.data.data_utils import infer_language_pair

        for directory in [*candidates, cfg.task.data]:
            if directory and os.path.isdir(directory):
                src, tgt = infer_language_pair(directory)
                if src and tgt:
                    break
        if not (src and tgt):
            raise ContextualMTError(
                f"{path}: the checkpoint does not record its language pair (trained without "
                "-s/-t); pass --data with the binarized data directory"
            )
        cfg.task.source_lang, cfg.task.target_lang = src, tgt
    wanted = [f"dict.{src}.txt", f"dict.{tgt}.txt"] if src and tgt else []

    def has_dicts(directory: Optional[str]) -> bool:
        if not directory or not os.path.isdir(directory):
            return False
        if wanted:
            return all(os.path.exists(os.path.join(directory, w)) for w in wanted)
        return any(f.startswith("dict.") and f.endswith(".txt") for f in os.listdir(directory))

    data_dir = next((c for c in candidates if has_dicts(c)), None)
    if data_dir is None:
        raise ContextualMTError(
            f"{path}: dictionaries ({', '.join(wanted) or 'dict.*.txt'}) not found in "
            f"{' or '.join(str(c) for c in candidates if c)}; pass --data DIR"
        )
    from fairseq.dataclass.utils import overwrite_args_by_name

    trained = {k: cfg.task[k] for k in ("sample_context_size", "source_context_size", "target_context_size")}
    # fairseq applies arg_overrides only when it reads the file itself; this state is preloaded
    overwrite_args_by_name(cfg, {"data": data_dir, **overrides})
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task([path], state=state)
    task.trained_context = trained  # as trained, before any override
    return models, cfg, task


class DocumentTranslator:
    """Translates documents with a ``document_translation`` checkpoint.

    >>> translator = DocumentTranslator("checkpoints/ctx/checkpoint_best.pt", spm="spm.model")
    >>> translator.translate(["I see the car.", "It is red."], ["d1", "d1"])
    """

    def __init__(
        self,
        path: str,
        spm: Optional[str] = None,
        data: Optional[str] = None,
        source_context_size: Optional[int] = None,
        target_context_size: Optional[int] = None,
        options: Optional[DecodingOptions] = None,
        cpu: bool = False,
    ):
        models, cfg, task = load_document_model(path, data, source_context_size, target_context_size)
        self.task, self.cfg = task, cfg
        self.options = options or DecodingOptions()
        self.device = torch.device("cuda" if torch.cuda.is_available() and not cpu else "cpu")
        if len(models) > 1:
            raise ContextualMTError(f"{path}: ensembles are not supported by translate; give one checkpoint")
        self.models = [m.to(self.device).eval() for m in models]
        self.multi_encoder = bool(getattr(models[0], "multi_encoder", False))
        self.src_dict, self.tgt_dict = task.source_dictionary, task.target_dictionary
        self.n_src = cfg.task.source_context_size
        self.n_tgt = cfg.task.target_context_size
        self.src_codec = SentencePieceCodec(self.src_dict, spm)
        self.tgt_codec = SentencePieceCodec(self.tgt_dict, spm) if spm else SentencePieceCodec(self.tgt_dict)
        self.max_src = min(cfg.task.max_source_positions, models[0].max_positions()[0])
        self.max_tgt = min(cfg.task.max_target_positions, models[0].max_positions()[1])

    # ------------------------------------------------------------------ encoding
    def encode_sources(self, lines: Sequence[str], name: str = "source") -> List[List[int]]:
        unk = self.src_dict.unk()
        encoded, unk_lines = [], []
        for lineno, line in enumerate(lines, start=1):
            ids = self.src_codec.to_ids(self.src_codec.encode(line))
            if unk in ids:
                unk_lines.append(lineno)
            encoded.append(ids)
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
        from fairseq.data import data_utils

        pad, eos = self.src_dict.pad(), self.src_dict.eos()

        def merge(seqs, left):
            return data_utils.collate_tokens([torch.tensor(s, dtype=torch.long) for s in seqs], pad, eos, left_pad=left)

        if self.multi_encoder:
            src = [r["source"] for r in rows]
        else:
            src = [r["src_ctx"] + r["source"] for r in rows]
        net_input = {
            "src_tokens": merge(src, True),
            "src_lengths": torch.tensor([len(s) for s in src], dtype=torch.long),
        }
        if self.multi_encoder:
            for side in ("src", "tgt"):
                ctx = [r[f"{side}_ctx"] for r in rows]
                net_input[f"{side}_ctx_tokens"] = merge(ctx, False) if any(ctx) else None
                net_input[f"{side}_ctx_lengths"] = torch.tensor([len(c) for c in ctx], dtype=torch.long)
        return net_input

    @torch.no_grad()
    def _decode(self, rows: List[Dict]) -> List[List[int]]:
        from fairseq import utils

        from contextual_mt.inference.beam_search import beam_search

        net_input = self._batch(rows)
        if self.device.type == "cuda":
            net_input = utils.move_to_cuda(net_input)
        o = self.options
        prefixes = [[] if self.multi_encoder else r["tgt_ctx"] for r in rows]
        limits = [int(o.max_len_a * (len(r["source"]) - 1) + o.max_len_b) for r in rows]
        return beam_search(self.models[0], net_input, prefixes, beam=o.beam, lenpen=o.lenpen,
                           max_lengths=limits, incremental=o.incremental)

    def translate(
        self,
        sources: Sequence[str],
        docids: Sequence[str],
        gold_targets: Optional[Sequence[str]] = None,
        progress: bool = True,
    ) -> List[str]:
        """Translate ``sources`` (one sentence per item, documents given by ``docids``)."""
        if len(sources) != len(docids):
            raise ContextualMTError(f"{len(sources)} source sentences but {len(docids)} document ids")
        if gold_targets is not None and len(gold_targets) != len(sources):
            raise ContextualMTError(f"{len(gold_targets)} gold targets but {len(sources)} sources")
        src_ids = self.encode_sources(sources)
        gold_ids = None
        if gold_targets is not None:
            gold_ids = [self.tgt_codec.to_ids(self.tgt_codec.encode(t)) for t in gold_targets]
        docs: List[List[int]] = []
        for i, doc_id in enumerate(docids):
            if i == 0 or doc_id != docids[i - 1]:
                docs.append([])
            docs[-1].append(i)
        docs.sort(key=len, reverse=True)  # wave t is then a prefix of this list
        predicted: List[Optional[List[int]]] = [None] * len(sources)
        brk_s, brk_t = self.src_dict.index("<brk>"), self.tgt_dict.index("<brk>")
        eos = 1  # room for </s>
        o = self.options
        bar = tqdm(total=len(sources), unit="sent", desc=f"translating {len(docs)} documents",
                   disable=not progress)
        wave = 0
        while docs and wave < len(docs[0]):
            active = [d for d in docs if len(d) > wave]
            rows = []
            for doc in active:
                i = doc[wave]
                prev = doc[:wave]
                tgt_prev = [gold_ids[j] for j in prev] if gold_ids is not None else [predicted[j] for j in prev]
                row = {"index": i, "source": src_ids[i] + [self.src_dict.eos()]}
                row["src_ctx"] = self._context([src_ids[j] for j in prev], self.n_src, brk_s,
                                               self.max_src - len(row["source"]))
                row["tgt_ctx"] = self._context(tgt_prev, self.n_tgt, brk_t,
                                               self.max_tgt - len(src_ids[i]) - o.max_len_b - eos)
                rows.append(row)
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
            wave += 1
            bar.set_postfix(documents=f"{sum(len(d) <= wave for d in docs)}/{len(docs)}")
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


def translate_files(
    path: str,
    source: str,
    docids: str,
    output: str,
    spm: Optional[str] = None,
    data: Optional[str] = None,
    gold_target_context: Optional[str] = None,
    source_context_size: Optional[int] = None,
    target_context_size: Optional[int] = None,
    options: Optional[DecodingOptions] = None,
    cpu: bool = False,
    progress: bool = True,
) -> List[str]:
    """File-level entry point of ``contextual-mt translate``; writes ``output`` atomically."""
    sources = read_lines(source)
    ids = read_docids(docids)
    check_line_count(ids, docids, len(sources), source)
    gold = None
    if gold_target_context is not None:
        gold = read_lines(gold_target_context)
        if len(gold) != len(sources):
            raise ContextualMTError(
                f"{gold_target_context}: has {len(gold)} lines but {source} has {len(sources)}"
            )
    empty = [n for n, line in enumerate(sources, start=1) if not line.strip()]
    if empty:
        logger.warning("%s: %d empty lines (first: line %d) are kept as empty output lines",
                       source, len(empty), empty[0])
    translator = DocumentTranslator(path, spm=spm, data=data, source_context_size=source_context_size,
                                    target_context_size=target_context_size, options=options, cpu=cpu)
    hyps = translator.translate(sources, ids, gold, progress=progress)
    atomic_write_lines(output, hyps)
    return hyps
