"""``make testset``: contrastive test suites of the pair's test split (``contextual-mt testset
build``) from the reference's MuDA tags, tagged once by the muda-eval stage's own step (cached
by its record; ``MUDA_TAG_ARGS`` applies), into ``results/xx/testset/``. Agreeing forms are
looked up in the test split's annotations and, when the data folder has it, the training
split's (``train.xx.conllu``). The suites take seconds: they are rebuilt on every run."""
from __future__ import annotations

import os
from typing import Dict

from contextual_mt.errors import ContextualMTError
from contextual_mt.pipeline.layout import eval_paths, reference_tags, testset_folder
from contextual_mt.pipeline.muda_eval import MudaEvalOptions, check_models, tag_reference


def run_testset_stage(lang: str, root: str = ".", muda_tag_args: str = "") -> Dict:
    from contextual_mt.testsets.build import BuildOptions, run_build, summary_lines

    p = eval_paths(lang, root)
    for side in ("en", p.target, "docids"):
        if not os.path.isfile(p.test(side)):
            raise ContextualMTError(f"{p.test(side)} not found (README, 'make data')")
    o = MudaEvalOptions(lang, root, hyps=(p.test(p.target),), muda_tag_args=muda_tag_args)

    def options() -> BuildOptions:  # the annotations beside the tags are found when it is built
        return BuildOptions(p.test("en"), p.test(p.target), p.test("docids"), reference_tags(p),
                            testset_folder(p.results), p.muda_lang,
                            lexicon=tuple(x for x in (p.optional(f"train.{p.target}.conllu"),) if x))
    options()  # a language without alternatives fails before any model is loaded
    check_models(o, evaluate=False)
    tag_reference(o)
    built = options()
    summary = run_build(built)
    print("\n".join(summary_lines(summary)))
    print(f"test suites: {built.output_dir} (voita.json, contrapro.json, manifest.jsonl)")
    return summary
