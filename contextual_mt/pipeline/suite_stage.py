"""``make testset SUITE=DIR``: an imported suite (``contextual-mt testset import --format ctxpro``,
docs/explanations/external-suites.md) through the pair's models.

The suite's documents (each example's context sentences, then its sentence) are translated by the
sentence model and by the context model with its own previous translations (the suites have no
target-side context, so there is no ``context-gold``), with the decoding options of ``make
translate``; the translations are scored by ``testset evaluate`` (ctxpro's rule, per phenomenon,
95% bootstrap intervals, the context model against the sentence model by paired bootstrap), and
where the suite has contrastive variants (its ``voita.json``) both models rank them
(``contrastive``). Outputs, in ``results/xx/suites/NAME/`` (NAME: the suite folder's name):
``sentence.xx``, ``context.xx``, ``evaluation.{json,txt}``, ``voita.SYSTEM.{scores,json}`` and
``summary.json`` (what ``make table`` shows). Its record (``results/xx/.stage/suite-NAME.json``)
holds the suite's files, the checkpoints and the decoding options by content: a re-run with the
same ones does nothing, a changed one makes everything again.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from commandkit.outputs import atomic_write_lines, atomic_write_text, outputs
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.decoding import DecodingOptions
from contextual_mt.pipeline.layout import DEMO, DEMO_LANG, DEMO_ROOT, SOURCE_LANG, PairLayout, require_data
from contextual_mt.pipeline.make_names import given
from contextual_mt.pipeline.translate_stage import TranslateStageOptions, model_decoding, study_decoding
from contextual_mt.stage_record import StageRecord, project_version

SUITE_SYSTEMS = ("sentence", "context")  # the study's systems a suite without target context can have
SUITES = "suites"  # results/xx/suites/NAME/
SUMMARY = "summary.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass
class SuiteStageOptions:
    """The pair (``lang`` None: the demo pair), the imported suite's folder and the decoding."""

    lang: Optional[str]
    suite: str
    root: str = "."
    decoding: DecodingOptions = field(default_factory=study_decoding)
    cpu: bool = False
    dtype: str = "auto"
    bootstrap: int = 1000  # testset evaluate's resamples
    progress: bool = True

    def __post_init__(self) -> None:
        from contextual_mt.inference.precision import check_dtype
        from contextual_mt.testsets.ctxpro import read_suite

        check_dtype(self.dtype)
        demo = self.lang is None or self.lang == DEMO
        self.layout = PairLayout(DEMO_LANG, DEMO_ROOT) if demo else PairLayout(str(self.lang), self.root)
        if not isinstance(self.suite, str) or not self.suite:
            raise InputError(
                f"{given('--suite')}: give the folder 'contextual-mt testset import' wrote", code=Code.OPTION_MISSING
            )
        self.name = os.path.basename(os.path.normpath(self.suite))
        if not _NAME.match(self.name):
            raise InputError(
                f"{given('--suite', self.suite)}: its folder name {self.name!r} names the results",
                code=Code.OPTION_VALUE,
            )
        flag = given("--suite", self.suite)
        self.summary = read_suite(self.suite, flag)
        if self.summary["source_language"] != SOURCE_LANG:
            raise InputError(
                f"{flag}: a suite of {self.summary['source_language']}-{self.summary['language']}; "
                f"the study translates from {SOURCE_LANG}",
                code=Code.MISMATCH,
            )
        if self.summary["language"] != self.layout.lang.split("-")[0]:
            raise InputError(
                f"{flag}: a suite of {SOURCE_LANG}-{self.summary['language']}, not of the pair "
                f"{SOURCE_LANG}-{self.layout.lang} (LANG)",
                code=Code.MISMATCH,
            )

    @property
    def folder(self) -> str:
        return os.path.join(self.layout.results, SUITES, self.name)

    def file(self, name: str) -> str:
        return os.path.join(self.suite, name)

    def output(self, name: str) -> str:
        return os.path.join(self.folder, name)

    def translation(self, system: str) -> str:
        return self.output(f"{system}.{self.layout.lang}")

    @property
    def contrastive(self) -> bool:
        return int(self.summary["contrastive_groups"]) > 0

    def output_paths(self) -> List[str]:
        names = [os.path.basename(self.translation(s)) for s in SUITE_SYSTEMS] + ["evaluation.json", "evaluation.txt"]
        if self.contrastive:
            names += [f"voita.{s}.{ext}" for s in SUITE_SYSTEMS for ext in ("scores", "json")]
        return [self.output(n) for n in [*names, SUMMARY]]


