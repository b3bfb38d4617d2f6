"""``make testset``: contrastive test suites of the pair's test split (``contextual-mt testset
build``) from the reference's MuDA tags, tagged once by the muda-eval stage's own step (cached
by its record; ``MUDA_TAG_ARGS`` applies), into ``results/xx/testset/``. Agreeing forms are
looked up in the test split's annotations and, when the data folder has it, the training
split's (``train.xx.conllu``). Its record (``results/xx/.stage/testset.json``) holds what the
suites were built from: a re-run with the same inputs rebuilds nothing."""

from __future__ import annotations

import os
from typing import Dict

from contextual_mt.errors import ContextualMTError
from contextual_mt.pipeline.layout import EvalPaths, eval_paths, reference_tags, testset_folder
from contextual_mt.pipeline.muda_eval import MudaEvalOptions, check_models, tag_reference
from contextual_mt.pipeline.pcxmi import record_path
from contextual_mt.stage_record import StageRecord, file_hashes, project_version, read_record


def run_testset_stage(lang: str, root: str = ".", muda_tag_args: str = "") -> Dict:
    from contextual_mt.testsets.build import output_names, run_build, summary_lines

    p = eval_paths(lang, root)
    for side in ("en", p.target, "docids"):
        if not os.path.isfile(p.test(side)):
            raise ContextualMTError(f"{p.test(side)} not found (docs/tutorials/study.md, 'make data')")
    o = MudaEvalOptions(lang, root, hyps=(p.test(p.target),), muda_tag_args=muda_tag_args)
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


def build_fingerprint(o) -> Dict:
    """What the suites are made from, by content, and the build's settings."""
    return {
        **file_hashes(
            {
                "source": o.source,
                "reference": o.reference,
                "docids": o.docids,
                "tags": o.tags,
                "tgt_conllu": o.tgt_conllu,
                "src_conllu": o.src_conllu,
                "alignments": o.alignments,
                **{f"lexicon{i}": x for i, x in enumerate(o.lexicon)},
            }
        ),
        "language": o.language.code,
        "context_size": o.context_size,
        "seed": o.seed,
        "phenomena": list(o.phenomena),
        **({"counterfactual": o.max_shift} if o.counterfactual else {}),  # the suite of `make cues`
        "version": project_version(),
    }
