"""``make testset``: contrastive test suites of the pair's test split (``contextual-mt testset
build``) from the reference's MuDA tags, tagged once by the muda-eval stage's own step (cached
by its record; ``MUDA_TAG_ARGS`` applies), into ``results/xx/testset/``. Agreeing forms are
looked up in the test split's annotations and, when the data folder has it, the training
split's (``train.xx.conllu``). Its record (``results/xx/.stage/testset.json``) holds what the
suites were built from: a re-run with the same inputs rebuilds nothing."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Dict, Optional

from commandkit.errors import shown
from commandkit.options import option
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.decoding import DECODING_HELP
from contextual_mt.inference.model_args import progress_option
from contextual_mt.pipeline.layout import EvalPaths, eval_paths, reference_tags, testset_folder
from contextual_mt.pipeline.muda_eval import MudaEvalOptions, check_models, tag_reference
from contextual_mt.pipeline.pcxmi import record_path
from contextual_mt.pipeline.stage_options import MUDA_TAG_ARGS_HELP, demo_lang_option, dtype_option, root_option
from contextual_mt.stage_record import StageRecord, file_hashes, project_version, read_record


@dataclass
class TestsetStageOptions:
    """``contextual-mt pipeline testset``: the suites of the test split, or (``suite``) an imported
    suite through the pair's models (``suite_stage.py``), with the decoding of ``make translate``."""

    __test__ = False  # not a test class (pytest collects Test*)

    lang: Optional[str] = demo_lang_option()  # None: the demo pair
    root: str = root_option()
    muda_tag_args: Optional[str] = option(help=MUDA_TAG_ARGS_HELP)
    suite: Optional[str] = option(
        metavar="DIR",
        help="instead of the suites of the test split: a suite imported by `contextual-mt testset import`, "
        "translated by the sentence and context models, scored by `testset evaluate` (and `contrastive` on "
        "its variants) into results/xx/suites/NAME/ (make: SUITE)",
    )
    beam: Optional[int] = option(help="--suite: the beam size (default: make translate's)")
    decoding: Optional[str] = option(help="--suite: " + DECODING_HELP + " (make: DECODING)")
    dtype: str = dtype_option()
    progress: bool = progress_option()

    def __post_init__(self) -> None:
        if self.suite is not None:
            if self.muda_tag_args:
                raise InputError(
                    "--muda-tag-args: not used with --suite (an imported suite is not tagged)",
                    code=Code.OPTIONS_CONFLICT,
                )
            return
        for flag, value in (("--beam", self.beam), ("--decoding", self.decoding)):
            if value is not None:
                raise InputError(
                    f"{shown(flag)}: used with {shown('--suite')} only (the translations of an imported suite)",
                    code=Code.OPTIONS_CONFLICT,
                )

    def suite_options(self):
        """The imported suite's options (``suite``; checked when made: one line naming the option)."""
        from contextual_mt.pipeline.suite_stage import SuiteStageOptions
        from contextual_mt.pipeline.translate_stage import study_decoding

        how: dict = {"beam": self.beam} if self.beam is not None else {}
        if self.decoding is not None:
            how["decoding"] = self.decoding
        return SuiteStageOptions(
            self.lang,
            str(self.suite),
            self.root,
            decoding=replace(study_decoding(), **how),
            dtype=self.dtype,
            progress=self.progress,
        )


def run_testset_stage(options: TestsetStageOptions) -> Dict:
    from contextual_mt.testsets.build import output_names, run_build, summary_lines

    p = eval_paths(options.lang, options.root)
    for side in ("en", p.target, "docids"):
        if not os.path.isfile(p.test(side)):
            raise InputError(f"{p.test(side)} not found (docs/tutorials/study.md, 'make data')", code=Code.NOT_FOUND)
    o = MudaEvalOptions(options.lang, options.root, hyps=(p.test(p.target),), muda_tag_args=options.muda_tag_args or "")
    folder = testset_folder(p.results)
    suite_options(p, folder)  # a language without alternatives fails before any model is loaded
    check_models(o, evaluate=False, target="testset")
    tag_reference(o)  # cached by its own record
    built = suite_options(p, folder)
    record = StageRecord(record_path(p, "testset"), "testset")
    summary_file = os.path.join(built.output_dir, "summary.json")
    summary = read_record(summary_file) if record.current(build_fingerprint(built)) else None
    if summary:
        print(f"test suites: up to date ({record.path})")
    else:
        summary = run_build(built)
        record.save(
            build_fingerprint(built), [os.path.join(built.output_dir, n) for n in output_names(built.language.code)]
        )
    print("\n".join(summary_lines(summary)))
    print(f"test suites: {built.output_dir} (voita.json, contrapro.json, manifest.jsonl)")
    return summary


def suite_options(p: EvalPaths, folder: str, counterfactual: bool = False):
    """``testset build``'s options for the pair's test split from the reference's tags (the
    annotations beside them are found when it is built: call it again after tagging)."""
    from contextual_mt.testsets.build import BuildOptions

    return BuildOptions(
        p.test("en"),
        p.test(p.target),
        p.test("docids"),
        reference_tags(p),
        folder,
        p.muda_lang,
        lexicon=tuple(x for x in (p.optional(f"train.{p.target}.conllu"),) if x),
        counterfactual=counterfactual,
    )


def build_fingerprint(options) -> Dict:
    """What the suites are made from, by content, and the build's settings."""
    return {
        **file_hashes(
            {
                "source": options.source,
                "reference": options.reference,
                "docids": options.docids,
                "tags": options.tags,
                "tgt_conllu": options.tgt_conllu,
                "src_conllu": options.src_conllu,
                "alignments": options.alignments,
                **{f"lexicon{i}": x for i, x in enumerate(options.lexicon)},
            }
        ),
        "language": options.language.code,
        "context_size": options.context_size,
        "seed": options.seed,
        "phenomena": list(options.phenomena),
        **({"counterfactual": options.max_shift} if options.counterfactual else {}),  # the suite of `make cues`
        "version": project_version(),
    }
