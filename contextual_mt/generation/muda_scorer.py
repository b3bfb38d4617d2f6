"""``fairseq-generate --scoring muda``: the MuDA table (per-tag word f-measure, BLEU) at the end
of generation. Needs ``--task document_translation``, which records the sample ids (fairseq
gives scorers strings only, in generation order).
(No `from __future__ import annotations`: fairseq reads the config field types at run time.)"""

import os
import tempfile
from dataclasses import dataclass, field
from typing import Optional

from fairseq.dataclass import FairseqDataclass
from fairseq.scoring import BaseScorer, register_scorer

from contextual_mt.generation import generation_order
from contextual_mt.errors import ContextualMTError


@dataclass
class MudaScorerConfig(FairseqDataclass):
    muda_ref_tags: Optional[str] = field(default=None, metadata={"help": "tags of the reference (muda tag)"})
    muda_docids: Optional[str] = field(default=None, metadata={"help": "document id of each test line"})
    muda_src: Optional[str] = field(default=None, metadata={"help": "raw English source of the test set"})
    muda_tgt_lang: Optional[str] = field(default=None, metadata={"help": "target language"})
    muda_ref: Optional[str] = field(default=None, metadata={
        "help": "raw reference (default: fairseq's detokenized references)"})
    muda_src_conllu: Optional[str] = field(default=None, metadata={"help": "CoNLL-U of the source"})
    muda_lexicon: Optional[str] = field(default=None, metadata={
        "help": "SRC.conllu,TGT.conllu,ALIGN: annotate hypotheses by lookup in this corpus (no model)"})
    muda_output: Optional[str] = field(default=None, metadata={"help": "write the JSON result here"})


@register_scorer("muda", dataclass=MudaScorerConfig)
class MudaScorer(BaseScorer):
    def __init__(self, cfg):
        super().__init__(cfg)
        missing = [f"--{k.replace('_', '-')}" for k in ("muda_ref_tags", "muda_docids", "muda_src", "muda_tgt_lang")
                   if not getattr(cfg, k)]
        if missing:
            raise ContextualMTError(f"--scoring muda needs {', '.join(missing)}")
        generation_order.start()
        self.result = None

    def _evaluate(self):
        from muda.evaluation.run import EvalOptions, run_eval

        ids = generation_order.recorded()
        if len(ids) != len(self.pred):
            raise ContextualMTError(f"--scoring muda: {len(self.pred)} hypotheses but {len(ids)} recorded sample ids "
                                    "(it needs --task document_translation)")
        order = sorted(range(len(ids)), key=lambda k: ids[k])
        if [ids[k] for k in order] != list(range(len(ids))):
            raise ContextualMTError(f"--scoring muda: sample ids are not 0..{len(ids) - 1}; score the whole subset "
                                    "(no --max-sentences cut-off)")
        work = tempfile.mkdtemp(prefix="muda-scorer-")
        hyp, ref = os.path.join(work, "hypotheses"), self.cfg.muda_ref or os.path.join(work, "reference")
        with open(hyp, "w", encoding="utf-8") as f:
            f.writelines(self.pred[k] + "\n" for k in order)
        if not self.cfg.muda_ref:
            with open(ref, "w", encoding="utf-8") as f:
                f.writelines(self.ref[k] + "\n" for k in order)
        annotators = None
        if self.cfg.muda_lexicon:
            from muda.annotators.lexicon import LexiconAnnotator

            annotators = LexiconAnnotator(*self.cfg.muda_lexicon.split(","))
        else:
            from muda.annotators.models import ModelAnnotators

            annotators = ModelAnnotators()
        options = EvalOptions(self.cfg.muda_src, ref, self.cfg.muda_docids, self.cfg.muda_tgt_lang, [hyp],
                              output=self.cfg.muda_output, ref_tags=self.cfg.muda_ref_tags,
                              src_conllu=self.cfg.muda_src_conllu, names=["system"], bootstrap=0, work_dir=work)
        self.result = run_eval(options, annotators)
        return self.result

    def score(self) -> float:
        result = self.result or self._evaluate()
        return result["systems"]["system"]["bleu"]

    def result_string(self) -> str:
        from muda.evaluation.table import format_table

        return "MuDA\n" + format_table(self.result or self._evaluate())
