"""``muda download``: get every model a ``muda tag`` run needs (``required_models``) in one go,
where the tagger will look for them: stanza's models into ``--stanza-dir``, the aligner into the
Hugging Face cache. Needs network; without it, one error line naming what could not be got."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, ClassVar, List, Optional, Tuple

from commandkit.errors import Code, InputError
from commandkit.options import option
from muda.annotators.required_models import (
    DEFAULT_ALIGN_MODEL,
    RequiredModel,
    default_stanza_dir,
    missing_models,
    required_models,
)
from muda.phenomena import phenomenon_names


@dataclass(frozen=True)
class DownloadOptions:
    """``muda download``: the models of a ``muda tag`` run for ``tgt_lang``, less the parts whose
    annotations are pre-computed (``no_*``)."""

    tgt_lang: str = option(required=True, help="target language: ISO code or TED variant (pt-br, zh-cn)")
    phenomena: Optional[List[str]] = option(nargs="+", choices=phenomenon_names(), help="default: all")
    stanza_dir: Optional[str] = option(
        help="where to put stanza's models (default: $STANZA_RESOURCES_DIR or "
        "~/stanza_resources); give `muda tag` the same"
    )
    align_model: str = option(
        default=DEFAULT_ALIGN_MODEL, help="the awesome-align model (a Hugging Face name), into the Hugging Face cache"
    )
    no_source: bool = option(
        action="store_true", default=False, help="not the English models (--src-conllu is pre-computed)"
    )
    no_target: bool = option(action="store_true", default=False, help="not the target's (--tgt-conllu is pre-computed)")
    no_aligner: bool = option(
        action="store_true", default=False, help="not the aligner (--alignments are pre-computed)"
    )

    OUTPUT_ARGS: ClassVar[Tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.tgt_lang, str) or not self.tgt_lang:
            raise InputError(
                f"--tgt-lang: a language code is required (got {self.tgt_lang!r})", code=Code.OPTION_MISSING
            )


def download_plan(options: DownloadOptions) -> List[RequiredModel]:
    """The models ``download`` gets: those of ``required_models`` less the parts left out."""
    # a pre-computed part is a part whose model is not needed: say so with a stand-in file name
    return required_models(
        options.tgt_lang,
        options.phenomena,
        stanza_dir=options.stanza_dir,
        align_model=options.align_model,
        src_conllu="given" if options.no_source else None,
        tgt_conllu="given" if options.no_target else None,
        alignments="given" if options.no_aligner else None,
    )


def stanza_download(model: RequiredModel) -> None:
    """The stanza models of one language, then one pipeline built from them: a processor that
    builds on a transformer (English coreference) fetches it into the Hugging Face cache then."""
    import stanza

    stanza.download(model.name, model_dir=model.where, processors=model.processors, logging_level="WARN")
    stanza.Pipeline(
        model.name,
        dir=model.where,
        processors=model.processors,
        download_method="reuse_resources",
        logging_level="WARN",
        use_gpu=False,
    )


def aligner_download(model: RequiredModel) -> None:
    """The aligner's tokenizer and weights, into the Hugging Face cache."""
    from transformers import AutoModel, AutoTokenizer

    AutoTokenizer.from_pretrained(model.name)
    AutoModel.from_pretrained(model.name)


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def download(options: DownloadOptions, log: Callable[[str], None] = print) -> List[RequiredModel]:
    """Get every model of the plan that is missing (those already here are kept); returns the
    plan. Any failure (no network above all) is one InputError naming the model."""
    plan = download_plan(options)
    for m in plan:
        if m.present:
            log(f"{m.label}: already in {m.where}")
            continue
        if not m.downloadable:
            raise InputError(
                f"{m.label}: folder not found or without config.json and weights; give a model folder "
                f"or a Hugging Face name to --align-model",
                code=Code.MODEL,
            )
        created = m.kind == "stanza" and not os.path.exists(m.where)
        try:
            (stanza_download if m.kind == "stanza" else aligner_download)(m)
        except Exception as e:  # network, disk, unknown name: stanza and transformers raise many kinds
            if created and os.path.isdir(m.where) and not any(os.scandir(m.where)):
                os.rmdir(m.where)  # nothing got there: leave no empty folder behind
            raise InputError(
                f"muda download: cannot get {m.label} ({_one_line(e)}); this needs network: run it on a "
                f"machine that has it and copy {m.where} here",
                code=Code.MODEL,
            ) from None
        log(f"{m.label}: got it into {m.where}")
    still = missing_models(download_plan(options))
    if still:  # downloaded, yet not where the tagger looks: say so now rather than at `muda tag`
        raise InputError(
            f"muda download: {', '.join(m.label for m in still)} still not found after downloading "
            f"(looked in {', '.join(sorted({m.where for m in still}))})",
            code=Code.MODEL,
        )
    return plan


__all__ = ["DownloadOptions", "default_stanza_dir", "download", "download_plan"]