def record_of(suite: SuiteStageOptions) -> StageRecord:
    return StageRecord(os.path.join(suite.layout.results, ".stage", f"suite-{suite.name}.json"), "suite")


def suite_fingerprint(suite: SuiteStageOptions, dtype: str) -> Dict[str, Any]:
    """The suite's files (as its import recorded them, checked by read_suite), each system's
    checkpoint, sentencepiece model and decoding (make translate's fingerprint, on the suite's
    documents), the bootstrap and the project's version."""
    from contextual_mt.pipeline.translate_stage import system_fingerprint

    t = _translate_options(suite)
    files = {
        "source": suite.file(f"source.{SOURCE_LANG}"),
        "docids": suite.file("docids"),
        "reference": suite.file(f"examples.{suite.summary['language']}"),  # not read: no gold target context
    }
    return {
        "suite": suite.summary["files"],
        "systems": {s: system_fingerprint(t, s, files, dtype, model_decoding(t, s)) for s in SUITE_SYSTEMS},
        "bootstrap": suite.bootstrap,
        "version": project_version(),
    }


def run_suite_stage(suite: SuiteStageOptions) -> Dict[str, Any]:
    """Translate, evaluate and rank the suite with the pair's models (nothing when its record is
    current); returns what ``summary.json`` holds."""
    from contextual_mt.inference.precision import resolve_dtype

    require_data(suite.layout)
    dtype = resolve_dtype(suite.dtype, suite.cpu)
    fp = suite_fingerprint(suite, dtype)  # every checkpoint checked before anything is loaded
    record = record_of(suite)
    if record.current(fp):
        print(f"{suite.name}: up to date ({record.path})", file=sys.stderr)
        with open(suite.output(SUMMARY), encoding="utf-8") as f:
            return json.load(f)
    with outputs(*suite.output_paths(), record.path, directories=[suite.folder]):
        _translate(suite, dtype)
        evaluation = _evaluate(suite)
        ranked = _rank(suite, dtype) if suite.contrastive else {}
        summary = _summary(suite, evaluation, ranked)
        atomic_write_text(suite.output(SUMMARY), json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        record.save(fp, suite.output_paths(), transactional=True)
    return summary


def _translate_options(suite: SuiteStageOptions) -> TranslateStageOptions:
    return TranslateStageOptions(
        suite.layout.lang, suite.layout.root, SUITE_SYSTEMS, suite.decoding, suite.cpu, suite.dtype
    )


def _translate(suite: SuiteStageOptions, dtype: str) -> None:
    from commandkit.documents import check_line_count, read_docids
    from commandkit.text import read_lines
    from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
    from contextual_mt.backends.fairseq.translator import DocumentTranslator

    source, docids = suite.file(f"source.{SOURCE_LANG}"), suite.file("docids")
    sources, ids = read_lines(source), read_docids(docids)
    check_line_count(ids, docids, len(sources), source)
    for system in SUITE_SYSTEMS:
        model = DocumentModel.load(
            FairseqModelOptions(suite.layout.checkpoint(system), spm=suite.layout.spm, cpu=suite.cpu, dtype=dtype)
        )
        print(f"{suite.name}: translating {len(sources)} sentences with the {system} model in {dtype}", file=sys.stderr)
        # make translate's decoding of that model: the preset's output-length bound included
        decoding = model_decoding(_translate_options(suite), system)
        hyps = DocumentTranslator(model, options=decoding).translate(
            sources, ids, None, progress=suite.progress, source_name=source
        )
        atomic_write_lines(suite.translation(system), hyps)


def _evaluate(suite: SuiteStageOptions) -> Dict[str, Any]:
    from contextual_mt.testsets.evaluate import EvaluateOptions, evaluate_testset, format_testset_table

    result = evaluate_testset(
        EvaluateOptions(
            suite.file("manifest.jsonl"),
            tuple(suite.translation(s) for s in SUITE_SYSTEMS),
            docids=suite.file("docids"),
            output=suite.output("evaluation.json"),
            bootstrap=suite.bootstrap,
        )
    )
    table = format_testset_table(result)
    atomic_write_text(suite.output("evaluation.txt"), table + "\n")
    print(f"{suite.name}: generative evaluation (ctxpro's rule)\n{table}")
    return result


def _rank(suite: SuiteStageOptions, dtype: str) -> Dict[str, Dict]:
    """Each system's contrastive summary on the suite's variants (``contrastive --format voita``)."""
    from contextual_mt.backends.fairseq.model import FairseqModelOptions
    from contextual_mt.contrastive.evaluate import ContrastiveOptions, run_contrastive

    ranked = {}
    for system in SUITE_SYSTEMS:
        stem = suite.output(f"voita.{system}")
        ranked[system] = run_contrastive(
            ContrastiveOptions(
                FairseqModelOptions(
                    suite.layout.checkpoint(system),
                    spm=suite.layout.spm,
                    data=suite.layout.bin,
                    cpu=suite.cpu,
                    dtype=dtype,
                ),
                "voita",
                suite.file("voita.json"),
                stem + ".scores",
                stem + ".json",
                detokenize="no",  # ctxpro's text is not tokenized
                progress=suite.progress,
            )
        )
    return ranked


def _summary(suite: SuiteStageOptions, evaluation: Dict, ranked: Dict[str, Dict]) -> Dict[str, Any]:
    """What ``make table`` shows of the suite: per system and phenomenon, % correct with its
    interval, the context model against the sentence model (paired bootstrap), contrastive accuracy."""
    names = {os.path.basename(suite.translation(s)): s for s in SUITE_SYSTEMS}
    systems: Dict[str, Any] = {}
    for name, r in evaluation["systems"].items():
        systems[names[name]] = {
            "overall": _cell(r["overall"]),
            "phenomena": {p: _cell(e) for p, e in r["phenomena"].items()},
            "contrastive": ranked[names[name]]["accuracy"] if names[name] in ranked else None,
        }
    comparisons = {
        names[c["b"]]: {
            "against": names[c["a"]],
            "overall": c["overall"],
            "phenomena": c["phenomena"],
        }
        for c in evaluation["comparisons"]
    }
    return {
        "suite": suite.name,
        "folder": suite.suite,
        "format": suite.summary["format"],
        "category": suite.summary["category"],
        "language": suite.summary["language"],
        "pair": suite.layout.lang,
        "examples": suite.summary["examples"],
        "contrastive_groups": suite.summary["contrastive_groups"],
        "bootstrap": evaluation["bootstrap"],
        "confidence": evaluation["confidence"],
        "systems": systems,
        "comparisons": comparisons,
    }


def _cell(entry: Dict) -> Dict[str, Any]:
    return {"groups": entry["groups"], "correct": entry["correct"], "correct_ci": entry["correct_ci"]}


def suite_summaries(results: str) -> List[Dict[str, Any]]:
    """The summaries of the suites run for a pair (``results/xx/suites/*/summary.json``), by name."""
    folder = os.path.join(results, SUITES)
    if not os.path.isdir(folder):
        return []
    found = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name, SUMMARY)
        if os.path.isfile(path):
            found.append(path)
    return [_read_summary(p) for p in found]


def _read_summary(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
    except json.JSONDecodeError as e:
        raise InputError(
            f"{path}:{e.lineno}: not JSON ({e.msg}); run 'make testset SUITE=...' again", code=Code.FORMAT
        ) from None
    if not isinstance(summary, dict) or not isinstance(summary.get("systems"), dict) or "suite" not in summary:
        raise InputError(f"{path}: not a suite's summary; run 'make testset SUITE=...' again", code=Code.FORMAT)
    summary["path"] = path
    return summary
