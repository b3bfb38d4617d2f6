"""``contextual-mt pipeline data`` (pipeline/prepare.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Optional

from commandkit.options import from_namespace, option
from contextual_mt.cli.common import command, overwrite_option, quiet_option
from contextual_mt.pipeline.data_plan import SPM_TYPES
from contextual_mt.pipeline.prepare import SPLITS, DataOptions, default_workers, prepare_data_steps
from contextual_mt.pipeline.presets import PRESETS, get_preset

DATA_DESCRIPTION = """\
Prepare one language pair (en -> LANG) from one corpus. Writes into OUTPUT:
  {train,valid,test}.{en,LANG,docids}  detokenized text, one document id per line
  spm.model, spm.vocab                 a joint sentencepiece model (train.en + train.LANG)
  bin/                                 fairseq-preprocess --joined-dictionary output, the dictionaries
                                       holding every piece of spm.model, <brk> and <mask>, and
                                       {split}.en-LANG.docids
  summary.json                         counts per split, settings, fingerprint, seconds per step
Each step is renamed into place when complete; a re-run with the same inputs and options skips
the finished steps, one with other inputs or options is refused unless --overwrite."""

INPUT = "input (exactly one)"


def data_args():
    """The stage's options (a function: ``--workers``' help names this machine's default)."""

    @dataclass
    class DataArgs:
        lang: str = option(required=True, help="target language code (the source is en), e.g. fr, de, pt-br")
        ted: Optional[str] = option(
            metavar="PATH",
            group=INPUT,
            help="the TED talks corpus of Qi et al. 2018: "
            "ted_talks.tar.gz or the folder it unpacks to (Moses-tokenized: detokenized with "
            "sacremoses)",
        )
        iwslt: Optional[str] = option(
            metavar="DIR", group=INPUT, help="an IWSLT17 en-XX release folder (train.tags.* and IWSLT17.TED.*.xml)"
        )
        text: Optional[str] = option(
            metavar="DIR", group=INPUT, help="a folder with {train,valid,test}.{en,XX,docids}, used as is"
        )
        output: str = option(required=True, metavar="DIR", help="folder to write (e.g. data/fr)")
        vocab_size: Optional[int] = option(
            type=int,
            help=f"sentencepiece pieces (default: the --preset's, else {DataOptions.vocab_size}, the papers' TED "
            "set-up)",
        )
        preset: Optional[str] = option(
            choices=sorted(PRESETS),
            help="the training preset the data is for (make: PRESET): its vocabulary size when --vocab-size "
            "is not given (" + ", ".join(f"{p.name} {p.vocab_size}" for p in PRESETS.values() if p.vocab_size) + ")",
        )
        spm_type: str = option(
            choices=SPM_TYPES,
            default=DataOptions.spm_type,
            help=f"sentencepiece model type (default: {DataOptions.spm_type})",
        )
        character_coverage: Optional[float] = option(
            type=float, help="sentencepiece character coverage (default: 0.9995 for ja/zh/ko, else 1.0)"
        )
        input_sentence_size: int = option(
            type=int,
            default=DataOptions.input_sentence_size,
            help="sentencepiece trains on a random sample of at most this many "
            f"sentences (default: {DataOptions.input_sentence_size})",
        )
        iwslt_dev: Optional[str] = option(
            metavar="SETS", help="IWSLT set(s) for the valid split, comma-separated (default: dev2010)"
        )
        iwslt_test: Optional[str] = option(
            metavar="SETS",
            help="IWSLT set(s) for the test split, comma-separated "
            "(default: tst2015 if present, else the newest tst set)",
        )
        workers: int = option(
            type=int,
            default=DataOptions.workers,
            help=f"processes for detokenization, encoding and binarization (default: {default_workers()})",
        )
        overwrite: bool = overwrite_option(
            "replace what OUTPUT holds (by default, a run with other inputs or "
            "options is refused, and a run with the same ones skips the finished "
            "steps)"
        )
        quiet: bool = quiet_option("no progress lines")

    return DataArgs


def data(args: argparse.Namespace) -> int:
    preset_vocab = get_preset(args.preset).vocab_size if args.preset else None
    vocab_size = args.vocab_size if args.vocab_size is not None else preset_vocab or DataOptions.vocab_size
    options = from_namespace(DataOptions, args, vocab_size=vocab_size)
    summary, ran = prepare_data_steps(options, progress=not args.quiet)
    for split in SPLITS:
        s = summary["splits"][split]
        print(
            f"{split}: {s['documents']} documents, {s['sentences']} sentences ({s['dropped']} rows dropped), "
            + ", ".join(f"{lang} {n} tokens" for lang, n in s["tokens"].items())
        )
    what = (
        f"text splits, spm.model ({summary['spm']['pieces']} pieces), bin/ (dictionary "
        f"{summary['bin']['dictionary_size']}), summary.json"
    )
    if ran:
        print(f"wrote {options.output}: {what}")
    else:
        print(f"{options.output}: up to date (made from these inputs and options): {what}")
    print(f"lexical table for `contextual-mt align --pivot none`: {lexical_table_of(options.output, options.lang)}")
    return 0


def lexical_table_of(folder: str, lang: str) -> str:
    """The train split's IBM Model 1 table (``docalign.lexical``), learned now unless its cache beside
    the split was learned from these files (then read): `align --pivot none --lexical-train` finds it."""
    import os

    from docalign.lexical.model1 import lexical_table, table_path

    source, target = os.path.join(folder, "train.en"), os.path.join(folder, f"train.{lang}")
    lexical_table(source, target)
    return table_path(source, target)


def add(sub) -> argparse.ArgumentParser:
    """Add the ``data`` subcommand to ``sub`` (of ``contextual-mt pipeline``)."""
    return command(
        sub,
        "data",
        data_args(),
        data,
        "prepare one language pair: text splits, a joint sentencepiece model, fairseq-binarized data",
        transaction=False,  # the stage writes and resumes step by step
        parser_settings={"description": DATA_DESCRIPTION, "formatter_class": argparse.RawDescriptionHelpFormatter},
    )
