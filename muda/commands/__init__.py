"""The ``muda`` commands as library functions, each taking its options object (as sacrebleu's
``corpus_bleu``): ``tag(TagOptions(...))``, ``evaluate(EvalOptions(...))``, ``download(DownloadOptions(...))``,
``train_ellipsis(TrainEllipsisOptions(...))``; ``run(options)`` runs one as the ``muda`` command does
(its outputs one transaction, an input error one 'error:' line and status 1). ``muda.cli`` parses
command lines into these options; nothing here knows argparse."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from commandkit.errors import Code, InputError
from commandkit.options import namespace
from muda.commands.options import AnnotatorOptions, DownloadOptions, TrainEllipsisOptions
from muda.evaluation.evaluate import EvalOptions
from muda.tagger import TagOptions


def tag(options: TagOptions) -> int:
    summary = tagged(options)
    counts = ", ".join(f"{p} {n}" for p, n in summary["tags"].items())
    print(
        f"{summary['sentences']} sentences in {summary['documents']} documents ({summary['language']}): "
        f"{counts}; tags: {options.dump_tags}"
    )
    return 0


def tagged(options: TagOptions) -> Dict:
    """``muda tag``'s work: the tags written to ``options.dump_tags``; returns the summary."""
    from muda.tagger import tag_files

    # every option value was checked (building the options) before any file is read or model loaded
    # all pre-computed: no model is needed, unless a trained ellipsis classifier is asked for
    precomputed = (
        options.src_conllu and options.tgt_conllu and options.alignments and not options.annotators.ellipsis_model
    )
    _check_tag_models(options)  # every missing model in one error, before any loads
    annotators = None if precomputed else _annotators(options.annotators)
    return tag_files(options, annotators)


def _check_tag_models(options: TagOptions) -> None:
    from muda.annotators.required_models import check_models, required_models

    a = options.annotators
    if a.annotator == "spacy":  # only the target's pipeline is required; the rest, when missing, is skipped
        if not options.tgt_conllu:
            _check_spacy_target(options.tgt_lang)
        return

    models = required_models(
        options.tgt_lang,
        options.phenomena,
        src_conllu=options.src_conllu,
        tgt_conllu=options.tgt_conllu,
        alignments=options.alignments,
        stanza_dir=a.stanza_dir,
        align_model=a.align_model,
    )
    check_models("muda tag", models, options.tgt_lang, a.stanza_dir, a.align_model)


def download(options: DownloadOptions) -> int:
    from muda.annotators.download import download as download_models

    plan = download_models(options)
    print(
        f"{len(plan)} model(s) ready for muda tag --tgt-lang {options.tgt_lang}"
        + (f" --stanza-dir {options.stanza_dir}" if options.stanza_dir else "")
    )
    return 0


def _check_spacy_target(tgt_lang: str) -> None:
    """The target language's spaCy pipeline is installed (one error naming the package, else)."""
    from muda.annotators.spacy_pipeline import target_pipeline
    from muda.languages import get_language

    target_pipeline(get_language(tgt_lang))


def _annotators(options: AnnotatorOptions, lexicon: Any = None, tgt_lang: Optional[str] = None):
    """Lexicon lookup (--lexicon) or the model annotators (stanza or spaCy), for what is not pre-computed."""
    if lexicon and options.annotator == "spacy":
        raise InputError(
            "--lexicon annotates by lookup, with no model: leave out --annotator spacy or --lexicon",
            code=Code.OPTIONS_CONFLICT,
        )
    if options.annotator == "spacy":
        from muda.annotators.spacy_backend import SpacyAnnotators

        return SpacyAnnotators(options)
    if lexicon:
        from muda.annotators.lexicon import LexiconAnnotator

        if options.ellipsis_model:  # the lexicon has no classifier: it would be silently ignored
            raise InputError(
                "--ellipsis-model needs the model annotators; with --lexicon ellipsis comes from the "
                "rule-based detector: leave one of them out",
                code=Code.OPTIONS_CONFLICT,
            )
        from muda.languages import get_language

        return LexiconAnnotator(*lexicon, language=get_language(tgt_lang) if tgt_lang else None)
    from muda.annotators.models import ModelAnnotators

    return ModelAnnotators(options)


