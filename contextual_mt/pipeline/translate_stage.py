"""``make translate``: each of the study's three systems (``systems``) translates the test set.
Each translation records what it was made from (checkpoint, sentencepiece model, test set and
decoding options, by content) in ``results/xx/translate.json``, written with the translation as
soon as that system is done: an interrupted run keeps the systems it finished, and a re-run only
translates what is missing or stale."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass, replace
from typing import Dict, Optional, Sequence

from commandkit.documents import check_line_count
from commandkit.options import group, option
from commandkit.outputs import atomic_write_lines, outputs
from commandkit.text import file_sha256
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.decoding import DECODING_HELP, DecodingOptions, beam_option, lenpen_option
from contextual_mt.inference.model_args import max_tokens_option, progress_option
from contextual_mt.pipeline.layout import SYSTEMS, PairLayout, require_data
from contextual_mt.pipeline.stage_options import dtype_option, root_option
from contextual_mt.pipeline.stages import record as stage_record
from contextual_mt.pipeline.systems import TRANSLATE_RECORD, read_translations_record, system_inputs, test_files
from contextual_mt.stage_record import write_record

# 64, not DecodingOptions' 32: the study's translations were made with it (the batch changes which
# sentences share a padded batch); `pipeline translate --batch-size` reads it from here
STUDY_BATCH_SIZE = 64


def study_decoding() -> DecodingOptions:
    return DecodingOptions(batch_size=STUDY_BATCH_SIZE)


@dataclass
class StudyDecodingArgs:
    """The decoding options ``pipeline translate`` shows: its ``DecodingOptions`` (the others at
    their defaults; ``--decoding`` given: its mode)."""

    beam: int = beam_option()
    lenpen: float = lenpen_option()
    batch_size: int = option(default=STUDY_BATCH_SIZE)
    max_tokens: Optional[int] = max_tokens_option()
    decoding: Optional[str] = option(help=DECODING_HELP + " (make: DECODING)")

    def options(self) -> DecodingOptions:
        made = DecodingOptions(
            beam=self.beam, lenpen=self.lenpen, batch_size=self.batch_size, max_tokens=self.max_tokens
        )
        return made if self.decoding is None else replace(made, decoding=self.decoding)


@dataclass
class TranslateStageOptions:
    lang: str = option(required=True)
    root: str = root_option()
    systems: Sequence[str] = option(nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    # checked when made
    decoding: DecodingOptions = group(StudyDecodingArgs, make=StudyDecodingArgs.options)
    cpu: bool = option(action="store_true", default=False)
    dtype: str = dtype_option()  # of the models (inference.precision): auto is float16 on a recent GPU
    progress: bool = progress_option()

    def __post_init__(self) -> None:
        from contextual_mt.inference.precision import check_dtype

        check_dtype(self.dtype)
        self.layout = PairLayout(self.lang, self.root)
        unknown = [s for s in self.systems if s not in SYSTEMS]
        if unknown or not self.systems:
            raise InputError(
                f"--systems {' '.join(self.systems)}: expected some of {', '.join(SYSTEMS)}", code=Code.OPTION_VALUE
            )


def model_decoding(translate: TranslateStageOptions, model: str) -> DecodingOptions:
    """The decoding options of ``model``'s systems: the stage's, with the output-length bound of
    the preset it was trained with (``Preset.max_len``) where the stage keeps the decoder's default."""
    from contextual_mt.pipeline.train import done_record

    default = DecodingOptions()
    # as the train record says (a model trained before presets had a bound: the decoder's default)
    bound = (done_record(translate.layout, model).read() or {}).get("max_len")
    if not (isinstance(bound, (list, tuple)) and len(bound) == 2):
        return translate.decoding
    if (translate.decoding.max_len_a, translate.decoding.max_len_b) != (default.max_len_a, default.max_len_b):
        return translate.decoding  # asked for
    return replace(translate.decoding, max_len_a=float(bound[0]), max_len_b=int(bound[1]))


def system_fingerprint(
    translate: TranslateStageOptions, system: str, files: Dict[str, str], dtype: str, decoding: DecodingOptions
) -> Dict:
    """``dtype``: the one the model runs in (``auto`` decided), with the decoding options: a
    float16 translation is not the float32 one (``score`` compares the rest with the inputs)."""
    return {
        **system_inputs(translate.layout, system, files),
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

    require_data(options.layout)
    files = test_files(options.layout)
    done = stage_record("translate", options.layout)
    record_path = os.path.join(options.layout.results, TRANSLATE_RECORD)  # per system: how it was made
    record = read_translations_record(options.layout)
    todo = {}
    dtype = resolve_dtype(options.dtype, options.cpu)
    decodings = {m: model_decoding(options, m) for m in {SYSTEMS[s][0] for s in options.systems}}
    for system in options.systems:  # every model checked (system_fingerprint) before any decoding
        fp = system_fingerprint(options, system, files, dtype, decodings[SYSTEMS[system][0]])
        out = options.layout.translation(system)
        if (
            record.get(system, {}).get("fingerprint") == fp
            and os.path.exists(out)
            and file_sha256(out) == record[system].get("output")
        ):
            print(f"{system}: up to date ({out})", file=sys.stderr)
        else:
            todo[system] = fp
    if not todo:
        return {s: options.layout.translation(s) for s in options.systems}
    sources, ids = read_lines(files["source"]), read_docids(files["docids"])
    refs = read_lines(files["reference"])
    check_line_count(ids, files["docids"], len(sources), files["source"])
    if len(refs) != len(sources):
        raise InputError(
            f"{files['reference']}: has {len(refs)} lines but {files['source']} has {len(sources)}",
            code=Code.LINE_COUNT,
        )
    loaded: Dict[str, DocumentTranslator] = {}
    with outputs(*[options.layout.translation(s) for s in todo], record_path, done.path):
        pass  # every output writable, checked before anything is translated
    done.forget()  # the stage is under way until every system is in place again
    for system, fp in todo.items():
        model, context = SYSTEMS[system]
        if model not in loaded:  # context and context-gold share one loaded model
            loaded[model] = DocumentTranslator(
                DocumentModel.load(
                    FairseqModelOptions(
                        options.layout.checkpoint(model), spm=options.layout.spm, cpu=options.cpu, dtype=dtype
                    )
                ),
                options=decodings[model],
            )
        how = "" if model == "sentence" else f" ({'reference' if context == 'gold' else 'its own'} target context)"
        print(
            f"{system}: translating {len(sources)} sentences with the {model} model{how} in {dtype}",
            file=sys.stderr,
        )
        hyps = loaded[model].translate(
            sources, ids, refs if context == "gold" else None, progress=options.progress, source_name=files["source"]
        )
        # each system is kept as soon as it is translated (its file and its line of translate.json, in
        # one transaction): an interrupted run loses only the system under way, and a rerun
        # translates what is missing or made from something else (the fingerprint)
        with outputs(options.layout.translation(system), record_path):
            atomic_write_lines(options.layout.translation(system), hyps)
            warn_if_degenerate(options.layout.translation(system), hyps, sources)
            # file_sha256 reads the staged file: what will appear when the transaction commits
            record[system] = {
                "fingerprint": fp,
                "output": file_sha256(options.layout.translation(system)),
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
            **{options.layout.translation(s): r.get("output") for s, r in record.items()},
            record_path: file_sha256(record_path),
        },
    )
    return {s: options.layout.translation(s) for s in options.systems}
