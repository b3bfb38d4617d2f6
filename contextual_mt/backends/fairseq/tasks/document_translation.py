"""The ``document_translation`` task: translation with previous sentences as context.

(No ``from __future__ import annotations`` here: fairseq reads the config field types.)
"""

import logging
import os
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import torch
from fairseq import utils
from fairseq.data import data_utils
from fairseq.dataclass import ChoiceEnum
from fairseq.search import BeamSearch
from fairseq.tasks import register_task
from fairseq.tasks.translation import TranslationConfig, TranslationTask
from omegaconf import II

from commandkit.documents import check_line_count, document_starts, read_docids
from commandkit.errors import check_number
from contextual_mt.backends.fairseq.data.context_dataset import COWORD_TYPES, ContextDataset, ContextOptions
from contextual_mt.backends.fairseq.generation.prefix_search import PrefixBeamSearch
from contextual_mt.errors import (
    Code,
    InputError,
    install_excepthook_for_fairseq_cli,
    note_fairseq_save_dir,
)
from contextual_mt.symbols import BRK, MASK

logger = logging.getLogger(__name__)


@dataclass
class DocumentTranslationConfig(TranslationConfig):
    source_context_size: int = field(
        default=0, metadata={"help": "number of previous source sentences used as context"}
    )
    target_context_size: int = field(
        default=0, metadata={"help": "number of previous target sentences used as context"}
    )
    sample_context_size: bool = field(
        default=False,
        metadata={"help": "draw context sizes uniformly from 0..N and 0..M per example and epoch"},
    )
    coword_dropout: float = field(
        default=0.0,
        metadata={"help": "probability of masking current-source tokens during training"},
    )
    coword_dropout_type: ChoiceEnum(COWORD_TYPES) = field(  # type: ignore[valid-type]  # fairseq makes the enum type at run time
        default="token",
        metadata={"help": "'token': mask each token with prob p; 'whole': mask the sentence"},
    )
    seed: int = II("common.seed")
    docids_path: Optional[str] = field(
        default=None,
        metadata={
            "help": "docids file for each split, with '{split}' standing for the split name "
            "(default: {split}.{src}-{tgt}.docids beside the binarized data)"
        },
    )


def context_options(
    cfg: DocumentTranslationConfig, train: bool = True, shuffle: bool = True, multi_encoder: bool = False
) -> ContextOptions:
    """The dataset options of a split. Evaluation splits use the full context: sampling and
    CoWord dropout are training regularisers."""
    return ContextOptions(
        source_context_size=cfg.source_context_size,
        target_context_size=cfg.target_context_size,
        sample_context_size=cfg.sample_context_size and train,
        coword_dropout=cfg.coword_dropout if train else 0.0,
        coword_dropout_type=cfg.coword_dropout_type,
        seed=cfg.seed,
        shuffle=shuffle,
        left_pad_source=cfg.left_pad_source,
        max_source_positions=cfg.max_source_positions,
        max_target_positions=cfg.max_target_positions,
        multi_encoder=multi_encoder,
    )


def check_context_symbols(dictionary, path: str) -> None:
    for symbol in (BRK, MASK):
        if symbol not in dictionary.indices:
            raise InputError(
                f"{path}: dictionary has no '{symbol}' symbol; run "
                f"'contextual-mt add-symbols {path}' (appends {BRK} and {MASK}) "
                "before training",
                code=Code.FORMAT,
            )


def check_dictionaries(cfg: DocumentTranslationConfig) -> None:
    """The data directory and its dict.LANG.txt files exist (one line naming what is missing)."""
    paths = utils.split_paths(cfg.data) if cfg.data else []
    if not paths:
        raise InputError("no data directory given (the binarized data of fairseq-preprocess)", code=Code.OPTION_MISSING)
    data = paths[0]
    if not os.path.isdir(data):
        raise InputError(f"{data}: data directory not found", code=Code.NOT_FOUND)
    src, tgt = cfg.source_lang, cfg.target_lang
    if src is None or tgt is None:
        src, tgt = data_utils.infer_language_pair(data)
        if src is None or tgt is None:
            raise InputError(
                f"{data}: cannot tell the language pair from the file names; pass -s and -t", code=Code.OPTION_MISSING
            )
    for flag, lang in (("-s", src), ("-t", tgt)):
        path = os.path.join(data, f"dict.{lang}.txt")
        if not os.path.isfile(path):
            raise InputError(
                f"{path}: dictionary not found (for {flag} {lang}); "
                "fairseq-preprocess writes dict.LANG.txt into the data directory",
                code=Code.NOT_FOUND,
            )


