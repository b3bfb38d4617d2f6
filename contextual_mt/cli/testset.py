"""``contextual-mt testset build|import|evaluate|cues``: test suites from MuDA tags, or imported.
Their options are the library's (``BuildOptions``, ``ImportOptions``, ``EvaluateOptions``,
``CueOptions``), their runs ``contextual_mt.api.testset_*``; the commands print what those return."""

from __future__ import annotations

import os

from contextual_mt.cli.common import typed_command
from contextual_mt.testsets.build import BuildOptions
from contextual_mt.testsets.ctxpro import ImportOptions
from contextual_mt.testsets.cues import CueOptions
from contextual_mt.testsets.evaluate import EvaluateOptions


def build(options: BuildOptions) -> int:
    from contextual_mt import api
    from contextual_mt.testsets.build import summary_lines

    if not options.tags_ready:  # tagged first by muda's command, which prints its line
        from contextual_mt.testsets.build import tag_reference
        from muda.commands import run as muda_tag

        tag_reference(options, muda_tag)
    summary = api.testset_build(options).summary
    print("\n".join(summary_lines(summary)))
    if "counterfactual" in summary:
        from contextual_mt.testsets.counterfactual import summary_lines as counterfactual_lines

        print("\n".join(counterfactual_lines(summary["counterfactual"])))
    print(f"test suites: {options.output_dir} (voita.json, contrapro.json, manifest.jsonl, summary.json)")
    if "counterfactual" in summary:
        folder = os.path.join(options.output_dir, "counterfactual")
        print(
            f"counterfactual suite: {folder} (voita.json, manifest.jsonl, source.en, reference.{options.lang}, docids)"
        )
    return 0


def evaluate(options: EvaluateOptions) -> int:
    from contextual_mt import api

    print(api.testset_evaluate(options).table)
    if options.output:
        print(f"result: {options.output}")
    return 0


def import_suite(options: ImportOptions) -> int:
    from contextual_mt import api
    from contextual_mt.testsets.ctxpro import summary_lines

    suite = api.testset_import(options)
    print("\n".join(summary_lines(suite.summary)))
    print(
        f"test suite: {options.output_dir} (manifest.jsonl, voita.json, source.{options.source}, docids, summary.json)"
    )
    return 0


def cues(options: CueOptions) -> int:
    from contextual_mt import api

    print(api.testset_cues(options).table)
    for flag, path in (("measures", options.output), ("plot", options.plot)):
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
    typed_command(
        testset,
        "build",
        BuildOptions,
        build,
        "contrastive groups from the MuDA tags of a parallel document corpus: "
        "the reference and its variants (the tagged word replaced by its alternatives, agreement kept), in "
        "Voita's and ContraPro's formats, with a manifest",
        transaction=False,
    )
    typed_command(
        testset,
        "import",
        ImportOptions,
        import_suite,
        "a published suite as the project's: ctxpro's evaluation sets (OpenSubtitles; gender, formality, "
        "auxiliary, inflection, animacy) with their context, for translate, testset evaluate (scored as "
        "ctxpro score scores them) and contrastive",
        output_dir_args=("output_dir",),
    )
    typed_command(
        testset,
        "evaluate",
        EvaluateOptions,
        evaluate,
        "for systems that cannot be scored (an API, an LLM, another "
        "toolkit): does the tagged word's correct form, or a wrong alternative, appear in the translation of "
        "its line; per phenomenon and context distance, with bootstrap intervals",
        output_args=("output",),
    )
    typed_command(
        testset,
        "cues",
        CueOptions,
        cues,
        "does the model follow the cue? the measures of a counterfactual suite (`testset build "
        "--counterfactual`) from `contrastive` scores or `testset evaluate` outcomes: cue-following, control "
        "stability, their difference, accuracy by cue distance (a plot) and under a distractor, with bootstrap "
        "intervals",
        output_args=("output", "plot"),
    )
