"""The run of each ``contextual-mt pipeline`` subcommand, named as the stage table's ``Command``
(``muda-eval``: ``muda_eval``): a function of the stage's typed options object, which calls its
stage (pipeline/) and prints what it made; and the commands about the study as a whole (plan,
migrate), small typed commands too."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from commandkit.options import option
from contextual_mt.cli.common import typed_command
from contextual_mt.pipeline.presets import PRESETS
from contextual_mt.pipeline.stage_options import root_option
from contextual_mt.pipeline.stages import SHARDS, format_plan, jobs

if TYPE_CHECKING:
    from contextual_mt.pipeline.attribute_stage import AttributeStageOptions
    from contextual_mt.pipeline.contrastive_stage import ContrastiveStageOptions
    from contextual_mt.pipeline.cues_stage import CuesStageOptions
    from contextual_mt.pipeline.data_plan import DataOptions
    from contextual_mt.pipeline.muda_eval import MudaEvalOptions
    from contextual_mt.pipeline.pcxmi import PcxmiStageOptions, ReportStageOptions
    from contextual_mt.pipeline.results_table.options import TableOptions
    from contextual_mt.pipeline.score_stage import ScoreStageOptions
    from contextual_mt.pipeline.testset_stage import TestsetStageOptions
    from contextual_mt.pipeline.train import TrainOptions
    from contextual_mt.pipeline.translate_stage import TranslateStageOptions


def data(data: DataOptions) -> int:
    from contextual_mt.pipeline.prepare import SPLITS, prepare_data_steps

    summary, ran = prepare_data_steps(data, progress=data.progress)
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
        print(f"wrote {data.output}: {what}")
    else:
        print(f"{data.output}: up to date (made from these inputs and options): {what}")
    print(f"lexical table for `contextual-mt align --pivot none`: {lexical_table_of(data.output, data.lang)}")
    return 0


def lexical_table_of(folder: str, lang: str) -> str:
    """The train split's IBM Model 1 table (``docalign.lexical``), learned now unless its cache beside
    the split was learned from these files (then read): `align --pivot none --lexical-train` finds it."""
    import os

    from docalign.lexical.model1 import lexical_table, table_path

    source, target = os.path.join(folder, "train.en"), os.path.join(folder, f"train.{lang}")
    lexical_table(source, target)
    return table_path(source, target)


def train(train: TrainOptions) -> int:
    from contextual_mt.pipeline.train import per_model, train_model

    for model in per_model(train):  # every model's options checked before anything trains
        record = train_model(model)
        print(f"{model.model} model: {model.layout.checkpoint(model.model)} ({figures(record)})")
    return 0


def figures(record: dict) -> str:
    """What the record says of the checkpoints (read from them): ``10 epochs, 230 updates, valid
    loss 4.213 (best 4.180)``, or ``stopped in epoch 1 after 0 full epochs, 190 updates, ...`` when an
    update limit ended training part-way through an epoch (after the validation of that epoch,
    which fairseq runs when it stops); a figure an earlier version's record lacks is left out."""
    parts = [
        f"{record[k]} {unit}"
        for k, unit in (("epochs", "epochs"), ("num_updates", "updates"))
        if record.get(k) is not None
    ]
    within = record.get("stopped_in_epoch")
    if within is not None and record.get("epochs") is not None:
        parts[0] = f"stopped in epoch {within} after {record['epochs']} full epochs"
    loss, best = record.get("valid_loss"), record.get("best_valid_loss")
    if loss is not None:
        parts.append(f"valid loss {loss:.3f}" + (f" (best {best:.3f})" if best is not None and best != loss else ""))
    return ", ".join(parts) or "trained by an earlier version: no figures recorded"


def translate(translate: TranslateStageOptions) -> int:
    from contextual_mt.pipeline.translate_stage import translate_systems

    for system, path in translate_systems(translate).items():
        print(f"{system}: {path}")
    return 0