def check_contextual_model(cfg) -> None:
    """A checkpoint loaded for generation must hold a contextual_transformer: a stock model
    would be fed context it was never trained on and translate it as garbage, silently."""
    from fairseq.models import ARCH_MODEL_REGISTRY, MODEL_REGISTRY

    from contextual_mt.backends.fairseq.models.contextual_transformer import ContextualTransformerModel

    name = getattr(cfg, "_name", None) or getattr(cfg, "arch", None)
    model_class = ARCH_MODEL_REGISTRY.get(name) or MODEL_REGISTRY.get(name)
    if model_class is not None and not issubclass(model_class, ContextualTransformerModel):
        raise InputError(
            f"--path: the checkpoint holds a '{name}' model, not a contextual_transformer, so "
            "--task document_translation cannot use it; fine-tune it into one first (fairseq-train "
            "--task document_translation --arch contextual_transformer --finetune-from-model CHECKPOINT)",
            code=Code.MODEL,
        )


def check_generation_args(args) -> None:
    """Decoding options, before fairseq fails deep inside the search (e.g. --beam 0)."""
    check_number("--beam", getattr(args, "beam", 5), minimum=1, integer=True)
    check_number("--lenpen", getattr(args, "lenpen", 1.0))
    check_number("--max-len-a", getattr(args, "max_len_a", 0.0), minimum=0)