def evaluate(options: EvalOptions) -> int:
    from muda.evaluation.table import format_muda_table

    print(format_muda_table(evaluated(options)))
    if options.output:
        print(f"JSON: {options.output}")
    return 0


def evaluated(options: EvalOptions) -> Dict:
    """``muda eval``'s work: the result (written to ``options.output``, its table to ``options.table``)."""
    from commandkit.outputs import check_distinct, check_not_inputs
    from muda.evaluation.evaluate import run_eval
    from muda.evaluation.table import format_muda_table

    # every value checked (building the options, then here) before any file is read or model loaded
    check_distinct([("--output", options.output), ("--plot", options.plot), ("--table", options.table)])
    lexicon = {f"--lexicon ({k + 1})": f for k, f in enumerate(options.lexicon or ())}
    check_not_inputs({"--table": options.table}, {**options.inputs(), **lexicon})
    check_not_inputs({"--output": options.output, "--plot": options.plot}, lexicon)
    spacy = options.annotators.annotator == "spacy"
    if spacy and not (options.ref_conllu and options.hyp_conllu) and not options.lexicon:
        _check_spacy_target(options.tgt_lang)  # before any file is read
    elif not spacy:
        _check_eval_models(options)  # every missing model in one error, before any file is read or model loaded
    result = run_eval(options, _annotators(options.annotators, options.lexicon, options.tgt_lang))
    if options.table:
        from commandkit.outputs import atomic_write_text

        atomic_write_text(options.table, format_muda_table(result) + "\n")
    return result


def _check_eval_models(options: EvalOptions) -> None:
    from commandkit.outputs import output_exists
    from muda.annotators.required_models import check_models, eval_required_models
    from muda.tagger import annotation_paths

    a = options.annotators
    models = eval_required_models(
        options.tgt_lang,
        tag_reference=not options.ref_tags,
        src_conllu=options.src_conllu,
        ref_conllu=options.ref_conllu,
        ref_alignments=options.ref_alignments,
        source_from_reference=bool(
            options.ref_tags and output_exists(annotation_paths(options.ref_tags)["src_conllu"])
        ),
        hyp_conllu=options.hyp_conllu,
        hyp_alignments=options.hyp_alignments,
        stanza_dir=a.stanza_dir,
        align_model=a.align_model,
        lexicon=bool(options.lexicon),
    )
    check_models(
        "muda eval",
        models,
        options.tgt_lang,
        a.stanza_dir,
        a.align_model,
        "--src-conllu, --ref-conllu/--hyp-conllu, --ref-alignments/--hyp-alignments, or --lexicon "
        "SRC.conllu TGT.conllu ALIGN for the systems",
    )


def train_ellipsis(options: TrainEllipsisOptions) -> int:
    from muda.annotators.ellipsis_bert import train_ellipsis as train

    r = train(options)
    print(f"trained on {r['sentences']} sentences ({r['positives']} with ellipsis); model: {r['output']}")
    return 0


COMMANDS: Dict[type, Callable[[Any], int]] = {
    TagOptions: tag,
    EvalOptions: evaluate,
    DownloadOptions: download,
    TrainEllipsisOptions: train_ellipsis,
}


def outputs_of(options: Any) -> Any:
    """The command's files as ``commandkit.command_outputs`` reads them (what it writes, what it reads)."""
    return namespace(
        options,
        output_args=getattr(options, "OUTPUT_ARGS", ()),
        output_dir_args=getattr(options, "OUTPUT_DIR_ARGS", ()),
    )


def run(options: Any, names: Any = None) -> int:
    """Run the command of ``options`` as ``muda`` runs it: its outputs one transaction, checked
    against its inputs first (``names``: the parser, for how an error names the options). A bad
    input raises ``InputError``; the command line's boundary prints it."""
    from commandkit.command_outputs import command_outputs

    with command_outputs(outputs_of(options), names):
        return COMMANDS[type(options)](options)


__all__ = [
    "AnnotatorOptions",
    "DownloadOptions",
    "EvalOptions",
    "TagOptions",
    "TrainEllipsisOptions",
    "download",
    "evaluate",
    "run",
    "tag",
    "train_ellipsis",
]
