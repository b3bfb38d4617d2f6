"""``contextual-mt testset build|import|evaluate|cues``: test suites from MuDA tags, or imported."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import List, Optional

from commandkit.options import from_namespace, group, option
from contextual_mt.cli.common import command, overwrite_option
from contextual_mt.testsets.build import PHENOMENA, BuildOptions
from contextual_mt.testsets.cues import CueOptions
from contextual_mt.testsets.evaluate import EvaluateOptions
from docalign.align import ALIGN_GROUP, AlignArgs
from muda.commands.options import ANNOTATORS, AnnotatorArgs, cache_dir_option


@dataclass
class BuildArgs:
    """``contextual-mt testset build`` (``BuildOptions``; without --tags, ``muda tag`` first)."""

    source: str = option(required=True, help="English source, one sentence per line")
    reference: str = option(required=True, help="the reference translation, line by line")
    docids: str = option(required=True, help="document id of each line")
    lang: str = option(required=True, help="target language (MuDA's code: fr, de, ...)")
    output_dir: str = option(
        required=True,
        help="folder for voita.json, contrapro.json (+ text and context files), manifest.jsonl and summary.json",
    )
    tags: Optional[str] = option(
        help="`muda tag` output for these files (its annotations beside it); default: tag "
        "the reference now (into OUTPUT_DIR/reference.tags.json) with --annotator"
    )
    annotator: str = option(
        choices=ANNOTATORS,
        default=AnnotatorArgs.annotator,
        help="without --tags: what annotates the reference (spacy: target morphology only, so "
        "pronouns and lexical cohesion need --src-conllu/--alignments)",
    )
    tgt_conllu: Optional[str] = option(help="the reference's CoNLL-U (default: beside the tags)")
    src_conllu: Optional[str] = option(help="the source's CoNLL-U with CorefUD coreference (pronoun distances)")
    alignments: Optional[str] = option(help="Pharaoh source-target word alignments (lexical cohesion)")
    cache_dir: Optional[str] = cache_dir_option()
    lexicon: Optional[List[str]] = option(
        nargs="+",
        metavar="CONLLU",
        help="more target CoNLL-U (e.g. the training split) where agreeing word forms are looked up",
    )
    phenomena: Optional[List[str]] = option(nargs="+", choices=PHENOMENA, help="default: all")
    context_size: int = option(
        default=BuildOptions.context_size,
        help="context sentences written with each group (default %(default)s, as Voita's sets)",
    )
    seed: int = option(default=BuildOptions.seed, help="places the reference among the candidates")
    counterfactual: bool = option(
        action="store_true",
        default=False,
        help="also OUTPUT_DIR/counterfactual: each group with a known cue edited (cue flipped, a control word "
        "changed, the cue moved back, a distractor added), for `contrastive`, `testset evaluate` and `testset cues`",
    )
    max_shift: Optional[int] = option(
        help="--counterfactual: the cue moved 1..N sentences further back (default: --context-size + 2)"
    )
    overwrite: bool = overwrite_option(
        "remove the files an earlier build left in OUTPUT_DIR that this one does not "
        "write (its tags, another language's), instead of refusing the folder"
    )


def build(args: argparse.Namespace) -> int:
    from contextual_mt.testsets.build import run_build, summary_lines

    def options(tags: str) -> BuildOptions:
        return BuildOptions(
            args.source,
            args.reference,
            args.docids,
            tags,
            args.output_dir,
            args.lang,
            tgt_conllu=args.tgt_conllu,
            src_conllu=args.src_conllu,
            alignments=args.alignments,
            lexicon=tuple(args.lexicon or ()),
            context_size=args.context_size,
            seed=args.seed,
            phenomena=tuple(args.phenomena or PHENOMENA),
            overwrite=args.overwrite,
            counterfactual=args.counterfactual,
            max_shift=args.max_shift,
        )

    tags = args.tags
    if tags is None:
        tags = os.path.join(args.output_dir, "reference.tags.json")
        options(tags)  # the language and options are checked before anything is annotated
        _tag_reference(args, tags)
    summary = run_build(options(tags))
    print("\n".join(summary_lines(summary)))
    if "counterfactual" in summary:
        from contextual_mt.testsets.counterfactual import summary_lines as counterfactual_lines

        print("\n".join(counterfactual_lines(summary["counterfactual"])))
    print(f"test suites: {args.output_dir} (voita.json, contrapro.json, manifest.jsonl, summary.json)")
    if "counterfactual" in summary:
        folder = os.path.join(args.output_dir, "counterfactual")
        print(f"counterfactual suite: {folder} (voita.json, manifest.jsonl, source.en, reference.{args.lang}, docids)")
    return 0


def _tag_reference(args: argparse.Namespace, tags: str) -> None:
    """``muda tag`` of the reference, in this process (muda's API), into the output folder."""
    import shutil

    from contextual_mt.errors import ContextualMTError
    from muda.commands import TagArgs, run

    options = TagArgs(
        src=args.source,
        tgt=args.reference,
        docids=args.docids,
        tgt_lang=args.lang,
        dump_tags=tags,
        src_conllu=args.src_conllu,
        tgt_conllu=args.tgt_conllu,
        alignments=args.alignments,
        annotators=AnnotatorArgs(annotator=args.annotator, cache_dir=args.cache_dir),
    )
    created = not os.path.exists(args.output_dir)
    try:
        os.makedirs(args.output_dir, exist_ok=True)
    except OSError as e:  # a file on the way (out/afile/sub)
        raise ContextualMTError(f"--output-dir {args.output_dir}: cannot be made ({e.strerror})") from None
    try:
        run(options)
    except BaseException:
        if created:
            shutil.rmtree(args.output_dir, ignore_errors=True)
        raise


@dataclass
class TestsetAlignArgs(AlignArgs):
    """The alignment options, with a --pivot that has no default: the command has no references."""

    pivot: Optional[str] = option(
        group=ALIGN_GROUP,
        help="a sentence-level translation of each line of the test set, whose chrF to the output's "
        "sentences scores the links: needed by a document-level --hyp (there are no references here; "
        "the reference the suites were built from will do)",
    )


@dataclass
class EvaluateArgs:
    manifest: str = option(required=True, help="manifest.jsonl written by `testset build`")
    hyp: List[str] = option(
        required=True,
        action="append",
        metavar="SYSTEM.txt",
        help="a system's translations of the test set, one line per line, or a document-level output "
        '(JSONL records {"doc", "text"}, or one document per line; with --docids and --pivot), evaluated '
        "through its alignment to the lines; repeat for several systems (the first is the baseline of the "
        "comparisons)",
    )
    summary: Optional[str] = option(
        help="summary.json of `testset build` (default: beside the manifest): the "
        "language and the test set's line count"
    )
    docids: Optional[str] = option(
        help="document ids of the test set: the documents resampled (default: the manifest's 'doc' of each "
        "group); needed by a document-level --hyp"
    )
    output: Optional[str] = option(help="write the full result as JSON here")
    bootstrap: int = option(
        default=EvaluateOptions.bootstrap,
        help="resamples of documents for the 95%% intervals and the paired comparisons (0: none)",
    )
    seed: int = option(default=EvaluateOptions.seed)
    align: TestsetAlignArgs = group(TestsetAlignArgs)


def evaluate(args: argparse.Namespace) -> int:
    from contextual_mt.testsets.evaluate import evaluate_testset, format_testset_table

    result = evaluate_testset(
        from_namespace(EvaluateOptions, args, hyps=tuple(args.hyp), align=from_namespace(AlignArgs, args))
    )
    print(format_testset_table(result))
    if args.output:
        print(f"result: {args.output}")
    return 0


IMPORT_FORMATS = ("ctxpro",)


@dataclass
class ImportArgs:
    """``contextual-mt testset import`` (``testsets.ctxpro.ImportOptions``)."""

    format: str = option(
        choices=IMPORT_FORMATS, required=True, help="the suite's format: ctxpro (Wicks and Post, 2023)"
    )
    evalset: str = option(
        required=True,
        metavar="JSON",
        help="ctxpro's evaluation set (e.g. release/evalsets/formality.opensubtitles.en-fr.dev.json)",
    )
    inputs: str = option(
        required=True,
        help="its inputs: one line per example, the context sentences and the sentence joined by <eos> "
        "(ctxpro's release/inputs/ file of the same name)",
    )
    output_dir: str = option(
        required=True,
        help="folder for source.SRC and docids (one document per example, for translate), examples.SRC/TGT, "
        "manifest.jsonl (testset evaluate), voita.json (contrastive) and summary.json",
    )
    lang: Optional[str] = option(help="target language (default: from the file name, e.g. en-fr: fr)")
    source_lang: Optional[str] = option(help="source language (default: from the file name, else en)")
    category: Optional[str] = option(help="ctxpro's category: gender, formality, ... (default: from the file name)")
    context_size: Optional[int] = option(
        help="context sentences kept before each example's sentence (default: all of ctxpro's, up to 10)"
    )


def import_suite(args: argparse.Namespace) -> int:
    from contextual_mt.testsets.ctxpro import ImportOptions, import_ctxpro, summary_lines

    options = from_namespace(ImportOptions, args)
    summary = import_ctxpro(options)
    print("\n".join(summary_lines(summary)))
    print(f"test suite: {args.output_dir} (manifest.jsonl, voita.json, source.{options.source}, docids, summary.json)")
    return 0


@dataclass
class CuesArgs:
    suite: str = option(required=True, help="OUTPUT_DIR/counterfactual of `testset build --counterfactual`")
    contrastive: Optional[List[str]] = option(
        action="append",
        metavar="SUMMARY.json",
        help="the --summary of a `contrastive --format voita` run on SUITE/voita.json (its scores beside it); "
        "repeat for several models",
    )
    evaluation: Optional[str] = option(
        metavar="RESULT.json",
        help="the --output of `testset evaluate --manifest SUITE/manifest.jsonl` (translations of SUITE/source.en "
        "with --gold-target-context SUITE/reference.xx): every system in it",
    )
    output: Optional[str] = option(help="write the measures as JSON here")
    plot: Optional[str] = option(metavar="PNG", help="accuracy by cue distance, per phenomenon and system")
    bootstrap: int = option(
        default=CueOptions.bootstrap, help="resamples of documents for the 95%% intervals (0: none)"
    )
    seed: int = option(default=CueOptions.seed)


def cues(args: argparse.Namespace) -> int:
    from contextual_mt.testsets.cues import format_cues_table, measure_cues

    result = measure_cues(from_namespace(CueOptions, args, contrastive=tuple(args.contrastive or ())))
    print(format_cues_table(result))
    for flag, path in (("measures", args.output), ("plot", args.plot)):
        if path:
            print(f"{flag}: {path}")
    return 0


def add(sub) -> None:
    p = sub.add_parser(
        "testset",
        help="test suites for any language pair from MuDA tags: contrastive groups and "
        "the generative evaluation of a system's translations",
    )
    testset = p.add_subparsers(dest="testset_command", required=True)
    # tagging and building are two transactions (the tags are kept when the build fails: a cache)
    command(
        testset,
        "build",
        BuildArgs,
        build,
        "contrastive groups from the MuDA tags of a parallel document corpus: "
        "the reference and its variants (the tagged word replaced by its alternatives, agreement kept), in "
        "Voita's and ContraPro's formats, with a manifest",
        transaction=False,
    )
    command(
        testset,
        "import",
        ImportArgs,
        import_suite,
        "a published suite as the project's: ctxpro's evaluation sets (OpenSubtitles; gender, formality, "
        "auxiliary, inflection, animacy) with their context, for translate, testset evaluate (scored as "
        "ctxpro score scores them) and contrastive",
        output_dir_args=("output_dir",),
    )
    command(
        testset,
        "evaluate",
        EvaluateArgs,
        evaluate,
        "for systems that cannot be scored (an API, an LLM, another "
        "toolkit): does the tagged word's correct form, or a wrong alternative, appear in the translation of "
        "its line; per phenomenon and context distance, with bootstrap intervals",
        output_args=("output",),
    )
    command(
        testset,
        "cues",
        CuesArgs,
        cues,
        "does the model follow the cue? the measures of a counterfactual suite (`testset build "
        "--counterfactual`) from `contrastive` scores or `testset evaluate` outcomes: cue-following, control "
        "stability, their difference, accuracy by cue distance (a plot) and under a distractor, with bootstrap "
        "intervals",
        output_args=("output", "plot"),
    )
