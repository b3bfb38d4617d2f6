"""``make translate`` and ``make score``: the study's three systems on the test set.

``sentence`` (the sentence-level model), ``context`` (the context model with its own previous
translations as target context) and ``context-gold`` (the context model with the references as
target context). Each translation records what it was made from (checkpoint, sentencepiece
model, test set and decoding options, by content) in ``results/xx/translate.json``; a re-run
only translates what is missing or stale. ``scores.json`` holds BLEU, chrF, d-BLEU (and COMET
and Doc-COMET with a model) of every system.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass
from typing import Dict, Optional, Sequence, Tuple

from contextual_mt.errors import ContextualMTError, check_option
from contextual_mt.pipeline.layout import SOURCE_LANG, SYSTEMS, PairLayout, require_data
from contextual_mt.pipeline.stages import record as stage_record
from contextual_mt.stage_record import read_record, write_record
from commandkit.documents import check_line_count
from commandkit.outputs import atomic_write_lines, atomic_write_text, outputs
from commandkit.text import file_sha256

TRANSLATE_RECORD = "translate.json"


@dataclass
class SystemsOptions:
    lang: str
    root: str = "."
    systems: Sequence[str] = tuple(SYSTEMS)
    beam: int = 5
    lenpen: float = 1.0
    # 64, not DecodingOptions' 32: the study's translations were made with it (the batch changes
    # which sentences share a padded batch); `pipeline translate --batch-size` reads it from here
    batch_size: int = 64
    max_tokens: Optional[int] = None
    cpu: bool = False
    dtype: str = "auto"  # of the models (inference.precision): auto is float16 on a recent GPU
    progress: bool = True
    decoding_mode: Optional[str] = None  # predicted context: auto | sequential | parallel (None: DecodingOptions')

    def __post_init__(self) -> None:
        from contextual_mt.inference.precision import check_dtype
        from contextual_mt.inference.decoding import DecodingOptions

        check_dtype(self.dtype)
        self.layout = PairLayout(self.lang, self.root)
        unknown = [s for s in self.systems if s not in SYSTEMS]
        if unknown or not self.systems:
            raise ContextualMTError(f"--systems {' '.join(self.systems)}: expected some of {', '.join(SYSTEMS)}")
        how = {} if self.decoding_mode is None else {"decoding": self.decoding_mode}
        self.decoding = DecodingOptions(beam=self.beam, lenpen=self.lenpen, batch_size=self.batch_size,
                                        max_tokens=self.max_tokens, **how)  # validates them


def _test_files(layout: PairLayout) -> Dict[str, str]:
    files = {"source": layout.text("test", SOURCE_LANG), "reference": layout.text("test", layout.lang),
             "docids": layout.text("test", "docids")}
    for path in files.values():
        if not os.path.isfile(path):
            raise ContextualMTError(f"{path}: not found; prepare the data first ('make data LANG={layout.lang} ...')")
    return files


def finished_checkpoint(layout: PairLayout, model: str) -> Tuple[str, str]:
    """The model's checkpoint and its content hash, when its training finished on the data now
    in ``data/xx`` and the file is still the one it wrote."""
    from contextual_mt.pipeline.train import data_fingerprint, done_record

    path = layout.checkpoint(model)
    done = done_record(layout, model).read()
    if not os.path.isfile(path) or done is None:
        raise ContextualMTError(f"{path}: no finished training; train it first "
                                f"('make train LANG={layout.lang} MODEL={model}')")
    if done.get("fingerprint", {}).get("data") != data_fingerprint(layout):
        raise ContextualMTError(f"{path}: trained on other data than {layout.bin} holds now; train it again "
                                f"('make train LANG={layout.lang} MODEL={model} OVERWRITE=1')")
    sha = file_sha256(path)
    if done.get("checkpoint_sha256") != sha:
        raise ContextualMTError(f"{path}: changed since its training finished; train it again "
                                f"('make train LANG={layout.lang} MODEL={model} OVERWRITE=1')")
    return path, sha


def system_inputs(layout: PairLayout, system: str, files: Dict[str, str]) -> Dict:
    """What a system's translation is made from, by content (without the decoding options)."""
    model, context = SYSTEMS[system]
    ckpt, sha = finished_checkpoint(layout, model)
    return {"checkpoint": sha, "spm": file_sha256(layout.spm),
            "dictionaries": {n: file_sha256(os.path.join(os.path.dirname(ckpt), n))
                             for n in sorted(os.listdir(os.path.dirname(ckpt))) if n.startswith("dict.")},
            "source": file_sha256(files["source"]), "docids": file_sha256(files["docids"]),
            "target_context": file_sha256(files["reference"]) if context == "gold" else "predicted"}


