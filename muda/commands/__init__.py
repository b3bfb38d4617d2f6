"""The ``muda`` commands as library functions, each taking its options object (as sacrebleu's
``corpus_bleu``): ``tag(TagArgs(...))``, ``evaluate(EvalArgs(...))``, ``download(DownloadArgs(...))``,
``train_ellipsis(TrainEllipsisArgs(...))``; ``run(options)`` runs one as the ``muda`` command does
(its outputs one transaction, an input error one 'error:' line and status 1). ``muda.cli`` parses
command lines into these options; nothing here knows argparse."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from commandkit.errors import InputError
from commandkit.options import from_namespace, namespace
from muda.commands.options import AnnotatorArgs, DownloadArgs, EvalArgs, TagArgs, TrainEllipsisArgs


def tag(o: TagArgs) -> int:
    summary = tagged(o)
    counts = ", ".join(f"{p} {n}" for p, n in summary["tags"].items())
    print(
        f"{summary['sentences']} sentences in {summary['documents']} documents ({summary['language']}): "
        f"{counts}; tags: {o.dump_tags}"
    )
    return 0


def tagged(o: TagArgs) -> Dict:
    """``muda tag``'s work: the tags written to ``o.dump_tags``; returns the summary."""
    from muda.settings import TaggerSettings
    from muda.tagger import TagOptions, tag_files

    # every option value is checked (building the options) before any file is read or model loaded
    settings = TaggerSettings(lexical_min_count=o.lexical_min_count, same_sentence_counts=o.same_sentence_counts)
    options = from_namespace(TagOptions, o, output=o.dump_tags, settings=settings)
    annotator_options = o.annotators.annotator_options()
    # all pre-computed: no model is needed, unless a trained ellipsis classifier is asked for
    precomputed = o.src_conllu and o.tgt_conllu and o.alignments and not o.annotators.ellipsis_model
    _check_tag_models(o)  # every missing model in one error, before any loads
    annotators = None if precomputed else _annotators(o.annotators, annotator_options)
    return tag_files(options, annotators)


def _check_tag_models(o: TagArgs) -> None:
    from muda.annotators.required_models import check_models, required_models

    a = o.annotators
    if a.annotator == "spacy":  # only the target's pipeline is required; the rest, when missing, is skipped
        if not o.tgt_conllu:
            _check_spacy_target(o.tgt_lang)
        return

    models = required_models(
        o.tgt_lang,
        o.phenomena,
        src_conllu=o.src_conllu,
        tgt_conllu=o.tgt_conllu,
        alignments=o.alignments,
        stanza_dir=a.stanza_dir,
        align_model=a.align_model,
    )
    check_models("muda tag", models, o.tgt_lang, a.stanza_dir, a.align_model)


def download(o: DownloadArgs) -> int:
    from muda.annotators.download import DownloadOptions
    from muda.annotators.download import download as download_models

    plan = download_models(from_namespace(DownloadOptions, o))
    print(
        f"{len(plan)} model(s) ready for muda tag --tgt-lang {o.tgt_lang}"
        + (f" --stanza-dir {o.stanza_dir}" if o.stanza_dir else "")
    )
    return 0


def _check_spacy_target(tgt_lang: str) -> None:
    """The target language's spaCy pipeline is installed (one error naming the package, else)."""
    from muda.annotators.spacy_pipeline import target_pipeline
    from muda.languages import get_language

    target_pipeline(get_language(tgt_lang))


def _annotators(a: AnnotatorArgs, options: Any, lexicon: Any = None, tgt_lang: Optional[str] = None):
    """Lexicon lookup (--lexicon) or the model annotators (stanza or spaCy), for what is not pre-computed."""
    if lexicon and a.annotator == "spacy":
        raise InputError("--lexicon annotates by lookup, with no model: leave out --annotator spacy or --lexicon")
    if a.annotator == "spacy":
        from muda.annotators.spacy_backend import SpacyAnnotators

        return SpacyAnnotators(options)
    if lexicon:
        from muda.annotators.lexicon import LexiconAnnotator

        if a.ellipsis_model:  # the lexicon has no classifier: it would be silently ignored
            raise InputError(
                "--ellipsis-model needs the model annotators; with --lexicon ellipsis comes from the "
                "rule-based detector: leave one of them out"
            )
        from muda.languages import get_language

        return LexiconAnnotator(*lexicon, language=get_language(tgt_lang) if tgt_lang else None)
    from muda.annotators.models import ModelAnnotators

    return ModelAnnotators(options)


