"""The study's stages, declared once: what each is called, which stages it needs, what it reads
and writes, and whether it wants a GPU (as stanza's processors declare what they require and
provide): the job chain (``STAGES``, in the order ``make all`` runs it) and the stages run by hand
(``BY_HAND``). ``contextual-mt pipeline STAGE`` runs one; ``make STAGE`` is one line calling it;
``contextual-mt pipeline plan`` prints every stage with its needs and state: the job graph that
``recipes/slurm/submit.sh`` submits (the chain), then the stages run by hand; ``make all`` runs
the targets ``make_all()`` lists.

Paths are templates over one pair's folders: ``{data}`` (WORK/data/xx), ``{ckpt}``
(WORK/checkpoints/xx), ``{results}`` (WORK/results/xx), ``{lang}`` (xx), ``{model}`` (a model of
a per-model stage), ``{shard}`` / ``{shards}`` (a task of a sharded stage).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Tuple

from contextual_mt.errors import ContextualMTError, check_option
from contextual_mt.pipeline.layout import MODELS, SYSTEMS, PairLayout
from contextual_mt.stage_record import StageRecord, record_finished


@dataclass(frozen=True)
class Stage:
    name: str  # the job's name (and, but for muda, the `contextual-mt pipeline` command)
    needs: Tuple[str, ...]  # the jobs whose outputs it reads
    inputs: Tuple[str, ...]
    records: Tuple[str, ...]  # the done-records it writes when it finishes (the job chain's "finished")
    device: str  # "gpus": the GPUs of a training job (GPUS), "gpu": one (STAGE_GPUS), "cpu": none
    make: str  # the make target a job runs
    script: str  # its Slurm script (recipes/slurm/); "" for a stage run by hand (no job of the chain)
    group: str  # what submit.sh's STAGES= selects it by ("" for a stage run by hand)
    make_vars: Tuple[str, ...] = ()  # the submit.sh variables its job's make gets (when set)
    per_model: bool = False  # one job per model (train-sentence, train-context)
    sharded: bool = False  # a job array, one task per shard
    # outputs a finished stage must still have (non-empty) beside its records, for the records that
    # do not list their outputs' hashes (the summaries)
    outputs: Tuple[str, ...] = ()
    # the make target that runs the whole stage on one machine, a step of `make all` ("": none, the
    # stage is a part of another's target, as the P-CXMI shards are of `make pcxmi`)
    target: str = ""
    about: str = ""  # what it makes (a stage run by hand)

    @property
    def chain(self) -> bool:
        """A job of the chain (`make all`, the Slurm jobs); else run by hand."""
        return bool(self.script)


_TEST = ("{data}/test.en", "{data}/test.{lang}", "{data}/test.docids")
_TRANSLATIONS = tuple(f"{{results}}/{s}.test.{{lang}}" for s in SYSTEMS)
_CHECKPOINTS = tuple(f"{{ckpt}}/{m}/checkpoint_best.pt" for m in MODELS)
# the job chain, in the order `make all` runs it
STAGES: Tuple[Stage, ...] = (
    Stage(
        "data",
        (),
        ("TED|IWSLT|TEXT",),
        ("{data}/.stage/data.json",),
        "cpu",
        "data",
        "data.sbatch",
        "data",
        make_vars=("TED", "IWSLT", "TEXT", "SPM_VOCAB"),
        outputs=("{data}/bin/dict.{lang}.txt", "{data}/summary.json"),
        target="data",
    ),
    Stage(
        "train",
        ("data",),
        ("{data}/bin",),
        ("{ckpt}/{model}/.stage/train.json",),
        "gpus",
        "train",
        "train.sbatch",
        "train",
        make_vars=("PRESET", "MODEL", "GPUS"),
        per_model=True,
        outputs=("{ckpt}/{model}/checkpoint_best.pt",),
        target="train",
    ),
    Stage(
        "translate",
        ("train-sentence", "train-context"),
        (*_CHECKPOINTS, *_TEST),
        ("{results}/.stage/translate.json",),
        "gpu",
        "translate",
        "translate.sbatch",
        "translate",
        outputs=_TRANSLATIONS,
        target="translate",
    ),
    Stage(
        "score",
        ("translate",),
        (*_TRANSLATIONS, *_TEST),
        ("{results}/.stage/score.json",),
        "gpu",
        "score",
        "score.sbatch",
        "score",
        target="score",
    ),
    Stage(
        "pcxmi",
        ("train-context",),
        ("{ckpt}/context/checkpoint_best.pt", *_TEST),
        ("{results}/pcxmi.shard-{shard}-of-{shards}.summary.json",),
        "gpu",
        "pcxmi-shard",
        "pcxmi.sbatch",
        "pcxmi",
        make_vars=("SHARDS",),
        sharded=True,
    ),
    Stage(
        "pcxmi-merge",
        ("pcxmi",),
        ("{results}/pcxmi.shard-{shard}-of-{shards}.jsonl",),
        ("{results}/pcxmi.summary.json", "{results}/.stage/report.json"),
        "cpu",
        "pcxmi-merge",
        "pcxmi-merge.sbatch",
        "pcxmi",
        make_vars=("SHARDS",),
        target="pcxmi",
    ),
    Stage(
        "muda",
        ("translate",),
        (*_TRANSLATIONS, *_TEST),
        ("{results}/.stage/muda-eval.json",),
        "gpu",
        "muda-eval",
        "muda.sbatch",
        "muda",
        target="muda-eval",
    ),
    Stage(
        "cues",
        ("train-sentence", "train-context"),
        (*_CHECKPOINTS, *_TEST),
        ("{results}/.stage/cues.json",),
        "gpu",
        "cues",
        "cues.sbatch",
        "cues",
        outputs=("{results}/cues/cues.json",),
        target="cues",
    ),
)
# the stages run by hand (make STAGE), or by `make table` over several pairs
BY_HAND: Tuple[Stage, ...] = (
    Stage(
        "report",
        ("pcxmi-merge",),
        # the attribution when `make attribute` made it (of the same model): its cues in the viewer
        ("{results}/pcxmi.jsonl", "{results}/attribution.jsonl"),
        ("{results}/.stage/report.json",),
        "cpu",
        "report",
        "",
        "",
        about="the P-CXMI report (part of pcxmi and pcxmi-merge)",
    ),
    Stage(
        "testset",
        ("data",),
        _TEST,
        ("{results}/.stage/testset.json",),
        "cpu",
        "testset",
        "",
        "",
        about="contrastive test suites of the test split from MuDA tags",
    ),
    Stage(
        "attribute",
        ("train-context",),
        ("{ckpt}/context/checkpoint_best.pt", *_TEST),
        ("{results}/attribution.summary.json",),
        "gpu",
        "attribute",
        "",
        "",
        outputs=("{results}/attribution.jsonl",),
        about="context attribution of the test references (CTI + CCI)",
    ),
    Stage(
        "contrastive",
        ("train-sentence", "train-context"),
        ("SETS",),
        ("{results}/contrastive/summary.json",),
        "gpu",
        "contrastive",
        "",
        "",
        about="accuracy on contrastive test sets (SETS=...)",
    ),
    Stage(
        "table",
        ("score", "muda"),
        ("{results}/scores.json", "{results}/muda/eval.json"),
        ("{results}/../table/.stage/table.json",),
        "cpu",
        "table",
        "",
        "",
        about="the table over LANGS",
    ),
)
EVERY: Tuple[Stage, ...] = STAGES + BY_HAND


def make_all() -> List[str]:
    """The make targets of `make all`, in the chain's order."""
    out: List[str] = []
    for s in EVERY:
        if s.chain and s.target and s.target not in out:
            out.append(s.target)
    return out