def system_fingerprint(o: SystemsOptions, system: str, files: Dict[str, str], dtype: str) -> Dict:
    """``dtype``: the one the model runs in (``auto`` decided), with the decoding options: a
    float16 translation is not the float32 one (``score`` compares the rest with the inputs)."""
    return {**system_inputs(o.layout, system, files),
            # what does not change the output (how it is computed) is left out
            "decoding": {**{k: v for k, v in asdict(o.decoding).items()
                            if k not in ("incremental", "free_batching", "decoding", "window")}, "dtype": dtype}}


def translate_systems(options: SystemsOptions) -> Dict[str, str]:
    """Translate the test set with each system that is missing or stale; returns system -> file."""
    from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
    from contextual_mt.inference.precision import resolve_dtype
    from contextual_mt.backends.fairseq.translator import DocumentTranslator
    from contextual_mt.inference.model_health import warn_if_degenerate
    from commandkit.documents import read_docids
    from commandkit.text import read_lines

    o = options
    require_data(o.layout)
    files = _test_files(o.layout)
    done = stage_record("translate", o.layout)
    record_path = os.path.join(o.layout.results, TRANSLATE_RECORD)  # per system: how it was made
    record = read_record(record_path) or {}
    todo = {}
    dtype = resolve_dtype(o.dtype, o.cpu)
    for system in o.systems:  # every model checked (system_fingerprint) before any decoding
        fp = system_fingerprint(o, system, files, dtype)
        out = o.layout.translation(system)
        if record.get(system, {}).get("fingerprint") == fp and os.path.exists(out) \
                and file_sha256(out) == record[system].get("output"):
            print(f"{system}: up to date ({out})", file=sys.stderr)
        else:
            todo[system] = fp
    if not todo:
        return {s: o.layout.translation(s) for s in o.systems}
    sources, ids = read_lines(files["source"]), read_docids(files["docids"])
    refs = read_lines(files["reference"])
    check_line_count(ids, files["docids"], len(sources), files["source"])
    if len(refs) != len(sources):
        raise ContextualMTError(f"{files['reference']}: has {len(refs)} lines but {files['source']} has {len(sources)}")
    loaded: Dict[str, DocumentTranslator] = {}
    with outputs(*[o.layout.translation(s) for s in todo], record_path, done.path):
        for system, fp in todo.items():
            model, context = SYSTEMS[system]
            if model not in loaded:  # context and context-gold share one loaded model
                loaded[model] = DocumentTranslator(DocumentModel.load(FairseqModelOptions(
                    o.layout.checkpoint(model), spm=o.layout.spm, cpu=o.cpu, dtype=dtype)), options=o.decoding)
            how = "" if model == "sentence" else f" ({'reference' if context == 'gold' else 'its own'} target context)"
            print(f"{system}: translating {len(sources)} sentences with the {model} model{how} in {dtype}",
                  file=sys.stderr)
            hyps = loaded[model].translate(sources, ids, refs if context == "gold" else None,
                                           progress=o.progress, source_name=files["source"])
            atomic_write_lines(o.layout.translation(system), hyps)
            warn_if_degenerate(o.layout.translation(system), hyps, sources)
            # file_sha256 reads the staged file: what will appear when the transaction commits
            record[system] = {"fingerprint": fp, "output": file_sha256(o.layout.translation(system)),
                              "decoding": hyps.record}
            if hyps.rounds is not None:
                r = hyps.rounds
                print(f"{system}: parallel decoding, {r.rounds} rounds, {r.retranslated} sentences translated "
                      "again", file=sys.stderr)
        write_record(record_path, record, transactional=True)
        done.save({s: r.get("fingerprint") for s, r in record.items()},
                  {**{o.layout.translation(s): r.get("output") for s, r in record.items()},
                   record_path: file_sha256(record_path)}, transactional=True)
    return {s: o.layout.translation(s) for s in o.systems}


