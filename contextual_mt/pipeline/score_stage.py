"""``make score``: BLEU, chrF, d-BLEU (and COMET and Doc-COMET with a model) of every system's
translation (``systems``) in ``results/xx/scores.json``, made again when a translation or the
references change.

``hyps`` (``make score HYPS="..."``, the systems ``make muda-eval`` compares too) scores these
files instead, another system's output among them, named as ``muda eval`` names them (the file
name without ``.test.xx``); a document-level one (JSONL or one document per line) is aligned to
the references (``contextual_mt.system_outputs``) and its alignment statistics are kept beside
its scores (``alignment``), where ``make table`` finds them."""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence

from commandkit.errors import shown
from commandkit.options import option
from commandkit.outputs import atomic_write_text, outputs
from commandkit.text import check_input_file, file_sha256
from contextual_mt.errors import Code, InputError, check_number
from contextual_mt.pipeline.layout import SYSTEMS, PairLayout
from contextual_mt.pipeline.make_names import under_make
from contextual_mt.pipeline.stages import record as stage_record
from contextual_mt.pipeline.systems import TRANSLATE_RECORD, read_translations_record, system_inputs, test_files
from contextual_mt.stage_record import read_record
from docalign.links import summary


@dataclass
class ScoreStageOptions:
    lang: str = option(required=True)
    root: str = option(default=".")
    systems: Sequence[str] = option(nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    comet_model: Optional[str] = option(help="COMET model name or checkpoint path (unbabel-comet)")
    comet_batch_size: int = option(default=16)
    doc_comet_context: int = 2  # metrics.DOC_COMET_CONTEXT (a test checks): not imported, it loads numpy
    # system outputs scored instead of the systems' translations (make: HYPS)
    hyps: Sequence[str] = option(
        nargs="+",
        help="score these system outputs instead of --systems' translations (another system's too, named by "
        "its file name without .test.xx, as muda eval names it); a document-level output (JSONL or one "
        "document per line) is aligned to the references, its alignment statistics beside its scores",
    )

    def __post_init__(self) -> None:
        self.layout = PairLayout(self.lang, self.root)
        unknown = [s for s in self.systems if s not in SYSTEMS]
        if unknown or not self.systems:
            raise InputError(
                f"--systems {' '.join(self.systems)}: expected some of {', '.join(SYSTEMS)}", code=Code.OPTION_VALUE
            )
        self.hyps = tuple(self.hyps or ())
        names = [hyp_name(h, self.lang) for h in self.hyps]
        clash = [n for n in names if names.count(n) > 1 or n in ("source", "reference", "docids")]
        if clash:
            raise InputError(
                f"{shown('--hyps')} {' '.join(self.hyps)}: two files would be system {clash[0]!r} "
                "(a system is named by its file name without .test.xx); rename one",
                code=Code.OUTPUT_IS_INPUT,
            )
        check_number("--comet-batch-size", self.comet_batch_size, minimum=1, integer=True)
        check_number("--doc-comet-context", self.doc_comet_context, minimum=1, integer=True)


def score_systems(options: ScoreStageOptions) -> Dict:
    """``results/xx/scores.json``: every system's metrics, with the hashes of what was scored
    (a re-run with the same translations and references does nothing)."""
    from commandkit.documents import read_docids
    from commandkit.text import read_lines
    from contextual_mt.metrics import comet_results, load_comet, score
    from contextual_mt.system_outputs import read_hypotheses

    files = test_files(options.layout)
    hyp_files = {s: options.layout.translation(s) for s in options.systems}
    if options.hyps:
        hyp_files = {hyp_name(h, options.lang): h for h in options.hyps}
    record = read_translations_record(options.layout)
    own = {os.path.realpath(options.layout.translation(s)): s for s in SYSTEMS}
    for path in hyp_files.values():
        system = own.get(os.path.realpath(path))
        if system is None:  # another system's output: scored as it is
            check_input_file(path, "system output (HYPS)" if under_make() else "system output (--hyps)")
            continue
        if not os.path.isfile(path):
            raise InputError(
                f"{path}: not found; translate first ('make translate LANG={options.lang}')", code=Code.NOT_FOUND
            )
        made = record.get(system, {})
        if made.get("output") != file_sha256(path):
            raise InputError(
                f"{path}: not the file `make translate` wrote (edited, or not recorded in "
                f"{TRANSLATE_RECORD}); translate again ('make translate LANG={options.lang}')",
                code=Code.MISMATCH,
            )
        now = system_inputs(options.layout, system, files)
        was = {k: v for k, v in made.get("fingerprint", {}).items() if k != "decoding"}
        if was != now:
            changed = ", ".join(k for k in sorted(set(now) | set(was)) if now.get(k) != was.get(k))
            raise InputError(
                f"{path}: made from another {changed} than there is now; translate again "
                f"('make translate LANG={options.lang}')",
                code=Code.MISMATCH,
            )
    inputs = {name: file_sha256(path) for name, path in {**files, **hyp_files}.items()}
    settings: Dict[str, Any] = {"comet_model": options.comet_model, "inputs": inputs}
    if options.comet_model:  # only then: scores.json written without COMET stays up to date
        settings["doc_comet_context"] = options.doc_comet_context
    done = stage_record("score", options.layout)
    scores = read_record(options.layout.scores) if done.current(settings) is not None else None
    if scores is not None:
        print(f"scores: up to date ({options.layout.scores})", file=sys.stderr)
        return scores
    with outputs(options.layout.scores, done.path):
        srcs, refs, ids = read_lines(files["source"]), read_lines(files["reference"]), read_docids(files["docids"])
        if len(ids) != len(refs):
            raise InputError(
                f"{files['docids']}: has {len(ids)} lines but {files['reference']} has {len(refs)}",
                code=Code.LINE_COUNT,
            )
        # every output read and checked (a document-level one aligned to the references), then COMET
        read = read_hypotheses(list(hyp_files.values()), ids, files["docids"], refs, align_options(options.lang))
        comet = load_comet(options.comet_model) if options.comet_model else None  # loaded once, before any scoring
        result: Dict = {"systems": {}, "settings": settings}
        for (system, path), h in zip(hyp_files.items(), read, strict=True):
            hyps = h.lines
            r = score(hyps, refs, ids)
            if comet is not None:
                r.update(
                    comet_results(
                        comet,
                        srcs,
                        hyps,
                        refs,
                        ids,
                        options.comet_model or "",
                        options.comet_batch_size,
                        options.doc_comet_context,
                    )
                )
                for metric in ("comet", "doc_comet"):
                    r.get(metric, {}).pop("segments", None)
            r["files"] = {"hyp": path, "ref": files["reference"], "docids": files["docids"]}
            if h.alignment is not None:  # a document-level output, scored through its alignment
                r["alignment"] = h.alignment.statistics
            result["systems"][system] = r
        atomic_write_text(options.layout.scores, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        done.save(settings, [options.layout.scores], transactional=True)
    return result


def hyp_name(path: str, lang: str) -> str:
    """A system output's name in scores.json: as ``muda eval`` names it, without ``.test.xx``."""
    from contextual_mt.pipeline.results_table.read import system_key

    return system_key(os.path.basename(path), lang)


def align_options(lang: str) -> Any:
    """How a document-level output of the pair is aligned: docalign's defaults, with the
    sentence rules of the target language (``pt-br``: spaCy's ``pt``)."""
    from docalign.align import AlignArgs

    return AlignArgs().options(re.split(r"[-_]", lang, maxsplit=1)[0].lower())


def format_scores(result: Dict) -> str:
    comet = [
        (m, title)
        for m, title in (("comet", "COMET"), ("doc_comet", "Doc-COMET"))
        if any(m in r for r in result["systems"].values())
    ]
    width = max([14, *map(len, result["systems"])])  # another system's file name may be long (make score HYPS=)
    head = f"{'system':{width}s} {'BLEU':>6s} {'chrF':>6s} {'d-BLEU':>7s}" + "".join(f" {t:>9s}" for _, t in comet)
    rows = [head]
    for name, r in result["systems"].items():
        row = f"{name:{width}s} {r['bleu']['score']:6.2f} {r['chrf']['score']:6.2f} {r['d_bleu']['score']:7.2f}"
        row += "".join(f" {r[m]['score']:9.4f}" if m in r else f" {'-':>9s}" for m, _ in comet)
        rows.append(row)
    signatures = {r["doc_comet"]["signature"] for r in result["systems"].values() if "doc_comet" in r}
    aligned = [f"{name}: {summary(r['alignment'])}" for name, r in result["systems"].items() if "alignment" in r]
    return "\n".join(rows + sorted(signatures) + aligned)  # the signature is the same for every system: once
