"""``fairseq-generate --scoring muda``: the MuDA table (per-tag word f-measure, BLEU) at the end
of generation. Needs ``--task document_translation``, which records the sample ids (fairseq
gives scorers strings only, in generation order).
(No `from __future__ import annotations`: fairseq reads the config field types at run time.)"""

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator, Optional, Tuple

from fairseq.dataclass import FairseqDataclass
from fairseq.scoring import BaseScorer, register_scorer

from commandkit.outputs import atomic_write_lines, scratch_directory
from contextual_mt.backends.fairseq.generation import generation_order
from contextual_mt.errors import Code, InputError

if TYPE_CHECKING:
    from muda.annotators.base import Annotator


@dataclass
class MudaScorerConfig(FairseqDataclass):
    muda_ref_tags: Optional[str] = field(default=None, metadata={"help": "tags of the reference (muda tag)"})
    muda_docids: Optional[str] = field(default=None, metadata={"help": "document id of each test line"})
    muda_src: Optional[str] = field(default=None, metadata={"help": "raw English source of the test set"})
    muda_tgt_lang: Optional[str] = field(default=None, metadata={"help": "target language"})
    muda_ref: Optional[str] = field(
        default=None, metadata={"help": "raw reference (default: fairseq's detokenized references)"}
    )
    muda_src_conllu: Optional[str] = field(default=None, metadata={"help": "CoNLL-U of the source"})
    muda_lexicon: Optional[str] = field(
        default=None,
        metadata={"help": "SRC.conllu,TGT.conllu,ALIGN: annotate hypotheses by lookup in this corpus (no model)"},
    )
    muda_output: Optional[str] = field(default=None, metadata={"help": "write the JSON result here"})


# muda's messages name `muda eval` flags; under fairseq-generate they are --muda-*
_MUDA_FLAGS = re.compile(r"(?<![\w-])--(src-conllu|lexicon|ref-tags|docids|src|ref|tgt-lang|output)(?![\w-])")


def as_scorer_flags(message: str) -> str:
    return _MUDA_FLAGS.sub(lambda m: f"--muda-{m.group(1)}", message)


@contextmanager
def scorer_flags() -> Iterator[None]:
    """Errors from muda, with the flag names of this scorer."""
    try:
        yield
    except InputError as e:
        raise InputError(as_scorer_flags(str(e)), code=e.code) from None


def required_inputs(cfg: MudaScorerConfig) -> Tuple[str, str, str, str]:
    """--muda-ref-tags, --muda-docids, --muda-src and --muda-tgt-lang, which --scoring muda needs."""
    ref_tags, docids, src, tgt_lang = cfg.muda_ref_tags, cfg.muda_docids, cfg.muda_src, cfg.muda_tgt_lang
    if not (ref_tags and docids and src and tgt_lang):
        missing = [
            f"--{k.replace('_', '-')}"
            for k in ("muda_ref_tags", "muda_docids", "muda_src", "muda_tgt_lang")
            if not getattr(cfg, k)
        ]
        raise InputError(f"--scoring muda needs {', '.join(missing)}", code=Code.OPTION_MISSING)
    return ref_tags, docids, src, tgt_lang


def check_inputs(cfg: MudaScorerConfig) -> Optional["Annotator"]:
    """Everything --scoring muda reads, checked when the scorer is built (before generation);
    returns the --muda-lexicon annotator, if one is asked for."""
    from commandkit.documents import read_docids
    from commandkit.text import check_input_file, read_lines
    from muda.evaluation.evaluate import check_ref_tags
    from muda.formats.tags import read_tags
    from muda.languages import get_language

    ref_tags, docids, src, tgt_lang = required_inputs(cfg)
    get_language(tgt_lang)
    srcs, ids = read_lines(src), read_docids(docids)
    if len(ids) != len(srcs):
        raise InputError(f"{docids}: has {len(ids)} lines but {src} has {len(srcs)}", code=Code.LINE_COUNT)
    dump = read_tags(ref_tags)
    if cfg.muda_ref:
        refs = read_lines(cfg.muda_ref)
        if len(refs) != len(srcs):
            raise InputError(f"{cfg.muda_ref}: has {len(refs)} lines but {src} has {len(srcs)}", code=Code.LINE_COUNT)
        check_ref_tags(ref_tags, dump, refs)
    elif sum(len(doc) for doc in dump) != len(srcs):
        raise InputError(
            f"{ref_tags}: has {sum(len(doc) for doc in dump)} sentences but {src} has {len(srcs)} lines",
            code=Code.LINE_COUNT,
        )
    if cfg.muda_src_conllu:
        check_input_file(cfg.muda_src_conllu, "CoNLL-U file")
    if not cfg.muda_lexicon:
        return None
    files = cfg.muda_lexicon.split(",")
    if len(files) != 3:
        raise InputError(
            f"--muda-lexicon takes three files, SRC.conllu,TGT.conllu,ALIGN (got {len(files)})", code=Code.OPTION_VALUE
        )
    _check_source_annotations(cfg, ref_tags)
    from muda.annotators.lexicon import LexiconAnnotator

    return LexiconAnnotator(*files, language=get_language(tgt_lang))