@dataclass
class ScoreStageOptions:
    lang: str
    root: str = "."
    systems: Sequence[str] = tuple(SYSTEMS)
    comet_model: Optional[str] = None
    comet_batch_size: int = 16
    doc_comet_context: int = 2  # metrics.DOC_COMET_CONTEXT (a test checks): not imported, it loads numpy

    def __post_init__(self) -> None:
        self.layout = PairLayout(self.lang, self.root)
        unknown = [s for s in self.systems if s not in SYSTEMS]
        if unknown or not self.systems:
            raise ContextualMTError(f"--systems {' '.join(self.systems)}: expected some of {', '.join(SYSTEMS)}")
        check_option("--comet-batch-size", self.comet_batch_size, minimum=1, integer=True)
        check_option("--doc-comet-context", self.doc_comet_context, minimum=1, integer=True)


def score_systems(options: ScoreStageOptions) -> Dict:
    """``results/xx/scores.json``: every system's metrics, with the hashes of what was scored
    (a re-run with the same translations and references does nothing)."""
    from contextual_mt.metrics import comet_results, load_comet, score
    from commandkit.documents import read_docids
    from commandkit.text import read_lines

    o = options
    files = _test_files(o.layout)
    hyp_files = {s: o.layout.translation(s) for s in o.systems}
    record = read_record(os.path.join(o.layout.results, TRANSLATE_RECORD)) or {}
    for system, path in hyp_files.items():
        if not os.path.isfile(path):
            raise ContextualMTError(f"{path}: not found; translate first ('make translate LANG={o.lang}')")
        made = record.get(system, {})
        if made.get("output") != file_sha256(path):
            raise ContextualMTError(f"{path}: not the file `make translate` wrote (edited, or not recorded in "
                                    f"{TRANSLATE_RECORD}); translate again ('make translate LANG={o.lang}')")
        now = system_inputs(o.layout, system, files)
        was = {k: v for k, v in made.get("fingerprint", {}).items() if k != "decoding"}
        if was != now:
            changed = ", ".join(k for k in sorted(set(now) | set(was)) if now.get(k) != was.get(k))
            raise ContextualMTError(f"{path}: made from another {changed} than there is now; translate again "
                                    f"('make translate LANG={o.lang}')")
    inputs = {name: file_sha256(path) for name, path in {**files, **hyp_files}.items()}
    settings = {"comet_model": o.comet_model, "inputs": inputs}
    if o.comet_model:  # only then: scores.json written without COMET stays up to date
        settings["doc_comet_context"] = o.doc_comet_context
    done = stage_record("score", o.layout)
    if done.current(settings) is not None:
        print(f"scores: up to date ({o.layout.scores})", file=sys.stderr)
        return read_record(o.layout.scores)
    with outputs(o.layout.scores, done.path):
        comet = load_comet(o.comet_model) if o.comet_model else None  # loaded once, before any scoring
        srcs, refs, ids = read_lines(files["source"]), read_lines(files["reference"]), read_docids(files["docids"])
        result: Dict = {"systems": {}, "settings": settings}
        for system, path in hyp_files.items():
            hyps = read_lines(path)
            if len(hyps) != len(refs):
                raise ContextualMTError(f"{path}: has {len(hyps)} lines but {files['reference']} has {len(refs)}")
            r = score(hyps, refs, ids)
            if comet is not None:
                r.update(comet_results(comet, srcs, hyps, refs, ids, o.comet_model, o.comet_batch_size,
                                       o.doc_comet_context))
                for metric in ("comet", "doc_comet"):
                    r.get(metric, {}).pop("segments", None)
            r["files"] = {"hyp": path, "ref": files["reference"], "docids": files["docids"]}
            result["systems"][system] = r
        atomic_write_text(o.layout.scores, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        done.save(settings, [o.layout.scores], transactional=True)
    return result


def format_scores(result: Dict) -> str:
    comet = [(m, title) for m, title in (("comet", "COMET"), ("doc_comet", "Doc-COMET"))
             if any(m in r for r in result["systems"].values())]
    head = f"{'system':14s} {'BLEU':>6s} {'chrF':>6s} {'d-BLEU':>7s}" + "".join(f" {t:>9s}" for _, t in comet)
    rows = [head]
    for name, r in result["systems"].items():
        row = f"{name:14s} {r['bleu']['score']:6.2f} {r['chrf']['score']:6.2f} {r['d_bleu']['score']:7.2f}"
        row += "".join(f" {r[m]['score']:9.4f}" if m in r else f" {'-':>9s}" for m, _ in comet)
        rows.append(row)
    signatures = {r["doc_comet"]["signature"] for r in result["systems"].values() if "doc_comet" in r}
    return "\n".join(rows + sorted(signatures))  # the same for every system: printed once
