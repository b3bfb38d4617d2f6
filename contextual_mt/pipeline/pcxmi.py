"""``make pcxmi|pcxmi-shard|pcxmi-merge|report``: P-CXMI of the test references with the context
model, and its report (``contextual-mt pipeline pcxmi`` / ``pipeline report``).

``results/xx/pcxmi.jsonl`` (+ ``pcxmi.summary.json``) is ``contextual-mt cxmi`` on the test set;
``--shard i/n`` (1-based, as the Slurm array counts) writes ``pcxmi.shard-i-of-n.jsonl`` instead,
and ``--merge-shards n`` joins the n shards. ``results/xx/report/`` is ``contextual-mt report`` of
the records, with the references' CoNLL-U and MuDA tags when the data folder (or muda-eval) has
them and ``make attribute``'s records when they are of the same model and sentences (the viewer's
cues), or with what ``ReportInputs`` asks for (``make pcxmi REPORT_ARGS="--stanza"``). Each output is
kept while its stage record says it was made from the same inputs.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Dict, Optional, Union

from commandkit.options import group, option
from contextual_mt.errors import Code, InputError, check_number
from contextual_mt.inference.model_args import PARTIAL_HELP, overwrite_option, progress_option
from contextual_mt.pipeline.layout import DEMO, EvalPaths, attribution_output, eval_paths, reference_tags
from contextual_mt.pipeline.make_names import given, option_name
from contextual_mt.pipeline.stage_options import demo_lang_option, dtype_option, root_option
from contextual_mt.stage_record import StageRecord, file_hashes, project_version


def record_path(paths: EvalPaths, stage: str) -> str:
    """Where the evaluation stages keep their done-records."""
    return os.path.join(paths.results, ".stage", f"{stage}.json")


def pcxmi_output(paths: EvalPaths) -> str:
    return os.path.join(paths.results, "pcxmi.jsonl")


def shard_output(paths: EvalPaths, i: int, n: int) -> str:
    return os.path.join(paths.results, f"pcxmi.shard-{i}-of-{n}.jsonl")


def parse_stage_shard(shard: str) -> tuple:
    """``i/n``, 1-based (the Slurm array's and the file names' count); errors name ``SHARD=``
    under make."""
    try:
        i, n = (int(x) for x in shard.split("/"))
    except ValueError:
        raise InputError(
            f"{given('--shard', shard or repr(shard))}: give i/n, shard i of n counting from 1 (e.g. 1/4)",
            code=Code.OPTION_MISSING,
        ) from None
    if not 1 <= i <= n:
        raise InputError(
            f"{given('--shard', shard)}: need 1 <= i <= n (shards count from 1: 1/{max(n, 1)} "
            f"to {max(n, 1)}/{max(n, 1)})",
            code=Code.OPTION_VALUE,
        )
    return i, n


def parse_merge_shards(value) -> Optional[int]:
    """``--merge-shards N`` (a string from the command line, so that ``SHARDS=x`` is one line)."""
    if value is None or isinstance(value, int):
        return value
    try:
        return int(value)
    except ValueError:
        raise InputError(
            f"{given('--merge-shards', value or repr(value))}: give the number of shards (e.g. 4)",
            code=Code.OPTION_MISSING,
        ) from None


REPORT_INPUTS = (
    'what the report joins P-CXMI with (make: REPORT_ARGS="..."); by default data/xx/test.xx.conllu, '
    "the MuDA tags of the reference and the attribution of 'make attribute' when they are there"
)
SHARDS = "shards"  # --shard and --merge-shards: one or the other


@dataclass
class ReportInputs:
    """What the report joins the records with, beyond what it finds beside the data
    (``test.xx.conllu``, ``test.tags.json``, muda-eval's tags of the reference)."""

    # instead of test.xx.conllu
    conllu: Optional[str] = option(group=REPORT_INPUTS, help="CoNLL-U of the test references: P-CXMI per POS class")
    stanza: bool = option(
        action="store_true",
        default=False,
        group=REPORT_INPUTS,
        help="annotate the test references with stanza (the target language's model; cached in the "
        "report folder as annotations.conllu)",
    )
    stanza_dir: Optional[str] = option(group=REPORT_INPUTS, help="stanza's model folder (with --stanza)")
    tags: Optional[str] = option(
        group=REPORT_INPUTS, help="MuDA tags of the test references (muda tag's JSON): P-CXMI per phenomenon"
    )
    # instead of the pair's attribution.jsonl, which `make attribute` writes
    attribution: Optional[str] = option(
        group=REPORT_INPUTS,
        help="`contextual-mt attribute --reference` records of the same sentences: cues in the viewer and "
        "(target word, cue word) pairs (default: results/xx/attribution.jsonl of 'make attribute' when it is "
        "of the same context model)",
    )

    def __post_init__(self) -> None:
        if self.conllu and self.stanza:
            raise InputError(f"give {given('--conllu')} or {given('--stanza')}, not both", code=Code.OPTIONS_CONFLICT)
        for flag, path in (("--conllu", self.conllu), ("--tags", self.tags), ("--attribution", self.attribution)):
            if path is not None and not os.path.isfile(path):
                raise InputError(f"{given(flag, path)}: {path} not found", code=Code.NOT_FOUND)
        if self.stanza_dir is not None and not self.stanza:
            raise InputError(
                f"{given('--stanza-dir', self.stanza_dir)} goes with {given('--stanza')}", code=Code.OPTIONS_CONFLICT
            )


@dataclass
class PcxmiStageOptions:
    lang: Optional[str] = demo_lang_option()  # None: the demo pair
    root: str = root_option()
    shard: Optional[str] = option(
        metavar="I/N", exclusive=SHARDS, help="only shard I of N (1-based; no report): the Slurm array's task"
    )
    # N as given (a number once built)
    merge_shards: Union[int, str, None] = option(
        metavar="N", exclusive=SHARDS, help="join the N shards, then the report"
    )
    overwrite: bool = overwrite_option(PARTIAL_HELP)  # discard an interrupted run's records (OUTPUT.partial)
    dtype: str = dtype_option()  # of the context model (inference.precision); the records' fingerprint names it
    progress: bool = progress_option()
    report: ReportInputs = group(ReportInputs)

    def __post_init__(self) -> None:
        from contextual_mt.inference.precision import check_dtype

        check_dtype(self.dtype)
        self.paths = eval_paths(self.lang, self.root)
        if self.shard is not None and self.merge_shards is not None:
            raise InputError(
                f"give {given('--shard')} or {given('--merge-shards')}, not both", code=Code.OPTIONS_CONFLICT
            )
        if self.shard is not None:
            parse_stage_shard(self.shard)
        self.merge_shards = parse_merge_shards(self.merge_shards)
        check_number(option_name("--merge-shards"), self.merge_shards, minimum=1, integer=True, optional=True)


def check_inputs(paths: EvalPaths, stage: str = "pcxmi") -> None:
    """The context model and the test set, or one line saying which stage makes them."""
    if not os.path.isfile(paths.checkpoint):
        raise InputError(
            f"{paths.checkpoint} not found: train the {paths.pair} context model first "
            f"('make train LANG={paths.pair} MODEL=context')",
            code=Code.NOT_FOUND,
        )
    for side in ("en", paths.target, "docids"):
        if not os.path.isfile(paths.test(side)):
            raise InputError(
                f"{paths.test(side)} not found (docs/reference/make.md, 'make {stage}')", code=Code.NOT_FOUND
            )


def check_shard_count(p: EvalPaths, shard: str, n: int) -> None:
    """n shards of the test documents: no more than there are documents (in the words the user
    typed: SHARD=i/n under make)."""
    from commandkit.documents import document_spans, read_docids

    documents = len(document_spans(read_docids(p.test("docids"))))
    if n > documents:
        raise InputError(
            f"{given('--shard', shard)}: {p.test('docids')} has only {documents} documents, fewer than {n} shards",
            code=Code.OPTION_VALUE,
        )


def pair_model(p: EvalPaths, dtype: str):
    """The pair's context model (its checkpoint, its sentencepiece model) as the evaluation
    stages that score with it run it (pcxmi, attribute): ``FairseqModelOptions``."""
    from contextual_mt.backends.fairseq.model import FairseqModelOptions

    return FairseqModelOptions(p.checkpoint, spm=p.spm, dtype=dtype)


def run_pcxmi_stage(pcxmi: PcxmiStageOptions) -> None:
    from contextual_mt.analysis.cxmi import CxmiOptions, run_cxmi
    from contextual_mt.analysis.cxmi_summary import summary_line

    p = pcxmi.paths
    check_inputs(p)
    if pcxmi.merge_shards is not None:
        merge_stage(p, int(pcxmi.merge_shards))
        report_stage(p, pcxmi.report)
        return
    output = pcxmi_output(p)
    shard = None
    if pcxmi.shard is not None:
        i, n = parse_stage_shard(pcxmi.shard)
        check_shard_count(p, pcxmi.shard, n)
        output, shard = shard_output(p, i, n), f"{i - 1}/{n}"  # cxmi --shard counts from 0
    model = pair_model(p, pcxmi.dtype)
    summary = run_cxmi(
        CxmiOptions(
            model,
            p.test("en"),
            p.test(p.target),
            p.test("docids"),
            output,
            shard=shard,
            resume=not pcxmi.overwrite,
            progress=pcxmi.progress,
            skip_up_to_date=True,
        )
    )
    print(summary_line(summary, output))
    if pcxmi.shard is None:
        report_stage(p, pcxmi.report)


def merge_stage(p: EvalPaths, n: int) -> None:
    """``pcxmi.jsonl`` from the n shards, unless it was made from these very shards."""
    from contextual_mt.analysis.cxmi_shards import merge_shards
    from contextual_mt.analysis.cxmi_summary import summary_line, summary_path

    shards = [shard_output(p, i, n) for i in range(1, n + 1)]
    output = pcxmi_output(p)
    present = [s for s in shards if os.path.isfile(s)]
    fp = {"shards": file_hashes({s: s for s in present}), "version": project_version()}
    record = StageRecord(record_path(p, "pcxmi-merge"), "pcxmi-merge")
    if len(present) == n and record.current(fp):
        print(f"{output}: up to date (made from its shards)")
        return
    absent = [i for i, s in enumerate(shards, start=1) if not os.path.isfile(s)]
    if absent:
        raise InputError(
            f"{shards[absent[0] - 1]}: does not exist ({len(absent)} of {n} shards not scored "
            f"yet: {', '.join(f'{i}/{n}' for i in absent)}; {given('--shard', 'i/n')} scores "
            "shard i)",
            code=Code.NOT_FOUND,
        )
    summary = merge_shards(shards, output)
    print(summary_line(summary, output))
    record.save(fp, [output, summary_path(output)])


# the keys of the P-CXMI and attribution fingerprints that say which model and sentences they are of
SAME_RUN_KEYS = ("source", "reference", "docids", "checkpoint", "spm", "dictionaries")


def pair_attribution(p: EvalPaths) -> Optional[str]:
    """The pair's finished ``make attribute`` records when they are of the same context model and
    test sentences as ``pcxmi.jsonl`` (their summaries' fingerprints agree); else None, with one
    line saying why records that are there are left out."""
    from contextual_mt.analysis.cxmi_summary import summary_path
    from contextual_mt.stage_record import differences, read_record

    path = attribution_output(p.results)
    if not os.path.isfile(path):  # none yet, or an interrupted run (attribution.jsonl.partial)
        return None
    ours = (read_record(summary_path(path)) or {}).get("fingerprint")
    theirs = (read_record(summary_path(pcxmi_output(p))) or {}).get("fingerprint")
    if not isinstance(ours, dict) or not isinstance(theirs, dict):
        return path  # summaries without fingerprints: the report checks the records sentence by sentence
    differ = differences(
        {k: theirs.get(k) for k in SAME_RUN_KEYS}, {k: ours.get(k) for k in SAME_RUN_KEYS}, ("pcxmi", "attribution")
    )
    if differ:
        print(
            f"note: {path}: left out of the report, not of the model and sentences of {pcxmi_output(p)} "
            f"(differs in: {', '.join(differ)}); make attribute again to add it",
            file=sys.stderr,
        )
        return None
    return path


def report_inputs(p: EvalPaths, given_inputs: Optional[ReportInputs] = None) -> Dict[str, Optional[str]]:
    """The records, and what the report joins them with: what the options name, else what is
    there (the data folder's CoNLL-U and tags, muda-eval's tags of the reference, ``make
    attribute``'s records of the same model and sentences)."""
    a = given_inputs or ReportInputs()
    tags = a.tags or p.optional("test.tags.json")
    if tags is None and os.path.isfile(reference_tags(p)):
        tags = reference_tags(p)
    conllu = a.conllu or (None if a.stanza else p.optional(f"test.{p.target}.conllu"))
    attribution = a.attribution or pair_attribution(p)
    return {"pcxmi": pcxmi_output(p), "conllu": conllu, "tags": tags, "attribution": attribution}


@dataclass
class ReportStageOptions:
    """``contextual-mt pipeline report``: the pair, and what the report joins the records with."""

    lang: Optional[str] = demo_lang_option()  # None: the demo pair
    root: str = root_option()
    report: ReportInputs = group(ReportInputs)


def run_report_stage(options: ReportStageOptions) -> None:
    report_stage(eval_paths(options.lang, options.root), options.report)


def report_stage(p: EvalPaths, given_inputs: Optional[ReportInputs] = None) -> None:
    """``results/xx/report``, remade when the records, the annotations or the options changed."""
    from contextual_mt.analysis.report import ReportOptions, report_lines, run_report

    a = given_inputs or ReportInputs()
    inputs = report_inputs(p, a)
    records = pcxmi_output(p)
    if not os.path.isfile(records):
        raise InputError(
            f"{records} not found: compute P-CXMI first ('make pcxmi"
            + ("" if p.pair == DEMO else f" LANG={p.pair}")
            + "')",
            code=Code.NOT_FOUND,
        )
    folder = os.path.join(p.results, "report")
    stanza_lang = p.muda_lang if a.stanza else None
    fp = {
        **file_hashes(inputs),
        "tags_file": inputs["tags"],
        "stanza": stanza_lang,
        "words": p.muda_lang,
        "version": project_version(),
    }
    record = StageRecord(record_path(p, "report"), "report")
    if record.current(fp):
        print(f"{folder}: up to date")
        return
    summary = run_report(
        ReportOptions(
            records,
            folder,
            conllu=inputs["conllu"],
            tags=inputs["tags"],
            stanza_lang=stanza_lang,
            stanza_dir=a.stanza_dir,
            lang=p.muda_lang,
            attribution=inputs["attribution"],
        )
    )
    print("\n".join(report_lines(summary, folder)))
    record.save(fp, [os.path.join(folder, name) for name in ("report.md", "report.json")])