def _check_source_annotations(cfg: MudaScorerConfig, ref_tags: str) -> None:
    """The lexicon cannot parse the English source: it must come as CoNLL-U, given or beside
    the reference tags (where `muda tag` writes it)."""
    from commandkit.outputs import output_exists
    from muda.tagger import annotation_paths

    beside = annotation_paths(ref_tags)["src_conllu"]
    if not cfg.muda_src_conllu and not output_exists(beside):
        raise InputError(
            "--muda-lexicon cannot annotate the English source (it has no parser and no coreference): "
            f"pass --muda-src-conllu (CoNLL-U of --muda-src with CorefUD coreference), or --muda-ref-tags "
            f"from `muda tag` with the .src.conllu it wrote beside them ({beside} not found)",
            code=Code.OPTION_MISSING,
        )


@register_scorer("muda", dataclass=MudaScorerConfig)
class MudaScorer(BaseScorer):
    def __init__(self, cfg):
        super().__init__(cfg)
        required_inputs(cfg)
        with scorer_flags():  # fail now, not after the whole generation
            self.lexicon = check_inputs(cfg)
        generation_order.start()
        self.result = None

    def _evaluate(self):
        with scorer_flags():
            return self._run_eval()

    def _run_eval(self):
        from muda.evaluation.evaluate import EvalOptions, run_eval

        ids = generation_order.recorded()
        if len(ids) != len(self.pred):
            raise InputError(
                f"--scoring muda: {len(self.pred)} hypotheses but {len(ids)} recorded sample ids "
                "(it needs --task document_translation)",
                code=Code.MISMATCH,
            )
        order = sorted(range(len(ids)), key=lambda k: ids[k])
        if [ids[k] for k in order] != list(range(len(ids))):
            raise InputError(
                f"--scoring muda: sample ids are not 0..{len(ids) - 1}; score the whole subset "
                "(no --max-sentences cut-off)",
                code=Code.MISMATCH,
            )
        with scratch_directory("muda-scorer-") as work:  # intermediate files, removed at the end
            hyp, ref = os.path.join(work, "hypotheses"), self.cfg.muda_ref or os.path.join(work, "reference")
            atomic_write_lines(hyp, [self.pred[k] for k in order], transactional=False)
            if not self.cfg.muda_ref:
                atomic_write_lines(ref, [self.ref[k] for k in order], transactional=False)
            annotators = self.lexicon
            if annotators is None:
                from muda.annotators.models import ModelAnnotators

                annotators = ModelAnnotators()
            options = EvalOptions(
                self.cfg.muda_src,
                ref,
                self.cfg.muda_docids,
                self.cfg.muda_tgt_lang,
                [hyp],
                output=self.cfg.muda_output,
                ref_tags=self.cfg.muda_ref_tags,
                src_conllu=self.cfg.muda_src_conllu,
                names=["system"],
                bootstrap=0,
                work_dir=os.path.join(work, "tags"),
            )
            self.result = run_eval(options, annotators)
        return self.result

    def score(self) -> float:
        result = self.result or self._evaluate()
        return result["systems"]["system"]["bleu"]

    def result_string(self) -> str:
        from muda.evaluation.table import format_muda_table

        return "MuDA\n" + format_muda_table(self.result or self._evaluate())
