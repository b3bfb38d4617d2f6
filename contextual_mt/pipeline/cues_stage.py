"""``make cues``: does the model follow the cue? The three steps of docs/explanations/testsets.md
("Counterfactual context") on the pair's test split, in ``results/xx/cues/``:

1. ``contextual-mt testset build --counterfactual`` from the reference's MuDA tags (tagged once by
   the muda-eval stage's own step, cached by its record; ``MUDA_TAG_ARGS`` applies): the suites and
   ``counterfactual/`` (each group whose cue is known, edited);
2. ``contextual-mt contrastive`` of ``counterfactual/voita.json`` with the sentence and the context
   model (``SYSTEM.scores``, ``SYSTEM.summary.json``; each kept while made from the same inputs);
3. ``contextual-mt testset cues`` of those scores: ``cues.json``, ``cues.png``.

Each step keeps what it made while its inputs are the same (the build's and the measures' stage
records, ``results/xx/.stage/cues-build.json`` and ``cues.json``; the scores' own fingerprints),
so a re-run does nothing, and a new model or test set redoes what depends on it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, Optional

from commandkit.options import option
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.model_args import progress_option
from contextual_mt.pipeline.layout import MODELS, eval_paths, pair_layout
from contextual_mt.pipeline.muda_eval import MudaEvalOptions, check_models, tag_reference
from contextual_mt.pipeline.pcxmi import record_path
from contextual_mt.pipeline.stage_options import MUDA_TAG_ARGS_HELP, demo_lang_option, dtype_option, root_option
from contextual_mt.stage_record import StageRecord, file_hashes, project_version, read_record

CUES = "cues"  # the folder under results/xx, and the stage


def cues_folder(results: str) -> str:
    return os.path.join(results, CUES)


@dataclass
class CuesStageOptions:
    lang: Optional[str] = demo_lang_option()  # None: the demo pair
    root: str = root_option()
    muda_tag_args: str = option(help=MUDA_TAG_ARGS_HELP)  # None: ""
    dtype: str = dtype_option()  # of the models (inference.precision); the scores' fingerprints name it
    progress: bool = progress_option()

    def __post_init__(self) -> None:
        from contextual_mt.inference.precision import check_dtype

        self.muda_tag_args = self.muda_tag_args or ""
        check_dtype(self.dtype)
        self.paths = eval_paths(self.lang, self.root)
        self.layout = pair_layout(self.lang, self.root)


def run_cues_stage(cues: CuesStageOptions) -> Dict:
    """Build, score and measure (each step only when its inputs changed); returns the measures."""
    from contextual_mt.pipeline.systems import finished_checkpoint
    from contextual_mt.pipeline.testset_stage import build_fingerprint, suite_options
    from contextual_mt.testsets.build import output_names, run_build
    from contextual_mt.testsets.counterfactual import FOLDER, summary_lines

    p = cues.paths
    for side in ("en", p.target, "docids"):
        if not os.path.isfile(p.test(side)):
            raise InputError(f"{p.test(side)} not found (docs/tutorials/study.md, 'make data')", code=Code.NOT_FOUND)
    folder = cues_folder(p.results)
    suite_options(p, folder, counterfactual=True)  # a language without alternatives fails before any model loads
    # the models before the tagger: a missing checkpoint says which stage makes it
    checkpoints = {m: finished_checkpoint(cues.layout, m)[0] for m in MODELS}
    tagging = MudaEvalOptions(cues.lang, cues.root, hyps=(p.test(p.target),), muda_tag_args=cues.muda_tag_args)
    check_models(tagging, evaluate=False)
    tag_reference(tagging)  # cached by its own record
    built = suite_options(p, folder, counterfactual=True)
    record = StageRecord(record_path(p, "cues-build"), "cues-build")
    fp = build_fingerprint(built)
    summary = read_record(os.path.join(folder, "summary.json")) if record.current(fp) else None
    if summary:
        print(f"counterfactual suite: up to date ({record.path})")
    else:
        summary = run_build(built)
        record.save(fp, [os.path.join(folder, n) for n in output_names(built.language.code, True)])
    print("\n".join(summary_lines(summary["counterfactual"])))
    suite = os.path.join(folder, FOLDER)
    scored = [_score(cues, suite, model, checkpoints[model]) for model in ("context", "sentence")]
    return _measure(p, suite, scored)


def _score(cues: CuesStageOptions, suite: str, model: str, checkpoint: str) -> str:
    """``contrastive`` of the counterfactual suite with one model (kept while up to date); its summary."""
    from contextual_mt.backends.fairseq.model import FairseqModelOptions
    from contextual_mt.contrastive.evaluate import ContrastiveOptions, run_contrastive

    stem = os.path.join(os.path.dirname(suite), model)
    summary = run_contrastive(
        ContrastiveOptions(
            FairseqModelOptions(checkpoint, spm=cues.paths.spm, data=cues.layout.bin, dtype=cues.dtype),
            "voita",
            os.path.join(suite, "voita.json"),
            stem + ".scores",
            stem + ".summary.json",
            # the suite's sentences are the pair's own test text, as the model's sentencepiece saw it
            detokenize="no",
            progress=cues.progress,
            skip_up_to_date=True,
        )
    )
    print(f"{model}: accuracy {summary['accuracy']:.3f} on {summary['groups']} groups of {suite}/voita.json")
    return stem + ".summary.json"


def _measure(p, suite: str, scored) -> Dict:
    """``testset cues`` of the scores: cues.json and cues.png, remade when the suite or the scores changed."""
    from contextual_mt.testsets.cues import CueOptions, format_cues_table, measure_cues

    folder = os.path.dirname(suite)
    output, plot = os.path.join(folder, "cues.json"), os.path.join(folder, "cues.png")
    options = CueOptions(suite, contrastive=tuple(scored), output=output, plot=plot)
    inputs = {name: os.path.join(suite, name) for name in sorted(os.listdir(suite))}
    inputs.update({os.path.basename(s): s for s in scored})
    for summary in scored:  # the scores beside each summary: what the decisions are read from
        scores = summary[: -len(".summary.json")] + ".scores"
        inputs[os.path.basename(scores)] = scores
    fp = {**file_hashes(inputs), "bootstrap": options.bootstrap, "seed": options.seed, "version": project_version()}
    record = StageRecord(record_path(p, CUES), CUES)
    current = record.current(fp)
    result = read_record(output) if current else None
    if result is None:
        result = measure_cues(options)
        record.save(fp, [output, plot])
    else:
        print(f"cues: up to date ({record.path})")
    print(format_cues_table(result))
    print(f"measures: {output}\nplot: {plot}")
    return result
