"""The study's stages, declared once, with keyword fields: what each is called, which stages it
needs, what it reads and writes, its device, its make targets with the Make variables each reads
and the ``contextual-mt pipeline`` option each gives (as stanza's processors declare what they
require and provide). From this table come:

* the job chain (``STAGES``, in the order ``make all`` runs it, ``make_all()``) and the stages run
  by hand (``BY_HAND``), printed by ``contextual-mt pipeline plan`` with their state: the job graph
  that ``recipes/slurm/submit.sh`` submits;
* the Makefile's stage targets and the Slurm job scripts (``make_rules.py`` writes them: the
  Makefile's ``# stages:`` block, ``recipes/slurm/*.sbatch`` from one template), hence the Make
  reference page, generated from the Makefile's ``## `` comments;
* the Make variable of each option (``make_variables()``), which errors under make name.

A stage is done when its records say so: ``stage_record.StageRecord`` (the one rerun rule).

Paths are templates over one pair's folders: ``{data}`` (WORK/data/xx), ``{ckpt}``
(WORK/checkpoints/xx), ``{results}`` (WORK/results/xx), ``{lang}`` (xx), ``{model}`` (a model of
a per-model stage), ``{shard}`` / ``{shards}`` (a task of a sharded stage).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Tuple

from contextual_mt.errors import Code, InputError, check_number
from contextual_mt.pipeline.layout import MODELS, SYSTEMS, PairLayout
from contextual_mt.stage_record import StageRecord, record_finished


@dataclass(frozen=True)
class MakeVar:
    """A Make variable of a target and the stage option it gives, written into the target's
    command line only when given (``when``): ``set`` non-empty, ``given`` set at all (``BEAM=``
    too: the stage then says the value is missing), ``always``. ``flag`` "" passes the variable's
    words as they are (REPORT_ARGS); a ``switch`` is the bare flag (OVERWRITE=1: --overwrite);
    ``quote`` shell-quotes the value, ``joined`` writes ``--flag=VALUE`` (a value that may start
    with '-'); ``words``: the value is options of another command (MUDA_ARGS), parsed by
    ``make_names.split_words``; ``then``: the options written only with this one (SUITE's)."""

    var: str
    flag: str = ""
    when: str = "set"
    quote: bool = False
    joined: bool = False
    switch: bool = False
    words: bool = False
    then: Tuple[MakeVar, ...] = ()


@dataclass(frozen=True)
class MakeTarget:
    """``make NAME``: runs ``contextual-mt pipeline COMMAND ARGS OPTIONS`` (the Makefile's block
    between ``# stages:`` markers is written from these, ``python -m contextual_mt.pipeline.make_rules``);
    ``doc``/``uses`` its ``## target`` documentation, ``pair`` whether it needs LANG (else it runs on
    the demo pair too), ``checks`` shell lines run first."""

    name: str
    command: str
    doc: str
    uses: str  # the Make variables it reads
    args: str = "$(PAIR_OPTS)"
    options: Tuple[MakeVar, ...] = ()
    pair: bool = True
    checks: Tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Command:
    """``contextual-mt pipeline NAME``: its parser generated from the options class ``options``
    (``module:Class``, imported when the parser is built; its fields are declared with
    ``commandkit.options.option``), run by ``contextual_mt.cli.pipeline.run.NAME`` (a function of
    the options object). ``listed``: its place in ``pipeline --help``; ``demo_first``: on the demo
    pair, the demo's output the stage reads (``checkpoint``, ``translation``), which the demo makes
    first when it is missing; ``defaults``: what the command line's runner reads (the stages write
    their own outputs: no transaction around them)."""

    name: str
    options: str
    help: str
    listed: int
    demo_first: str = ""
    defaults: Tuple[Tuple[str, object], ...] = (("transaction", False),)


@dataclass(frozen=True, kw_only=True)
class Stage:
    name: str  # the job's name
    needs: Tuple[str, ...] = ()  # the jobs whose outputs it reads
    inputs: Tuple[str, ...] = ()
    records: Tuple[str, ...]  # the done-records it writes when it finishes (the job chain's "finished")
    # outputs a finished stage must still have (non-empty) beside its records, for the records that
    # do not list their outputs' hashes (the summaries)
    outputs: Tuple[str, ...] = ()
    device: str = "cpu"  # "gpus": the GPUs of a training job (GPUS), "gpu": one (STAGE_GPUS), "cpu": none
    targets: Tuple[MakeTarget, ...] = ()  # its make targets (the first is the one a job runs)
    # the make target that runs the whole stage on one machine, a step of `make all` ("": none, the
    # stage is a part of another's target, as the P-CXMI shards are of `make pcxmi`)
    target: str = ""
    script: str = ""  # its Slurm script (recipes/slurm/); "" for a stage run by hand (no job of the chain)
    group: str = ""  # what submit.sh's STAGES= selects it by ("" for a stage run by hand)
    make_vars: Tuple[str, ...] = ()  # the submit.sh variables its job's make gets (when set)
    per_model: bool = False  # one job per model (train-sentence, train-context)
    sharded: bool = False  # a job array, one task per shard
    requeue: bool = False  # a long job that requeues itself near its time limit (train)
    about: str = ""  # what it makes (a stage run by hand)
    command: Optional[Command] = None  # its `contextual-mt pipeline` subcommand (None: another stage's)

    @property
    def chain(self) -> bool:
        """A job of the chain (`make all`, the Slurm jobs); else run by hand."""
        return bool(self.script)

    @property
    def make(self) -> str:
        """The make target a job runs."""
        return self.targets[0].name


_TEST = ("{data}/test.en", "{data}/test.{lang}", "{data}/test.docids")
_TRANSLATIONS = tuple(f"{{results}}/{s}.test.{{lang}}" for s in SYSTEMS)
_CHECKPOINTS = tuple(f"{{ckpt}}/{m}/checkpoint_best.pt" for m in MODELS)
_OVERWRITE = MakeVar("OVERWRITE", "--overwrite", switch=True)
_DTYPE = MakeVar("DTYPE", "--dtype", quote=True)
_DECODING = (MakeVar("BEAM", "--beam", when="given"), MakeVar("DECODING", "--decoding", quote=True), _DTYPE)
_MUDA_TAG_ARGS = MakeVar("MUDA_TAG_ARGS", "--muda-tag-args", quote=True, joined=True, words=True)
_REPORT_ARGS = MakeVar("REPORT_ARGS", when="always", words=True)
_ATTRIBUTE_ARGS = MakeVar("ATTRIBUTE_ARGS", "--attribute-args", quote=True, joined=True, words=True)
# the job chain, in the order `make all` runs it
STAGES: Tuple[Stage, ...] = (
    Stage(
        name="data",
        inputs=("TED|IWSLT|TEXT",),
        records=("{data}/.stage/data.json",),
        outputs=("{data}/bin/dict.{lang}.txt", "{data}/summary.json"),
        targets=(
            MakeTarget(
                name="data",
                command="data",
                doc="reads the corpus (exactly one input), detokenizes it (TED), trains a joint\n"
                "sentencepiece model and binarizes with `<brk>`/`<mask>` in the dictionary; writes\n"
                "`WORK/data/xx/{train,valid,test}.{en,xx,docids}`, `spm.model`, `bin/`, `summary.json`\n"
                "(`contextual-mt pipeline data`)",
                uses="LANG WORK TED IWSLT TEXT IWSLT_DEV IWSLT_TEST SPM_VOCAB PRESET OVERWRITE",
                args="--lang $(PAIR) --output $(PAIR_DATA)",
                options=(
                    MakeVar("SPM_VOCAB", "--vocab-size"),
                    MakeVar("PRESET", "--preset"),
                    MakeVar("TED", "--ted"),
                    MakeVar("IWSLT", "--iwslt"),
                    MakeVar("TEXT", "--text"),
                    MakeVar("IWSLT_DEV", "--iwslt-dev"),
                    MakeVar("IWSLT_TEST", "--iwslt-test"),
                    _OVERWRITE,
                ),
            ),
        ),
        target="data",
        script="data.sbatch",
        group="data",
        make_vars=("TED", "IWSLT", "TEXT", "SPM_VOCAB"),
        command=Command(
            name="data",
            options="contextual_mt.pipeline.data_plan:DataOptions",
            help="prepare one language pair: text splits, a joint sentencepiece model, fairseq-binarized data",
            listed=1,
        ),
    ),
    Stage(
        name="train",
        needs=("data",),
        inputs=("{data}/bin",),
        records=("{ckpt}/{model}/.stage/train.json",),
        outputs=("{ckpt}/{model}/checkpoint_best.pt",),
        device="gpus",
        targets=(
            MakeTarget(
                name="train",
                command="train",
                doc="trains the sentence-level model and the context model (target context 0-3,\n"
                "dynamic size, CoWord dropout 0.1) with a preset; writes `WORK/checkpoints/xx/{sentence,context}/`\n"
                "(`train.log`, `.stage/train.json`) (`contextual-mt pipeline train`)",
                uses="LANG WORK PRESET MODEL GPUS EPOCHS MAX_UPDATE PRETRAINED BATCH OVERWRITE",
                options=(
                    MakeVar("PRESET", "--preset"),
                    MakeVar("MODEL", "--model"),
                    MakeVar("GPUS", "--gpus"),
                    MakeVar("EPOCHS", "--max-epoch"),
                    MakeVar("MAX_UPDATE", "--max-update"),
                    MakeVar("PRETRAINED", "--pretrained"),
                    MakeVar("BATCH", "--batch", quote=True),
                    _OVERWRITE,
                ),
            ),
        ),
        target="train",
        script="train.sbatch",
        group="train",
        make_vars=("PRESET", "MODEL", "GPUS"),
        per_model=True,
        requeue=True,
        command=Command(
            name="train",
            options="contextual_mt.pipeline.train:TrainOptions",
            help="train the study's sentence-level and context models of a language pair",
            listed=2,
        ),
    ),
    Stage(
        name="translate",
        needs=("train-sentence", "train-context"),
        inputs=(*_CHECKPOINTS, *_TEST),
        records=("{results}/.stage/translate.json",),
        outputs=_TRANSLATIONS,
        device="gpu",
        targets=(
            MakeTarget(
                name="translate",
                command="translate",
                doc="translates the test set with the sentence model, the context model with its\n"
                "own previous translations (`context`) and with reference context (`context-gold`); writes\n"
                "`WORK/results/xx/{sentence,context,context-gold}.test.xx` (`contextual-mt pipeline translate`)",
                uses="LANG WORK BEAM DECODING DTYPE",
                options=_DECODING,
            ),
        ),
        target="translate",
        script="translate.sbatch",
        group="translate",
        command=Command(
            name="translate",
            options="contextual_mt.pipeline.translate_stage:TranslateStageOptions",
            help="translate the test set with the sentence, context and context-gold systems",
            listed=3,
        ),
    ),
    Stage(
        name="score",
        needs=("translate",),
        inputs=(*_TRANSLATIONS, *_TEST),
        records=("{results}/.stage/score.json",),
        device="gpu",
        targets=(
            MakeTarget(
                name="score",
                command="score",
                doc="BLEU, chrF, d-BLEU (and COMET and Doc-COMET with COMET_MODEL) of every system (or\n"
                "of HYPS: a document-level output is aligned to the references, its alignment statistics kept);\n"
                "writes `WORK/results/xx/scores.json` (`contextual-mt pipeline score`)",
                uses="LANG WORK COMET_MODEL HYPS",
                options=(MakeVar("COMET_MODEL", "--comet-model"), MakeVar("HYPS", "--hyps")),
            ),
        ),
        target="score",
        script="score.sbatch",
        group="score",
        command=Command(
            name="score",
            options="contextual_mt.pipeline.score_stage:ScoreStageOptions",
            help="BLEU, chrF, d-BLEU (and COMET) of every system into results/xx/scores.json",
            listed=4,
        ),
    ),
    Stage(
        name="pcxmi",
        needs=("train-context",),
        inputs=("{ckpt}/context/checkpoint_best.pt", *_TEST),
        records=("{results}/pcxmi.shard-{shard}-of-{shards}.summary.json",),
        device="gpu",
        targets=(
            MakeTarget(
                name="pcxmi-shard",
                command="pcxmi",
                doc="one part `SHARD=i/n` of `make pcxmi`'s P-CXMI (what a task of the Slurm job\n"
                "array runs; `contextual-mt pipeline pcxmi --shard`)",
                uses="LANG WORK SHARD OVERWRITE DTYPE",
                pair=False,
                options=(MakeVar("SHARD", "--shard", when="always", joined=True), _OVERWRITE, _DTYPE),
            ),
        ),
        script="pcxmi.sbatch",
        group="pcxmi",
        make_vars=("SHARDS",),
        sharded=True,
        command=Command(
            name="pcxmi",
            options="contextual_mt.pipeline.pcxmi:PcxmiStageOptions",
            help="P-CXMI of the test references with the context model, and its report",
            listed=5,
            demo_first="checkpoint",
        ),
    ),
    Stage(
        name="pcxmi-merge",
        needs=("pcxmi",),
        inputs=("{results}/pcxmi.shard-{shard}-of-{shards}.jsonl",),
        records=("{results}/pcxmi.summary.json", "{results}/.stage/report.json"),
        targets=(
            MakeTarget(
                name="pcxmi-merge",
                command="pcxmi",
                doc="joins the `SHARDS=n` parts of `make pcxmi-shard` and makes the report\n"
                "(`contextual-mt pipeline pcxmi --merge-shards`)",
                uses="LANG WORK SHARDS REPORT_ARGS",
                pair=False,
                options=(MakeVar("SHARDS", "--merge-shards", when="always", joined=True), _REPORT_ARGS),
            ),
            MakeTarget(
                name="pcxmi",
                command="pcxmi",
                doc="P-CXMI of the test references with the context model, and its report; writes\n"
                "`WORK/results/xx/pcxmi.jsonl`, `pcxmi.summary.json`, `report/` (`contextual-mt pipeline pcxmi`);\n"
                "without LANG, the demo pair (running the demo first when its model is not there)",
                uses="LANG WORK OVERWRITE DTYPE REPORT_ARGS",
                pair=False,
                options=(_OVERWRITE, _DTYPE, _REPORT_ARGS),
            ),
        ),
        target="pcxmi",
        script="pcxmi-merge.sbatch",
        group="pcxmi",
        make_vars=("SHARDS",),
    ),
    Stage(
        name="muda",
        needs=("translate",),
        inputs=(*_TRANSLATIONS, *_TEST),
        records=("{results}/.stage/muda-eval.json",),
        device="gpu",
        targets=(
            MakeTarget(
                name="muda-eval",
                command="muda-eval",
                doc="MuDA tags of the reference (tagged once) and the per-tag word f-measure of the\n"
                "systems, with significance; writes `WORK/results/xx/muda/eval.json`, `eval.txt`, `eval.png`\n"
                "(`contextual-mt pipeline muda-eval`)",
                uses="LANG WORK HYPS MUDA_ARGS MUDA_TAG_ARGS COMET_MODEL",
                pair=False,
                options=(
                    MakeVar("HYPS", "--hyps"),
                    MakeVar("MUDA_ARGS", "--muda-args", when="given", quote=True, joined=True, words=True),
                    _MUDA_TAG_ARGS,
                    MakeVar("COMET_MODEL", "--comet-model"),
                ),
            ),
        ),
        target="muda-eval",
        script="muda.sbatch",
        group="muda",
        command=Command(
            name="muda-eval",
            options="contextual_mt.pipeline.muda_eval:MudaEvalOptions",
            help="MuDA evaluation of the translations (the reference tagged once)",
            listed=10,
            demo_first="translation",
        ),
    ),
    Stage(
        name="cues",
        needs=("train-sentence", "train-context"),
        inputs=(*_CHECKPOINTS, *_TEST),
        records=("{results}/.stage/cues.json",),
        outputs=("{results}/cues/cues.json",),
        device="gpu",
        targets=(
            MakeTarget(
                name="cues",
                command="cues",
                doc="does the model follow the cue? the counterfactual suite of the test split (`testset\n"
                "build --counterfactual`, from the reference's MuDA tags: each group whose cue is known, edited),\n"
                "scored by the sentence and context models (`contrastive`), and its measures (`testset cues`);\n"
                "writes `WORK/results/xx/cues/` (`counterfactual/`, `{sentence,context}.summary.json`, `cues.json`,\n"
                "`cues.png`) (`contextual-mt pipeline cues`)",
                uses="LANG WORK MUDA_TAG_ARGS DTYPE",
                pair=False,
                options=(_DTYPE, _MUDA_TAG_ARGS),
            ),
        ),
        target="cues",
        script="cues.sbatch",
        group="cues",
        command=Command(
            name="cues",
            options="contextual_mt.pipeline.cues_stage:CuesStageOptions",
            help=(
                "does the model follow the cue? the counterfactual suite of the test split, scored by the "
                "sentence and context models, and its measures (results/xx/cues/)"
            ),
            listed=8,
            demo_first="checkpoint",
        ),
    ),
)
# the stages run by hand (make STAGE), or by `make table` over several pairs
BY_HAND: Tuple[Stage, ...] = (
    Stage(
        name="report",
        needs=("pcxmi-merge",),
        # the attribution when `make attribute` made it (of the same model): its cues in the viewer
        inputs=("{results}/pcxmi.jsonl", "{results}/attribution.jsonl"),
        records=("{results}/.stage/report.json",),
        targets=(
            MakeTarget(
                name="report",
                command="report",
                doc="the P-CXMI report (also made by pcxmi and pcxmi-merge), remade when its inputs\n"
                "changed; with `make attribute`'s records (of the same context model) its viewer shows each\n"
                "token's cues; writes `WORK/results/xx/report/` (`contextual-mt pipeline report`)",
                uses="LANG WORK REPORT_ARGS",
                pair=False,
                options=(_REPORT_ARGS,),
            ),
        ),
        about="the P-CXMI report (part of pcxmi and pcxmi-merge)",
        command=Command(
            name="report",
            options="contextual_mt.pipeline.pcxmi:ReportStageOptions",
            help="the P-CXMI report (tables, plot, viewer) of results/xx/pcxmi.jsonl",
            listed=6,
        ),
    ),
    Stage(
        name="testset",
        needs=("data",),
        inputs=_TEST,
        records=("{results}/.stage/testset.json",),
        targets=(
            MakeTarget(
                name="testset",
                command="testset",
                doc="contrastive test suites of the test split from the reference's MuDA tags; writes\n"
                "`WORK/results/xx/testset/{voita.json,contrapro.json,manifest.jsonl,summary.json}`; `make\n"
                "muda-eval` then adds their generative evaluation (`contextual-mt pipeline testset`). With\n"
                "SUITE: the imported suite translated by the sentence and context models (BEAM, DECODING, DTYPE as\n"
                "`make translate`), scored per phenomenon with 95% intervals (`testset evaluate`) and on its\n"
                "contrastive variants; writes `WORK/results/xx/suites/NAME/`, which `make table` shows",
                uses="LANG WORK MUDA_TAG_ARGS SUITE BEAM DECODING DTYPE",
                pair=False,
                options=(
                    _MUDA_TAG_ARGS,
                    MakeVar("SUITE", "--suite", when="given", quote=True, joined=True, then=_DECODING),
                ),
            ),
        ),
        about="contrastive test suites of the test split from MuDA tags",
        command=Command(
            name="testset",
            options="contextual_mt.pipeline.testset_stage:TestsetStageOptions",
            help=(
                "contrastive test suites of the test split from the reference's MuDA tags (results/xx/testset/); "
                "with --suite, an imported suite through the pair's models (results/xx/suites/NAME/)"
            ),
            listed=9,
        ),
    ),
    Stage(
        name="attribute",
        needs=("train-context",),
        inputs=("{ckpt}/context/checkpoint_best.pt", *_TEST),
        records=("{results}/attribution.summary.json",),
        outputs=("{results}/attribution.jsonl",),
        device="gpu",
        targets=(
            MakeTarget(
                name="attribute",
                command="attribute",
                doc="context attribution (CTI + CCI) of the test references with the context model:\n"
                "which context words each context-sensitive token relies on; writes\n"
                "`WORK/results/xx/attribution.jsonl`, `attribution.summary.json`, which `make report` then adds to\n"
                "the P-CXMI report (`contextual-mt pipeline attribute`)",
                uses="LANG WORK OVERWRITE DTYPE ATTRIBUTE_ARGS",
                pair=False,
                options=(
                    _OVERWRITE,
                    _DTYPE,
                    MakeVar("ATTRIBUTE_ARGS", "--attribute-args", quote=True, joined=True, words=True),
                ),
            ),
        ),
        about="context attribution of the test references (CTI + CCI)",
        command=Command(
            name="attribute",
            options="contextual_mt.pipeline.attribute_stage:AttributeStageOptions",
            help=(
                "context attribution (CTI + CCI) of the test references with the context model: "
                "results/xx/attribution.jsonl"
            ),
            listed=7,
            demo_first="checkpoint",
        ),
    ),
    Stage(
        name="contrastive",
        needs=("train-sentence", "train-context"),
        inputs=("SETS",),
        records=("{results}/contrastive/summary.json",),
        device="gpu",
        targets=(
            MakeTarget(
                name="contrastive",
                command="contrastive",
                doc="accuracy of the sentence model, the context model and the context model at\n"
                "context 0/0 on contrastive test sets; writes `WORK/results/xx/contrastive/*.{scores,json}` and\n"
                "`summary.{md,json}` (`contextual-mt pipeline contrastive`)",
                uses="LANG WORK SETS DTYPE",
                checks=(
                    '@test -n "$(SETS)" || { echo "error: give SETS=\\"FORMAT:FILE[,CONTEXT_FILE...] ...\\" '
                    '(formats: voita, bawden, contrapro, scat)" >&2; exit 1; }',
                ),
                options=(MakeVar("SETS", "--sets", when="always"), _DTYPE),
            ),
        ),
        about="accuracy on contrastive test sets (SETS=...)",
        command=Command(
            name="contrastive",
            options="contextual_mt.pipeline.contrastive_stage:ContrastiveStageOptions",
            help="accuracy of the sentence and context models on contrastive test sets",
            listed=11,
        ),
    ),
    Stage(
        name="table",
        needs=("score", "muda"),
        inputs=("{results}/scores.json", "{results}/muda/eval.json"),
        records=("{results}/../table/.stage/table.json",),
        targets=(
            MakeTarget(
                name="table",
                command="table",
                doc="Table 10 of the paper over several pairs (BLEU, COMET, word f-measure per MuDA tag,\n"
                "chrF, d-BLEU, CXMI; bold = significantly better than the sentence-level system, p < 0.05, paired\n"
                "bootstrap) and a figure like Figure 2; writes `WORK/results/table/table.{md,csv,json,png}`\n"
                "(`contextual-mt pipeline table`)",
                uses="LANGS WORK",
                pair=False,
                checks=(
                    '@test -n "$(LANGS)" || { echo \'error: make table needs LANGS="xx yy ..." '
                    "(pairs with results in $(WORK)/results)' >&2; exit 1; }",
                ),
                args="--langs $(LANGS) --results-dir $(WORK)/results --output-dir $(WORK)/results/table",
            ),
        ),
        about="the table over LANGS",
        command=Command(
            name="table",
            options="contextual_mt.pipeline.results_table.options:TableOptions",
            help=(
                "the cross-language results table (BLEU, COMET, word f-measure per MuDA tag; significance against "
                "the sentence-level system)"
            ),
            listed=12,
            defaults=(("output_dir_args", ("output_dir",)),),
        ),
    ),
)
EVERY: Tuple[Stage, ...] = STAGES + BY_HAND


def make_variables(words: bool = False) -> Dict[str, str]:
    """option -> the Make variable that gives it, over every stage's targets (not the switches);
    ``words``: those holding another command's options (MUDA_ARGS, ...), else the others."""
    out: Dict[str, str] = {}

    def add(v: MakeVar) -> None:
        if v.flag and not v.switch and v.words == words:
            out.setdefault(v.flag, v.var)
        for w in v.then:
            add(w)

    for s in EVERY:
        for t in s.targets:
            for v in t.options:
                add(v)
    return out


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
    raise InputError(
        f"unknown stage {name!r}: expected one of {', '.join(s.name for s in EVERY)}", code=Code.OPTION_VALUE
    )


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
SHARDS = 4  # tasks of the P-CXMI job array when not given (`pipeline plan --shards`)


def jobs(lang: str, root: str = ".", shards: int = SHARDS, every: bool = False) -> List[Job]:
    """The job graph of one pair: per-model stages split by model, each with its state; ``every``:
    the stages run by hand too, after the chain (no script: not jobs of the chain)."""
    # a shard is a part of the test documents: more than MAX_SHARDS is a typo, not a plan
    check_number("--shards", shards, minimum=1, maximum=MAX_SHARDS, integer=True)
    if os.path.exists(root) and not os.path.isdir(root):
        raise InputError(
            f"--root {root}: is a file, not the folder holding data/, checkpoints/ and results/", code=Code.OPTION_VALUE
        )
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