def _fields(layout: PairLayout, model: str = "", shard: int = 0, shards: int = 0) -> Dict[str, object]:
    return {**_paths(layout), "model": model, "shard": shard, "shards": shards}


def record(name: str, layout: PairLayout, model: str = "", shard: int = 0, shards: int = 0) -> StageRecord:
    """The done-record of stage ``name`` of the pair (its first declared record)."""
    s = stage(name)
    fields = _fields(layout, model, shard, shards)
    return StageRecord(s.records[0].format(**fields), s.name)


def stage(name: str) -> Stage:
    for s in EVERY:
        if s.name == name:
            return s
    raise ContextualMTError(f"unknown stage {name!r}: expected one of {', '.join(s.name for s in EVERY)}")


@dataclass
class Job:
    """One job of the chain: a stage, for one model or all the shards; ``todo``: the shards (1-based)
    not finished yet (a sharded stage), ``finished``: every done-record of the stage says so
    (``StageRecord.finished``)."""

    name: str
    stage: str
    needs: List[str]
    make: str
    script: str
    group: str
    device: str
    make_vars: List[str]
    model: Optional[str]
    shards: Optional[int]
    finished: bool
    todo: List[int]
    records: List[str] = field(default_factory=list)  # its done-records (delete them to redo the stage)