def score(score: ScoreStageOptions) -> int:
    from contextual_mt.pipeline.score_stage import format_scores, score_systems

    print(format_scores(score_systems(score)))
    return 0


def pcxmi(pcxmi: PcxmiStageOptions) -> int:
    from contextual_mt.pipeline.pcxmi import run_pcxmi_stage

    run_pcxmi_stage(pcxmi)
    return 0


def report(report: ReportStageOptions) -> int:
    from contextual_mt.pipeline.pcxmi import run_report_stage

    run_report_stage(report)
    return 0


def attribute(attribute: AttributeStageOptions) -> int:
    from contextual_mt.pipeline.attribute_stage import run_attribute_stage

    run_attribute_stage(attribute)
    return 0


def cues(cues: CuesStageOptions) -> int:
    from contextual_mt.pipeline.cues_stage import run_cues_stage

    run_cues_stage(cues)
    return 0


def testset(testset: TestsetStageOptions) -> int:
    from contextual_mt.pipeline.testset_stage import run_testset_stage

    if testset.suite is None:
        run_testset_stage(testset)
        return 0
    from contextual_mt.pipeline.suite_stage import run_suite_stage

    suite = testset.suite_options()
    summary = run_suite_stage(suite)
    print(f"{summary['suite']}: {suite.folder} (summary.json, evaluation.txt)")
    return 0


def muda_eval(muda_eval: MudaEvalOptions) -> int:
    from contextual_mt.pipeline.muda_eval import run_muda_eval

    run_muda_eval(muda_eval)
    return 0


def contrastive(contrastive: ContrastiveStageOptions) -> int:
    from contextual_mt.pipeline.contrastive_stage import markdown, run_stage

    print(markdown(run_stage(contrastive), contrastive.systems))
    return 0


def table(table: TableOptions) -> int:
    from contextual_mt.pipeline.study_table import build_table, format_markdown

    result = build_table(table)
    print(format_markdown(result))
    print("wrote " + ", ".join(result["files"].values()))
    return 0


@dataclass
class PlanOptions:
    """``contextual-mt pipeline plan``: ``stages.jobs``' arguments, and how to print them."""

    lang: str = option(required=True)
    root: str = root_option()
    shards: int = option(default=SHARDS, help=f"tasks of the P-CXMI job array (default: {SHARDS})")
    json: bool = option(action="store_true", default=False, help="one JSON object per job (default: one line of words)")
    # the plan does not depend on the preset; submit.sh passes PRESET here so that the presets
    # module, not the script, says which names exist
    preset: Optional[str] = option(
        choices=sorted(PRESETS),
        help="check that the train jobs' preset exists (submit.sh's PRESET); the plan is the same for every preset",
    )


def plan(plan: PlanOptions) -> int:
    print(format_plan(jobs(plan.lang, plan.root, plan.shards, every=True), plan.json))
    return 0


@dataclass
class MigrateOptions:
    folder: str = option(
        positional=True, help="the study folder (WORK: data/, checkpoints/, results/) or any folder in it"
    )


def migrate(migrate: MigrateOptions) -> int:
    from contextual_mt.pipeline.migrate import migrate as rewrite

    done, bad = rewrite(migrate.folder)
    for path in done:
        print(f"rewrote {path}")
    for line in bad:
        print(f"error: {line}", file=sys.stderr)
    print(f"{len(done)} record(s) of earlier versions rewritten in {migrate.folder}", file=sys.stderr)
    return 1 if bad else 0


def add_study_commands(commands: Any) -> None:
    """``pipeline plan`` and ``pipeline migrate``: about the study, not one stage."""
    typed_command(
        commands,
        "plan",
        PlanOptions,
        plan,
        "print the job graph of a language pair (what recipes/slurm/submit.sh submits)",
        transaction=False,
    )
    typed_command(
        commands,
        "migrate",
        MigrateOptions,
        migrate,
        "rewrite the records an earlier version left in a study folder into this version's (once)",
        transaction=False,
    )