def evaluate(o: EvalArgs) -> int:
    from muda.evaluation.table import format_muda_table

    print(format_muda_table(evaluated(o)))
    if o.output:
        print(f"JSON: {o.output}")
    return 0


def evaluated(o: EvalArgs) -> Dict:
    """``muda eval``'s work: the result (written to ``o.output``, its table to ``o.table``)."""
    from commandkit.outputs import check_distinct, check_not_inputs
    from muda.evaluation.evaluate import EvalOptions, run_eval
    from muda.evaluation.table import format_muda_table
    from muda.languages import get_language

    # every value checked before any file is read or model loaded
    align = o.align.options(get_language(o.tgt_lang).code)  # --band; the segmenter's language
    options = from_namespace(EvalOptions, o, pivot=o.align.pivot, align=align)
    annotator_options = o.annotators.annotator_options()
    check_distinct([("--output", o.output), ("--plot", o.plot), ("--table", o.table)])
    lexicon = {f"--lexicon ({k + 1})": f for k, f in enumerate(o.lexicon or ())}
    check_not_inputs({"--table": o.table}, {**options.inputs(), **lexicon})
    check_not_inputs({"--output": o.output, "--plot": o.plot}, lexicon)
    if o.annotators.annotator == "spacy" and not (o.ref_conllu and o.hyp_conllu) and not o.lexicon:
        _check_spacy_target(o.tgt_lang)  # before any file is read
    elif o.annotators.annotator != "spacy":
        _check_eval_models(o)  # every missing model in one error, before any file is read or model loaded
    result = run_eval(options, _annotators(o.annotators, annotator_options, o.lexicon, o.tgt_lang))
    if o.table:
        from commandkit.outputs import atomic_write_text

        atomic_write_text(o.table, format_muda_table(result) + "\n")
    return result


def _check_eval_models(o: EvalArgs) -> None:
    from commandkit.outputs import output_exists
    from muda.annotators.required_models import check_models, eval_required_models
    from muda.tagger import annotation_paths

    a = o.annotators
    models = eval_required_models(
        o.tgt_lang,
        tag_reference=not o.ref_tags,
        src_conllu=o.src_conllu,
        ref_conllu=o.ref_conllu,
        ref_alignments=o.ref_alignments,
        source_from_reference=bool(o.ref_tags and output_exists(annotation_paths(o.ref_tags)["src_conllu"])),
        hyp_conllu=o.hyp_conllu,
        hyp_alignments=o.hyp_alignments,
        stanza_dir=a.stanza_dir,
        align_model=a.align_model,
        lexicon=bool(o.lexicon),
    )
    check_models(
        "muda eval",
        models,
        o.tgt_lang,
        a.stanza_dir,
        a.align_model,
        "--src-conllu, --ref-conllu/--hyp-conllu, --ref-alignments/--hyp-alignments, or --lexicon "
        "SRC.conllu TGT.conllu ALIGN for the systems",
    )


def train_ellipsis(o: TrainEllipsisArgs) -> int:
    from muda.annotators.ellipsis_bert import train_ellipsis as train

    r = train(
        o.ptb,
        o.base_model,
        o.output,
        epochs=o.epochs,
        batch_size=o.batch_size,
        lr=o.lr,
        positive_weight=o.positive_weight,
        device="cpu" if o.cpu else None,
    )
    print(f"trained on {r['sentences']} sentences ({r['positives']} with ellipsis); model: {r['output']}")
    return 0


COMMANDS: Dict[type, Callable[[Any], int]] = {
    TagArgs: tag,
    EvalArgs: evaluate,
    DownloadArgs: download,
    TrainEllipsisArgs: train_ellipsis,
}


def outputs_of(o: Any) -> Any:
    """The command's files as ``commandkit.command_outputs`` reads them (what it writes, what it reads)."""
    return namespace(o, output_args=getattr(o, "OUTPUT_ARGS", ()), output_dir_args=getattr(o, "OUTPUT_DIR_ARGS", ()))


def run(o: Any, names: Any = None) -> int:
    """Run the command of options ``o`` as ``muda`` runs it: its outputs one transaction, checked
    against its inputs first (``names``: the parser, for how an error names the options). A bad
    input raises ``InputError``; the command line's boundary prints it."""
    from commandkit.command_outputs import command_outputs

    with command_outputs(outputs_of(o), names):
        return COMMANDS[type(o)](o)


__all__ = [
    "AnnotatorArgs",
    "DownloadArgs",
    "EvalArgs",
    "TagArgs",
    "TrainEllipsisArgs",
    "download",
    "evaluate",
    "run",
    "tag",
    "train_ellipsis",
]
