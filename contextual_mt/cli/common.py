"""What several ``contextual-mt`` commands share, declared once: the model options (a fairseq
checkpoint or a Hugging Face model), ``--max-tokens``, the run options (``--overwrite``,
``--quiet``), and ``command``, which adds a subcommand generated from its options dataclass."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Callable, Optional, Type

from commandkit.options import add_options, option
from contextual_mt.inference.batching import MAX_TOKENS_HELP
from contextual_mt.stage_record import partial_path


def command(
    sub: Any, name: str, cls: Type[Any], func: Callable[[argparse.Namespace], int], help: str, **defaults: Any
) -> argparse.ArgumentParser:
    """The subcommand ``name`` of ``sub``: its arguments generated from ``cls``, its ``func`` and
    the ``defaults`` the runner reads (output_args, side_outputs, transaction, ...)."""
    parser_settings = defaults.pop("parser_settings", {})
    p = add_options(sub.add_parser(name, help=help, **parser_settings), cls)
    p.set_defaults(func=func, **defaults)
    return p


def keyword_default(func: Callable[..., Any], name: str) -> Any:
    """The default of ``func``'s keyword argument ``name``: declared there once, read here."""
    import inspect

    return inspect.signature(func).parameters[name].default


def max_tokens_option() -> Any:
    """``--max-tokens``: the same option wherever batches are cut (``inference.batching``)."""
    return option(help=MAX_TOKENS_HELP)


def quiet_option(help: Optional[str] = None) -> Any:
    return option(action="store_true", default=False, help=help)


def overwrite_option(help: str, *aliases: str) -> Any:
    return option("--overwrite", *aliases, action="store_true", default=False, help=help)


RESUME_HELP = "discard OUTPUT.partial (an interrupted run's records) instead of resuming from it"
PARTIAL_HELP = "discard the records of an interrupted run made from other inputs or settings (OUTPUT.partial)"
DTYPES_METAVAR = "{auto,float32,bfloat16,float16}"  # not argparse choices: a bad value is one line (exit 1)

MODEL_GROUP = "the model: a fairseq checkpoint (or --hf-model, below)"
HF_GROUP = "Hugging Face models (instead of --path)"


@dataclass
class ModelArgs:
    """The model options of translate, cxmi, attribute and contrastive (read by ``model_options``)."""

    path: Optional[str] = option(group=MODEL_GROUP, help="document_translation checkpoint")
    spm: Optional[str] = option(
        group=MODEL_GROUP, help="sentencepiece model (default: the text is already tokenized as the model's)"
    )
    data: Optional[str] = option(
        group=MODEL_GROUP,
        help="directory with dict.*.txt (default: the checkpoint's directory, then the training data directory)",
    )
    source_context_size: Optional[int] = option(
        group=MODEL_GROUP, help="default: as trained (--hf-model: 1); 0: no source context"
    )
    target_context_size: Optional[int] = option(
        group=MODEL_GROUP, help="default: as trained (--hf-model: 1); 0: no target context"
    )
    cpu: bool = option(action="store_true", default=False, help="do not use a GPU even if one is present")
    threads: Optional[int] = option(
        help="CPU threads torch computes with (default: torch's, one per core; on a machine shared with "
        "other jobs, fewer threads are often faster)",
    )
    dtype: Optional[str] = option(
        empty_ok=True,
        metavar=DTYPES_METAVAR,
        group="precision",
        help="the model's weights and activations (log-probabilities are float32 in every "
        "case); fairseq checkpoints: default auto, float32 on every device (half precision was "
        "slower on a GPU too: docs/explanations/precision.md); --hf-model: default float32",
    )
    fp16: bool = option(
        action="store_true", default=False, group="precision", help="--dtype float16 (fairseq's --fp16 at generation)"
    )
    hf_model: Optional[str] = option(
        metavar="FOLDER_OR_NAME",
        group=HF_GROUP,
        help="a seq2seq MT model (Marian, mBART-50, NLLB, M2M100) or a decoder-only LM: "
        "a local folder or a name in the local Hugging Face cache",
    )
    hf_separator: Optional[str] = option(
        empty_ok=True,
        group=HF_GROUP,
        help="seq2seq: joins the context sentences and the current one (default: a space)",
    )
    src_lang: Optional[str] = option(
        group=HF_GROUP,
        help="language code of the tokenizer (mBART-50: en_XX, NLLB: "
        "eng_Latn, M2M100: en), or a language name for prompt templates",
    )
    tgt_lang: Optional[str] = option(
        group=HF_GROUP, help="as --src-lang; also the >>xx<< token of multi-target Marian models"
    )
    prompt_template: Optional[str] = option(
        group=HF_GROUP,
        help="decoder-only: a JSON template file, 'plain' or "
        "'chat' (default: the tokenizer's chat template if it has one, else "
        "'plain')",
    )
    device_map: Optional[str] = option(
        choices=("auto",), group=HF_GROUP, help="spread a model too large for one GPU over the GPUs"
    )