def _paths(layout: PairLayout) -> Dict[str, str]:
    return {
        "data": layout.data,
        "ckpt": os.path.dirname(layout.checkpoints("context")),
        "results": layout.results,
        "lang": layout.lang,
    }


MAX_SHARDS = 10_000


def jobs(lang: str, root: str = ".", shards: int = 4, every: bool = False) -> List[Job]:
    """The job graph of one pair: per-model stages split by model, each with its state; ``every``:
    the stages run by hand too, after the chain (no script: not jobs of the chain)."""
    # a shard is a part of the test documents: more than MAX_SHARDS is a typo, not a plan
    check_option("--shards", shards, minimum=1, maximum=MAX_SHARDS, integer=True)
    if os.path.exists(root) and not os.path.isdir(root):
        raise ContextualMTError(f"--root {root}: is a file, not the folder holding data/, checkpoints/ and results/")
    paths = _paths(PairLayout(lang, root))
    out = []
    for s in EVERY if every else STAGES:
        needs = [
            n for need in s.needs for n in ([f"{need}-{m}" for m in MODELS] if stage_is_per_model(need) else [need])
        ]
        for model in MODELS if s.per_model else (None,):
            # the helpers are called within this iteration; the defaults bind its stage and model

            def fill(templates: Tuple[str, ...], shard: int = 0, model: Optional[str] = model) -> List[str]:
                fields = {**paths, "model": model or "", "shards": shards, "shard": shard}
                return [t.format(**fields) for t in templates]

            def records(shard: int = 0, s: Stage = s) -> List[str]:
                return fill(s.records, shard)

            def done(shard: int = 0, s: Stage = s) -> bool:
                return all(record_finished(r, s.name) for r in records(shard)) and all(
                    os.path.isfile(p) and os.path.getsize(p) > 0 for p in fill(s.outputs, shard)
                )

            todo = [i for i in range(1, shards + 1) if not done(i)] if s.sharded else []
            name = f"{s.name}-{model}" if model else s.name
            out.append(
                Job(
                    name,
                    s.name,
                    needs,
                    s.make,
                    s.script,
                    s.group,
                    s.device,
                    list(s.make_vars),
                    model,
                    shards if s.sharded else None,
                    not todo if s.sharded else done(),
                    todo,
                    [r for i in (range(1, shards + 1) if s.sharded else (0,)) for r in records(i)],
                )
            )
    for j in out:  # shards are intermediate: done once what merges them is
        if j.shards and all(k.finished for k in out if j.name in k.needs):
            j.finished, j.todo = True, []
    return out


def stage_is_per_model(name: str) -> bool:
    return any(s.name == name and s.per_model for s in EVERY)


def format_plan(job_list: List[Job], as_json: bool) -> str:
    """JSON lines, or one line per job: NAME NEEDS SCRIPT DEVICE GROUP MAKE_VARS STATE TODO, lists
    comma-separated and ``-`` for none (a stage run by hand: SCRIPT and GROUP ``-``); STATE ``done`` or
    ``todo``, TODO the shards still to do."""
    if as_json:
        return "\n".join(json.dumps(asdict(j)) for j in job_list)
    words = lambda xs: ",".join(str(x) for x in xs) or "-"  # noqa: E731
    return "\n".join(
        f"{j.name} {words(j.needs)} {j.script or '-'} {j.device} {j.group or '-'} {words(j.make_vars)} "
        f"{'done' if j.finished else 'todo'} {words(j.todo)}"
        for j in job_list
    )
