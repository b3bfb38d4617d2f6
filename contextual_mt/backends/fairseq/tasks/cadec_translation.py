"""The ``cadec_translation`` task: training CADec (Voita et al. 2019, §5.1) on the binarized data
and docids that ``document_translation`` reads.

Each example carries its K previous source sentences and their reference translations (the
dataset keeps them apart from the sentence, as for multi-encoder models). The first pass of the
current sentence is made on the fly, per batch: with probability ``--cadec-p`` the reference
with ``--cadec-corrupt`` of its tokens replaced by random ones, otherwise a translation sampled
from the frozen base model. Draws are seeded by ``--seed`` and the update number.

(No ``from __future__ import annotations`` here: fairseq reads the config field types.)
"""

import logging
from dataclasses import dataclass, field
from typing import List, Optional

import torch
from fairseq.data import data_utils
from fairseq.tasks import register_task

from commandkit.errors import check_number
from contextual_mt.backends.fairseq.tasks.document_translation import DocumentTranslationConfig, DocumentTranslationTask
from contextual_mt.errors import Code, InputError, install_excepthook_for_fairseq_cli
from contextual_mt.symbols import CONTEXT_SYMBOLS

logger = logging.getLogger(__name__)


@dataclass
class CADecTranslationConfig(DocumentTranslationConfig):
    context_size: int = field(default=3, metadata={"help": "previous sentences (source and translation) CADec reads"})
    cadec_p: float = field(
        default=0.5,
        metadata={
            "help": "probability that the first pass of a training sentence is the corrupted reference rather than a "
            "translation sampled from the base model"
        },
    )
    cadec_corrupt: float = field(
        default=0.2,
        metadata={"help": "fraction of the reference's tokens replaced by random tokens in a corrupted first pass"},
    )


def check_cadec_options(cfg) -> None:
    check_number("--context-size", cfg.context_size, minimum=0, integer=True)
    check_number("--cadec-p", cfg.cadec_p, minimum=0, maximum=1)
    check_number("--cadec-corrupt", cfg.cadec_corrupt, minimum=0, maximum=1)


def check_cadec_model(cfg) -> None:
    """A checkpoint loaded under this task must hold a CADec model."""
    name = getattr(cfg, "_name", None) or getattr(cfg, "arch", None)
    if name is not None and not str(name).startswith("cadec_transformer"):
        raise InputError(
            f"--path: the checkpoint holds a '{name}' model, not a cadec_transformer; "
            "--task cadec_translation needs a CADec checkpoint",
            code=Code.MODEL,
        )


