"""``make translate``: each of the study's three systems (``systems``) translates the test set.
Each translation records what it was made from (checkpoint, sentencepiece model, test set and
decoding options, by content) in ``results/xx/translate.json``, written with the translation as
soon as that system is done: an interrupted run keeps the systems it finished, and a re-run only
translates what is missing or stale."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass, field, replace
from typing import Dict, Sequence

from commandkit.documents import check_line_count
from commandkit.outputs import atomic_write_lines, outputs
from commandkit.text import file_sha256
from contextual_mt.errors import ContextualMTError
from contextual_mt.inference.decoding import DecodingOptions
from contextual_mt.pipeline.layout import SYSTEMS, PairLayout, require_data
from contextual_mt.pipeline.stages import record as stage_record
from contextual_mt.pipeline.systems import TRANSLATE_RECORD, read_translations_record, system_inputs, test_files
from contextual_mt.stage_record import write_record

# 64, not DecodingOptions' 32: the study's translations were made with it (the batch changes which
# sentences share a padded batch); `pipeline translate --batch-size` reads it from here
STUDY_BATCH_SIZE = 64


def study_decoding() -> DecodingOptions:
    return DecodingOptions(batch_size=STUDY_BATCH_SIZE)


@dataclass
class TranslateStageOptions:
    lang: str
    root: str = "."
    systems: Sequence[str] = tuple(SYSTEMS)
    decoding: DecodingOptions = field(default_factory=study_decoding)  # checked when made
    cpu: bool = False
    dtype: str = "auto"  # of the models (inference.precision): auto is float16 on a recent GPU
    progress: bool = True

    def __post_init__(self) -> None:
        from contextual_mt.inference.precision import check_dtype

        check_dtype(self.dtype)
        self.layout = PairLayout(self.lang, self.root)
        unknown = [s for s in self.systems if s not in SYSTEMS]
        if unknown or not self.systems:
            raise ContextualMTError(f"--systems {' '.join(self.systems)}: expected some of {', '.join(SYSTEMS)}")


def model_decoding(o: TranslateStageOptions, model: str) -> DecodingOptions:
    """The decoding options of ``model``'s systems: the stage's, with the output-length bound of
    the preset it was trained with (``Preset.max_len``) where the stage keeps the decoder's default."""
    from contextual_mt.pipeline.train import done_record

    default = DecodingOptions()
    # as the train record says (a model trained before presets had a bound: the decoder's default)
    bound = (done_record(o.layout, model).read() or {}).get("max_len")
    if not (isinstance(bound, (list, tuple)) and len(bound) == 2):
        return o.decoding
    if (o.decoding.max_len_a, o.decoding.max_len_b) != (default.max_len_a, default.max_len_b):
        return o.decoding  # asked for
    return replace(o.decoding, max_len_a=float(bound[0]), max_len_b=int(bound[1]))


def system_fingerprint(
    o: TranslateStageOptions, system: str, files: Dict[str, str], dtype: str, decoding: DecodingOptions
) -> Dict:
    """``dtype``: the one the model runs in (``auto`` decided), with the decoding options: a
    float16 translation is not the float32 one (``score`` compares the rest with the inputs)."""
    return {
        **system_inputs(o.layout, system, files),
        # what does not change the output (how it is computed) is left out
        "decoding": {
            **{
                k: v
                for k, v in asdict(decoding).items()
                if k not in ("incremental", "free_batching", "decoding", "window")
            },
            "dtype": dtype,
        },
    }


def translate_systems(options: TranslateStageOptions) -> Dict[str, str]:
    """Translate the test set with each system that is missing or stale; returns system -> file."""
    from commandkit.documents import read_docids
    from commandkit.text import read_lines
    from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
    from contextual_mt.backends.fairseq.translator import DocumentTranslator
    from contextual_mt.inference.model_health import warn_if_degenerate
    from contextual_mt.inference.precision import resolve_dtype

    o = options
    require_data(o.layout)
    files = test_files(o.layout)
    done = stage_record("translate", o.layout)
    record_path = os.path.join(o.layout.results, TRANSLATE_RECORD)  # per system: how it was made
    record = read_translations_record(o.layout)
    todo = {}
    dtype = resolve_dtype(o.dtype, o.cpu)
    decodings = {m: model_decoding(o, m) for m in {SYSTEMS[s][0] for s in o.systems}}
    for system in o.systems:  # every model checked (system_fingerprint) before any decoding
        fp = system_fingerprint(o, system, files, dtype, decodings[SYSTEMS[system][0]])
        out = o.layout.translation(system)
        if (
            record.get(system, {}).get("fingerprint") == fp
            and os.path.exists(out)
            and file_sha256(out) == record[system].get("output")
        ):
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
        pass  # every output writable, checked before anything is translated
    done.forget()  # the stage is under way until every system is in place again
    for system, fp in todo.items():
        model, context = SYSTEMS[system]
        if model not in loaded:  # context and context-gold share one loaded model
            loaded[model] = DocumentTranslator(
                DocumentModel.load(
                    FairseqModelOptions(o.layout.checkpoint(model), spm=o.layout.spm, cpu=o.cpu, dtype=dtype)
                ),
                options=decodings[model],
            )
        how = "" if model == "sentence" else f" ({'reference' if context == 'gold' else 'its own'} target context)"
        print(
            f"{system}: translating {len(sources)} sentences with the {model} model{how} in {dtype}",
            file=sys.stderr,
        )
        hyps = loaded[model].translate(
            sources, ids, refs if context == "gold" else None, progress=o.progress, source_name=files["source"]
        )
        # each system is kept as soon as it is translated (its file and its line of translate.json, in
        # one transaction): an interrupted run loses only the system under way, and a rerun
        # translates what is missing or made from something else (the fingerprint)
        with outputs(o.layout.translation(system), record_path):
            atomic_write_lines(o.layout.translation(system), hyps)
            warn_if_degenerate(o.layout.translation(system), hyps, sources)
            # file_sha256 reads the staged file: what will appear when the transaction commits
            record[system] = {
                "fingerprint": fp,
                "output": file_sha256(o.layout.translation(system)),
                "decoding": hyps.record,
            }
            write_record(record_path, record, transactional=True)
        if hyps.rounds is not None:
            r = hyps.rounds
            print(
                f"{system}: parallel decoding, {r.rounds} rounds, {r.retranslated} sentences translated again",
                file=sys.stderr,
            )
    done.save(
        {s: r.get("fingerprint") for s, r in record.items()},
        {
            **{o.layout.translation(s): r.get("output") for s, r in record.items()},
            record_path: file_sha256(record_path),
        },
    )
    return {s: o.layout.translation(s) for s in o.systems}