@register_task("document_translation", dataclass=DocumentTranslationConfig)
class DocumentTranslationTask(TranslationTask):
    """Translation of sentences in document context (concatenation or multi-encoder)."""

    cfg: DocumentTranslationConfig

    def __init__(self, cfg: DocumentTranslationConfig, src_dict, tgt_dict):
        super().__init__(cfg, src_dict, tgt_dict)
        self.multi_encoder = False

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        note_fairseq_save_dir()  # fairseq-train parses its options before it makes --save-dir

    @classmethod
    def setup_task(cls, cfg: DocumentTranslationConfig, **kwargs):
        install_excepthook_for_fairseq_cli()
        context_options(cfg)  # a bad context option fails before any data is read
        check_dictionaries(cfg)  # fairseq would fail with a traceback
        task = super().setup_task(cfg, **kwargs)
        data = utils.split_paths(cfg.data)[0]
        for lang, dictionary in ((cfg.source_lang, task.src_dict), (cfg.target_lang, task.tgt_dict)):
            check_context_symbols(dictionary, os.path.join(data, f"dict.{lang}.txt"))
        return task

    # ------------------------------------------------------------------ data
    def docids_file(self, split: str, data_path: str) -> str:
        if self.cfg.docids_path:
            return self.cfg.docids_path.replace("{split}", split)
        src, tgt = self.cfg.source_lang, self.cfg.target_lang
        return os.path.join(data_path, f"{split}.{src}-{tgt}.docids")

    def _load_side(self, data_path: str, split: str, lang: str, dictionary):
        src, tgt = self.cfg.source_lang, self.cfg.target_lang
        for pair in (f"{src}-{tgt}", f"{tgt}-{src}"):
            prefix = os.path.join(data_path, f"{split}.{pair}.{lang}")
            dataset = data_utils.load_indexed_dataset(prefix, dictionary, self.cfg.dataset_impl)
            if dataset is not None:
                return dataset, prefix
        raise InputError(
            f"{os.path.join(data_path, f'{split}.{src}-{tgt}.{lang}')}: binarized data not found "
            "(expected .bin/.idx files written by fairseq-preprocess)",
            code=Code.NOT_FOUND,
        )

    def load_dataset(self, split: str, epoch: int = 1, combine: bool = False, **kwargs):
        paths = utils.split_paths(self.cfg.data)
        if split != self.cfg.train_subset:
            paths = paths[:1]
        data_path = paths[(epoch - 1) % len(paths)]
        src_ds, src_prefix = self._load_side(data_path, split, self.cfg.source_lang, self.src_dict)
        tgt_ds, tgt_prefix = self._load_side(data_path, split, self.cfg.target_lang, self.tgt_dict)
        if len(src_ds) != len(tgt_ds):
            raise InputError(
                f"{src_prefix}.bin has {len(src_ds)} sentences but {tgt_prefix}.bin has "
                f"{len(tgt_ds)}; source and target must be parallel",
                code=Code.LINE_COUNT,
            )
        docids_path = self.docids_file(split, data_path)
        doc_ids = read_docids(docids_path)
        check_line_count(doc_ids, docids_path, len(src_ds), f"{src_prefix}.bin")
        starts = document_starts(doc_ids)
        self.datasets[split] = ContextDataset(
            src_ds,
            src_ds.sizes,
            self.src_dict,
            tgt_ds,
            tgt_ds.sizes,
            self.tgt_dict,
            starts,
            context_options(self.cfg, split == self.cfg.train_subset, split != "test", self.multi_encoder),
        )
        logger.info(
            "%s %s: %d sentences in %d documents",
            data_path,
            split,
            len(src_ds),
            int((starts == np.arange(len(starts))).sum()),
        )

    def build_model(self, cfg, from_checkpoint: bool = False):
        if from_checkpoint:  # loading for generation or scoring (fine-tuning builds the new model)
            check_contextual_model(cfg)
        model = super().build_model(cfg, from_checkpoint)
        self.multi_encoder = bool(getattr(model, "multi_encoder", False))
        for dataset in self.datasets.values():
            if isinstance(dataset, ContextDataset):
                dataset.multi_encoder = self.multi_encoder
        return model

    # ------------------------------------------------------------------ inference
    def build_generator(self, models, args, seq_gen_cls=None, extra_gen_cls_kwargs=None, **kwargs):
        if getattr(args, "score_reference", False):
            from contextual_mt.backends.fairseq.generation.sequence_scorer import ContextSequenceScorer

            return ContextSequenceScorer(
                self.target_dictionary,
                compute_alignment=getattr(args, "print_alignment", False),
            )
        check_generation_args(args)
        generator = super().build_generator(
            models, args, seq_gen_cls=seq_gen_cls, extra_gen_cls_kwargs=extra_gen_cls_kwargs, **kwargs
        )
        if type(generator.search) is BeamSearch:
            # beams stay distinct after the forced target-context prefix
            generator.search = PrefixBeamSearch(self.target_dictionary)
        return generator

    def inference_step(self, generator, models, sample, prefix_tokens=None, constraints=None):
        from contextual_mt.backends.fairseq.generation import generation_order
        from contextual_mt.backends.fairseq.generation.sequence_scorer import ContextSequenceScorer

        generation_order.record(sample["id"].tolist())  # for the MuDA scorer (--scoring muda)
        if isinstance(generator, ContextSequenceScorer):
            with torch.no_grad():
                return generator.generate(models, sample)
        context = sample.get("tgt_prefix")
        search = getattr(generator, "search", None)
        if context is None:
            if isinstance(search, PrefixBeamSearch):
                search.prefix_lengths = None  # a batch with no context at all: forget the previous one's
            return super().inference_step(generator, models, sample, prefix_tokens, constraints)
        if prefix_tokens is not None:
            raise InputError("--prefix-size cannot be combined with target context", code=Code.OPTIONS_CONFLICT)
        if isinstance(search, PrefixBeamSearch):
            # fairseq identifies rows by sample id (its original_batch_idxs)
            ids = sample["id"]
            by_id = torch.zeros(int(ids.max()) + 1, dtype=torch.long)
            by_id[ids.cpu()] = sample["prefix_lengths"].cpu()
            search.prefix_lengths = by_id
        with torch.no_grad():
            hypos = generator.generate(models, sample, prefix_tokens=context, constraints=constraints)
        return strip_context(hypos, sample["prefix_lengths"], getattr(generator, "len_penalty", 1.0))


def strip_context(hypos, prefix_lengths: torch.Tensor, len_penalty: float = 1.0):
    """Remove the forced target-context prefix from hypotheses; rescore the current sentence."""
    for sentence_hypos, n in zip(hypos, prefix_lengths.tolist(), strict=True):
        if n == 0:
            continue
        for hypo in sentence_hypos:
            hypo["tokens"] = hypo["tokens"][n:]
            hypo["positional_scores"] = hypo["positional_scores"][n:]
            length = max(len(hypo["tokens"]), 1)
            hypo["score"] = hypo["positional_scores"].sum() / length**len_penalty
            if hypo.get("attention") is not None and hypo["attention"].dim() == 2:
                hypo["attention"] = hypo["attention"][:, n:]
            hypo["alignment"] = None
        sentence_hypos.sort(key=lambda h: -float(h["score"]))
    return hypos