HF_ONLY = ("hf_separator", "src_lang", "tgt_lang", "prompt_template", "device_map")
FAIRSEQ_ONLY = ("spm", "data")


# torch takes a C int and starts one OpenMP thread each: far past any machine's cores is a typo
MAX_THREADS = 4096


def set_threads(threads: int) -> None:
    """``--threads``: torch's CPU threads, within 1..MAX_THREADS (one line naming the option
    otherwise); more than the machine's cores is allowed, with a warning (they only compete)."""
    import logging
    import os

    from contextual_mt.errors import ContextualMTError

    if threads < 1:
        raise ContextualMTError(f"--threads must be at least 1 (got {threads})")
    if threads > MAX_THREADS:
        raise ContextualMTError(f"--threads must be at most {MAX_THREADS} (got {threads})")
    cores = os.cpu_count()
    if cores is not None and threads > cores:
        logging.getLogger(__name__).warning(
            "--threads %d: more than this machine's %d CPU cores; the extra threads only compete for them",
            threads,
            cores,
        )
    import torch

    torch.set_num_threads(threads)


def model_options(args: argparse.Namespace):
    """A fairseq checkpoint (--path) or a Hugging Face model (--hf-model), the other's options refused."""
    from contextual_mt.errors import ContextualMTError

    if args.threads is not None:
        set_threads(args.threads)
    if args.fp16:  # an alias: with another --dtype, which one was meant?
        if args.dtype not in (None, "float16"):
            raise ContextualMTError(
                f"--fp16 is --dtype float16: give one of them, not --fp16 with --dtype {args.dtype}"
            )
        args.dtype = "float16"
    if args.path and args.hf_model:
        raise ContextualMTError("give one model: --path CHECKPOINT (fairseq) or --hf-model FOLDER_OR_NAME, not both")
    if not (args.path or args.hf_model):
        raise ContextualMTError("give the model: --path CHECKPOINT (fairseq) or --hf-model FOLDER_OR_NAME")
    flag = lambda name: "--" + name.replace("_", "-")  # noqa: E731
    if args.hf_model:
        from contextual_mt.backends.hf.options import HFModelOptions

        given = [flag(n) for n in FAIRSEQ_ONLY if getattr(args, n, None) is not None]
        if given:
            raise ContextualMTError(
                f"{', '.join(given)}: for fairseq checkpoints only; --hf-model brings its tokenizer"
            )
        if args.dtype == "auto":
            raise ContextualMTError(
                "--dtype auto: for fairseq checkpoints only (--hf-model runs in float32 unless "
                "--dtype bfloat16 or float16 is given)"
            )
        sizes = {
            k: 1 if getattr(args, k) is None else getattr(args, k)
            for k in ("source_context_size", "target_context_size")
        }
        return HFModelOptions(
            args.hf_model,
            src_lang=args.src_lang,
            tgt_lang=args.tgt_lang,
            separator=args.hf_separator if args.hf_separator is not None else " ",
            prompt_template=args.prompt_template,
            dtype="float32" if args.dtype is None else args.dtype,
            device_map=args.device_map,
            cpu=args.cpu,
            **sizes,
        )
    given = [flag(n) for n in HF_ONLY if getattr(args, n, None) is not None]
    if given:
        raise ContextualMTError(f"{', '.join(given)}: for --hf-model only")
    from contextual_mt.backends.fairseq.model import FairseqModelOptions

    return FairseqModelOptions(
        args.path,
        spm=args.spm,
        data=args.data,
        source_context_size=args.source_context_size,
        target_context_size=args.target_context_size,
        cpu=args.cpu,
        dtype="auto" if args.dtype is None else args.dtype,
    )  # --dtype= (empty) is refused


def cxmi_side_outputs(args: argparse.Namespace):
    """What cxmi (and attribute) write or remove beside --output (an input may be none of them)."""
    from contextual_mt.analysis.cxmi_summary import summary_path

    return [("--output's summary", summary_path(args.output)), ("--output's .partial", partial_path(args.output))]