def corrupt(tokens: torch.Tensor, rate: float, choices: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """``tokens`` (one sentence ending in </s>) with each token but the last replaced by a random
    one of ``choices`` with probability ``rate``."""
    out = tokens.clone()
    n = len(tokens) - 1
    hit = torch.rand(n, generator=generator) < rate
    picks = choices[torch.randint(len(choices), (n,), generator=generator)]
    out[:n][hit] = picks[hit].to(out.device)
    return out


@torch.no_grad()
def sample_translations(
    base,
    src_tokens: torch.Tensor,
    src_lengths: torch.Tensor,
    eos: int,
    pad: int,
    max_len: int,
    generator: torch.Generator,
) -> List[torch.Tensor]:
    """One translation per row sampled from the base model (ancestral sampling, incremental
    decoding), each ending in </s>."""
    base.eval()
    encoder_out = base.encoder(src_tokens, src_lengths=src_lengths)
    bsz = src_tokens.size(0)
    tokens = src_tokens.new_full((bsz, 1), eos)
    done = torch.zeros(bsz, dtype=torch.bool, device=src_tokens.device)
    state: dict = {}
    limit = torch.clamp(src_lengths * 3 // 2 + 10, max=max_len)
    for step in range(int(limit.max())):
        logits, _ = base.decoder(tokens, encoder_out=encoder_out, incremental_state=state)
        probs = torch.softmax(logits[:, -1].float(), dim=-1)
        probs[:, pad] = 0.0
        nxt = torch.multinomial(probs.cpu(), 1, generator=generator).squeeze(1).to(tokens.device)
        nxt[step + 1 >= limit] = eos  # long enough: close it
        nxt[done] = pad
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt.eq(eos)
        if done.all():
            break
    out = []
    for row in tokens[:, 1:]:
        row = row[row.ne(pad)]
        if len(row) == 0 or row[-1] != eos:
            row = torch.cat([row, row.new_tensor([eos])])
        out.append(row)
    return out


@register_task("cadec_translation", dataclass=CADecTranslationConfig)
class CADecTranslationTask(DocumentTranslationTask):
    """CADec on top of a frozen sentence-level model (``--arch cadec_transformer --base-model``)."""

    cfg: CADecTranslationConfig

    def __init__(self, cfg: CADecTranslationConfig, src_dict, tgt_dict):
        super().__init__(cfg, src_dict, tgt_dict)
        self.multi_encoder = True  # contexts stay apart from the sentence: CADec reads each sentence alone
        specials = {tgt_dict.index(s) for s in CONTEXT_SYMBOLS}
        self.random_tokens = torch.tensor(
            [
                i
                for i in range(tgt_dict.nspecial, len(tgt_dict))
                if i not in specials and not tgt_dict[i].startswith("madeupword")
            ]
        )

    @classmethod
    def setup_task(cls, cfg: CADecTranslationConfig, **kwargs):
        install_excepthook_for_fairseq_cli()  # before the first check: one line, not a traceback
        check_cadec_options(cfg)
        cfg.source_context_size = cfg.target_context_size = cfg.context_size
        cfg.sample_context_size, cfg.coword_dropout = False, 0.0
        return super().setup_task(cfg, **kwargs)

    def build_model(self, cfg, from_checkpoint: bool = False):
        if from_checkpoint:
            check_cadec_model(cfg)
        else:
            name = getattr(cfg, "_name", None) or getattr(cfg, "arch", None)
            if name is not None and not str(name).startswith("cadec_transformer"):
                raise InputError(
                    f"--arch {name}: --task cadec_translation trains a cadec_transformer* model", code=Code.OPTION_VALUE
                )
        model = super(DocumentTranslationTask, self).build_model(cfg, from_checkpoint)
        for dataset in self.datasets.values():
            dataset.multi_encoder = True
        return model

    def build_generator(self, models, args, seq_gen_cls=None, extra_gen_cls_kwargs=None, **kwargs):
        raise InputError(
            "fairseq-generate cannot run CADec's two passes; translate with `contextual-mt "
            "translate --path CADEC.pt` and score with `contextual-mt contrastive` or `cxmi`",
            code=Code.MODEL,
        )

    # ------------------------------------------------------------------ the first pass
    def first_pass(self, sample, model, seed: int) -> torch.Tensor:
        """Per row of the batch: the corrupted reference (probability cadec_p) or a translation
        sampled from the base model; right-padded."""
        generator = torch.Generator().manual_seed(int(seed))
        targets = sample["target"]
        pad, eos = self.tgt_dict.pad(), self.tgt_dict.eos()
        bsz = targets.size(0)
        corrupted = torch.rand(bsz, generator=generator) < self.cfg.cadec_p
        rows: List[Optional[torch.Tensor]] = [None] * bsz
        for b in corrupted.nonzero(as_tuple=True)[0].tolist():
            reference = targets[b][targets[b].ne(pad)]
            rows[b] = corrupt(reference, self.cfg.cadec_corrupt, self.random_tokens, generator)
        sampled = (~corrupted).nonzero(as_tuple=True)[0]
        if len(sampled):
            net = sample["net_input"]
            index = sampled.to(net["src_tokens"].device)
            drawn = sample_translations(
                model.base,
                net["src_tokens"].index_select(0, index),
                net["src_lengths"].index_select(0, index),
                eos,
                pad,
                model.decoder.max_positions(),
                generator,
            )
            for b, row in zip(sampled.tolist(), drawn, strict=True):
                rows[b] = row
        sample["first_pass_corrupted"] = corrupted
        return data_utils.collate_tokens(rows, pad, eos, left_pad=False)

    def _with_first_pass(self, sample, model, seed: int):
        if sample and "net_input" in sample:
            sample["net_input"]["first_pass"] = self.first_pass(sample, model, seed).to(sample["target"].device)
        return sample

    def train_step(self, sample, model, criterion, optimizer, update_num, ignore_grad=False):
        sample = self._with_first_pass(sample, model, self.cfg.seed * 1_000_003 + update_num)
        return super().train_step(sample, model, criterion, optimizer, update_num, ignore_grad)

    def valid_step(self, sample, model, criterion):
        first_id = int(sample["id"][0]) if sample and "id" in sample else 0
        sample = self._with_first_pass(sample, model, self.cfg.seed * 7_919 + first_id)
        return super().valid_step(sample, model, criterion)
