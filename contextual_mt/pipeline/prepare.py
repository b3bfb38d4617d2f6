"""The data stage of the per-language-pair study (``make data LANG=xx``): one corpus -> text
splits, a joint sentencepiece model and fairseq-binarized data for ``--task document_translation``.

``prepare_data(DataOptions(lang="fr", output="data/fr", ted="ted_talks.tar.gz"))`` writes into
``output``:

* ``{train,valid,test}.{en,xx,docids}``: detokenized text, one sentence per line, one document
  id per line (each document one contiguous run);
* ``spm.model``, ``spm.vocab``: one sentencepiece model for both languages, trained on
  ``train.en`` + ``train.xx``;
* ``bin/``: ``fairseq-preprocess --joined-dictionary`` of the sentencepiece-encoded splits, the
  dictionaries holding every piece of ``spm.model`` (also those the training text never
  produces: else they would be ``<unk>`` when translating) and ``<brk>``, ``<mask>``, and
  ``{split}.en-xx.docids`` beside the binaries (where ``--task document_translation`` reads them);
* ``summary.json``: the input, per split documents / sentences / dropped rows / tokens, the
  sentencepiece settings, the detokenization, the fingerprint, and the seconds of each step.

The stage runs in three steps (text, spm, bin), each written to a scratch folder inside
``output`` and renamed into place when it is complete, then recorded with a fingerprint of the
inputs and options in ``output/.stage/data.json`` (the stage's record). A re-run with the same inputs and options
skips the finished steps (a finished step whose files were changed or removed since is redone,
with the later ones); a run with other inputs or options into the same folder is refused unless
``overwrite``. An error leaves the finished steps and nothing half-written. The options, the
fingerprint and that record live in ``data_plan.py``; this module runs the steps.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from typing import Any, Callable, Dict, List, Sequence, Tuple

from commandkit.errors import shown
from commandkit.outputs import atomic_write_lines, atomic_write_text
from commandkit.text import read_lines
from contextual_mt.backends.fairseq.codec import model_pieces
from contextual_mt.errors import Code, InputError
from contextual_mt.pipeline import corpora
from contextual_mt.pipeline.corpora import SOURCE_LANG, SPLITS, Split
from contextual_mt.pipeline.data_plan import (
    ENCODE_CHUNK,
    PADDING_FACTOR,
    SCRATCH,
    STEPS,
    SUMMARY,
    DataOptions,
    DataState,
    Plan,
    clear_outputs,
    default_workers,
    load_state,
    lock_folder,
    make_plan,
    old_output_names,
    remove_path,
    remove_state,
    state_exists,
    unlock_folder,
)
from contextual_mt.stage_record import stale_error
from contextual_mt.symbols import CONTEXT_SYMBOLS, FILLER
from contextual_mt.symbols import FAIRSEQ_SPECIALS as SPECIALS

DICTIONARY_FILE = "dict.txt"  # in the scratch folder of the encoded splits: fairseq-preprocess --srcdict


# ============================================================================ helpers
def _log(progress: bool, msg: str) -> None:
    if progress:
        print(f"[data] {msg}", file=sys.stderr, flush=True)


def _write_lines(path: str, lines: Sequence[str]) -> None:
    """commandkit's atomic write, refusing (as bad input) a sentence that holds a line break."""
    for line in lines:
        if "\n" in line or "\r" in line:
            raise InputError(f"{path}: a sentence holds a line break ({line[:60]!r}...)", code=Code.FORMAT)
    atomic_write_lines(path, lines, transactional=False)


def _documents(ids: Sequence[str]) -> int:
    return sum(1 for i, d in enumerate(ids) if i == 0 or d != ids[i - 1])


class _Bar:
    """A tqdm bar when ``progress``, else nothing."""

    def __init__(self, progress: bool, total: int, desc: str):
        self.bar = None
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total, desc=f"[data] {desc}", unit="sent", file=sys.stderr, mininterval=1.0, leave=False
            )

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ============================================================================ the steps
def _scratch(plan: Plan, step: str) -> str:
    path = os.path.join(plan.out, SCRATCH, step)
    remove_path(path)
    os.makedirs(path)
    return path


def _move_into_place(plan: Plan, scratch: str, names: Sequence[str]) -> None:
    for name in names:
        target = os.path.join(plan.out, name)
        remove_path(target)
        os.replace(os.path.join(scratch, name), target)
    remove_path(scratch)


def _step_text(plan: Plan, progress: bool) -> Tuple[Dict[str, Any], Dict[str, float]]:
    options, lang = plan.options, plan.options.lang
    t0 = time.time()
    info: Dict[str, Any] = {}
    if options.kind == "ted":
        _log(progress, f"reading the TED corpus {options.input_path} ({SOURCE_LANG}-{lang})")
        corpus = corpora.read_ted(options.input_path, lang, detokenize=False)
    elif options.kind == "iwslt":
        sets = plan.iwslt_sets
        assert sets is not None  # the plan resolves them for an IWSLT input
        _log(
            progress,
            f"reading the IWSLT folder {options.input_path} ({SOURCE_LANG}-{lang}; valid: "
            f"{','.join(sets['valid'])}, test: {','.join(sets['test'])})",
        )
        corpus = corpora.read_iwslt(options.input_path, lang, options.iwslt_dev or "dev2010", options.iwslt_test)
    else:
        _log(progress, f"reading the text files in {options.input_path}")
        corpus = corpora.read_text(options.input_path, lang)
    seconds = {"read": time.time() - t0}
    if options.kind == "ted":
        total = sum(2 * len(s) for s in corpus.values())
        _log(progress, f"Moses-detokenizing {total} sentences with {options.workers} worker(s)")
        t1 = time.time()
        bar = _Bar(progress, total, "detokenize")
        langs = corpora.moses_detokenize(corpus, lang, workers=options.workers, progress=bar.update)
        bar.close()
        seconds["detokenize"] = time.time() - t1
        info["detokenized"] = {
            "tool": "sacremoses MosesDetokenizer",
            "languages": langs,
            "note": "the TED corpus text is Moses-tokenized; each side was detokenized "
            "with the detokenizer of its base language",
        }
    else:
        seconds["detokenize"] = 0.0
        info["detokenized"] = None
        info["note"] = (
            "IWSLT text is not Moses-tokenized: used as it is, not detokenized"
            if options.kind == "iwslt"
            else "text files used as they are, not detokenized"
        )
    scratch = _scratch(plan, "text")
    splits: Dict[str, Any] = {}
    for split in SPLITS:
        data: Split = corpus[split]
        _write_lines(os.path.join(scratch, f"{split}.{SOURCE_LANG}"), data.src)
        _write_lines(os.path.join(scratch, f"{split}.{lang}"), data.tgt)
        _write_lines(os.path.join(scratch, f"{split}.docids"), data.docids)
        splits[split] = {
            "documents": _documents(data.docids),
            "sentences": len(data.src),
            "dropped": data.dropped,
            "words": {SOURCE_LANG: sum(len(s.split()) for s in data.src), lang: sum(len(s.split()) for s in data.tgt)},
        }
    _move_into_place(plan, scratch, plan.text_names())
    seconds["read"] = time.time() - t0 - seconds["detokenize"]  # reading + writing the text
    _log(
        progress,
        "text: "
        + ", ".join(
            f"{s} {splits[s]['sentences']} sentences in {splits[s]['documents']} "
            f"documents ({splits[s]['dropped']} dropped)"
            for s in SPLITS
        ),
    )
    return {"splits": splits, "input": info}, seconds


def _spm_sample(plan: Plan) -> Tuple[List[str], int]:
    lines: List[str] = []
    for lang in (SOURCE_LANG, plan.options.lang):
        lines += read_lines(os.path.join(plan.out, f"train.{lang}"))
    total = len(lines)
    lines = [line for line in lines if line.strip()]
    if len(lines) > plan.options.input_sentence_size:  # a uniform random sample, in corpus order
        keep = sorted(random.Random(plan.options.seed).sample(range(len(lines)), plan.options.input_sentence_size))
        lines = [lines[i] for i in keep]
    return lines, total


def _step_spm(plan: Plan, progress: bool) -> Tuple[Dict[str, Any], Dict[str, float]]:
    import sentencepiece as spm

    options = plan.options
    t0 = time.time()
    sample, total = _spm_sample(plan)
    _log(
        progress,
        f"training a {options.spm_type} sentencepiece model ({options.vocab_size} pieces) on "
        f"{len(sample)} of the {total} sentences of train.{SOURCE_LANG} + train.{options.lang}",
    )
    scratch = _scratch(plan, "spm")
    settings: Dict[str, Any] = {
        "model_type": options.spm_type,
        "vocab_size": options.vocab_size,
        "character_coverage": options.coverage,
        "hard_vocab_limit": False,
    }
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sample),
            model_prefix=os.path.join(scratch, "spm"),
            input_sentence_size=0,
            shuffle_input_sentence=False,
            num_threads=options.workers,
            minloglevel=2,
            **settings,
        )
    except (RuntimeError, OSError) as e:
        why = str(e).strip().splitlines()[-1] if str(e).strip() else str(e)
        if "vocab" in why.lower():  # e.g. fewer pieces asked for than the corpus has characters
            raise InputError(
                f"{shown('--vocab-size')} {options.vocab_size}: sentencepiece cannot build it from "
                f"train.{SOURCE_LANG} + train.{options.lang} ({why})",
                code=Code.OPTION_VALUE,
            ) from None
        raise InputError(
            f"{os.path.join(plan.out, 'train.' + SOURCE_LANG)}: sentencepiece training failed ({why})", code=Code.MODEL
        ) from None
    pieces = spm.SentencePieceProcessor(model_file=os.path.join(scratch, "spm.model")).get_piece_size()
    _move_into_place(plan, scratch, ["spm.model", "spm.vocab"])
    stats = {
        **settings,
        "pieces": pieces,
        "input_sentence_size": options.input_sentence_size,
        "shuffle_input_sentence": True,
        "seed": options.seed,
        "training_sentences": len(sample),
        "trained_on": [f"train.{SOURCE_LANG}", f"train.{options.lang}"],
        "sampling": "a uniform random sample (seed) of the non-blank lines of both files when they hold "
        "more than input_sentence_size",
    }
    _log(progress, f"spm: {pieces} pieces")
    return stats, {"spm_train": time.time() - t0}


def _encode(plan: Plan, sp, dest: str, progress: bool) -> Tuple[Dict[str, Dict[str, int]], Counter]:
    """Encode the splits into ``dest``; the token counts per split and side, and the count of
    each token of the training text (both sides: the joined dictionary's counts)."""
    lang, workers = plan.options.lang, plan.options.workers
    jobs = [(split, side) for split in SPLITS for side in (SOURCE_LANG, lang)]
    texts = {job: read_lines(os.path.join(plan.out, f"{job[0]}.{job[1]}")) for job in jobs}
    bar = _Bar(progress, sum(len(t) for t in texts.values()), "encode")
    tokens: Dict[str, Dict[str, int]] = {split: {} for split in SPLITS}
    counts: Counter = Counter()
    for (split, side), lines in texts.items():
        count = 0
        with open(os.path.join(dest, f"{split}.{side}"), "w", encoding="utf-8") as f:
            for start in range(0, len(lines), ENCODE_CHUNK):
                chunk = sp.encode(lines[start : start + ENCODE_CHUNK], out_type=str, num_threads=workers)
                for pieces in chunk:
                    count += len(pieces)
                    line = " ".join(pieces)
                    if split == "train":
                        counts.update(line.split())  # split as fairseq reads the line
                    f.write(line)
                    f.write("\n")
                bar.update(len(chunk))
        tokens[split][side] = count
    bar.close()
    return tokens, counts


def _dictionary_lines(sp, counts: Counter) -> Tuple[List[str], int]:
    """The joined dictionary, every piece of the model in it whatever the data: the one fairseq
    builds from the training text (counts descending, ties in code point order), the pieces that
    text never produced after it (count 0, in the model's order), padded as fairseq pads (to a
    multiple of 8 with madeupwordNNNN). Where the text produces every piece, it is fairseq's.
    Also returns how many pieces the text never produced."""
    seen = [(w, n) for w, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])) if w not in SPECIALS]
    unseen = [(p, 0) for p in model_pieces(sp) if p not in counts and p not in SPECIALS]
    entries = seen + unseen
    entries += [(f"{FILLER}{k:04d}", 0) for k in range(-(len(SPECIALS) + len(entries)) % PADDING_FACTOR)]
    return [f"{w} {n}" for w, n in entries], len(unseen)


def _binarize(plan: Plan, encoded: str, dest: str) -> List[str]:
    """fairseq-preprocess of the encoded splits with the dictionary written beside them."""
    lang = plan.options.lang
    cmd = [
        sys.executable,
        "-m",
        "fairseq_cli.preprocess",
        "-s",
        SOURCE_LANG,
        "-t",
        lang,
        "--joined-dictionary",
        "--srcdict",
        os.path.join(encoded, DICTIONARY_FILE),
        "--trainpref",
        os.path.join(encoded, "train"),
        "--validpref",
        os.path.join(encoded, "valid"),
        "--testpref",
        os.path.join(encoded, "test"),
        "--destdir",
        dest,
        "--workers",
        str(plan.options.workers),
    ]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
        raise InputError(
            f"{dest}: fairseq-preprocess failed (exit {proc.returncode}): "
            + (lines[-1].strip() if lines else "no output"),
            code=Code.MODEL,
        )
    return cmd


def _step_bin(plan: Plan, progress: bool) -> Tuple[Dict[str, Any], Dict[str, float]]:
    import sentencepiece as spm

    from contextual_mt.symbols import add_context_symbols

    lang, pair = plan.options.lang, f"{SOURCE_LANG}-{plan.options.lang}"
    scratch = _scratch(plan, "bin")
    encoded, binary = os.path.join(scratch, "encoded"), os.path.join(scratch, "bin")
    os.makedirs(encoded)
    t0 = time.time()
    _log(progress, "encoding the splits with spm.model")
    sp = spm.SentencePieceProcessor(model_file=os.path.join(plan.out, "spm.model"))
    tokens, counts = _encode(plan, sp, encoded, progress)
    dictionary, unseen = _dictionary_lines(sp, counts)
    atomic_write_lines(os.path.join(encoded, DICTIONARY_FILE), dictionary, transactional=False)
    t1 = time.time()
    _log(
        progress,
        f"binarizing with fairseq-preprocess --joined-dictionary --srcdict (every piece of spm.model; "
        f"{plan.options.workers} workers)",
    )
    cmd = _binarize(plan, encoded, binary)
    for side in (SOURCE_LANG, lang):
        add_context_symbols(os.path.join(binary, f"dict.{side}.txt"))
    for split in SPLITS:
        shutil.copyfile(os.path.join(plan.out, f"{split}.docids"), os.path.join(binary, f"{split}.{pair}.docids"))
    with open(os.path.join(binary, f"dict.{SOURCE_LANG}.txt"), encoding="utf-8") as f:
        dict_size = sum(1 for _ in f)
    remove_path(encoded)
    _move_into_place(plan, scratch, ["bin"])
    shown = {encoded: "ENCODED", binary: "bin"}  # the scratch paths, as the reader knows them
    command = ["fairseq-preprocess"] + [
        next((arg.replace(k, v, 1) for k, v in shown.items() if arg.startswith(k)), arg) for arg in cmd[3:]
    ]
    stats = {
        "tokens": tokens,
        "dictionary_size": dict_size,
        "pieces_not_in_train": unseen,
        "command": command,
        "encoded": "ENCODED/{split}.{lang}: the splits encoded with spm.model, and ENCODED/dict.txt: the "
        "joined dictionary, every piece of spm.model in it (removed after binarizing)",
    }
    _log(
        progress,
        f"bin: dictionary of {dict_size} symbols: every piece of spm.model ({unseen} of them never in "
        f"the training text), fairseq's fillers, {' '.join(CONTEXT_SYMBOLS)}",
    )
    return stats, {"encode": t1 - t0, "binarize": time.time() - t1}


_STEP_FUNCS: Dict[str, Callable[[Plan, bool], Tuple[Dict[str, Any], Dict[str, float]]]] = {
    "text": _step_text,
    "spm": _step_spm,
    "bin": _step_bin,
}


# ============================================================================ the summary
def _summary(plan: Plan, state: DataState) -> Dict[str, Any]:
    options, lang = plan.options, plan.options.lang
    text, spm_stats, bin_stats = (state.finished_step(s)["stats"] for s in STEPS)
    splits = {}
    for split in SPLITS:
        s = text["splits"][split]
        splits[split] = {
            "documents": s["documents"],
            "sentences": s["sentences"],
            "dropped": s["dropped"],
            "tokens": bin_stats["tokens"][split],
            "words": s["words"],
        }
    seconds: Dict[str, float] = {}
    for step in STEPS:
        seconds.update({k: round(v, 2) for k, v in state.finished_step(step)["seconds"].items()})
    pair = f"{SOURCE_LANG}-{lang}"
    input_info = {
        "kind": options.kind,
        "path": os.path.abspath(options.input_path),
        "files": [os.path.abspath(f) for f in plan.files],
        "sha256": plan.settings["input_sha256"],
        **text["input"],
    }
    if plan.iwslt_sets:
        input_info["iwslt_sets"] = plan.iwslt_sets
    return {
        "source_lang": SOURCE_LANG,
        "target_lang": lang,
        "input": input_info,
        "splits": splits,
        "dropped_rows": "rows whose source or target was missing (TED __NULL__ / _ _ NULL _ _, or blank); "
        "words: whitespace-separated, tokens: sentencepiece pieces",
        "spm": {"model": "spm.model", "vocab": "spm.vocab", **spm_stats},
        "bin": {
            "path": "bin",
            "dictionary": [f"bin/dict.{SOURCE_LANG}.txt", f"bin/dict.{lang}.txt"],
            "joined_dictionary": True,
            "dictionary_size": bin_stats["dictionary_size"],
            "context_symbols": list(CONTEXT_SYMBOLS),
            "pieces_not_in_train": bin_stats["pieces_not_in_train"],
            "docids": [f"bin/{split}.{pair}.docids" for split in SPLITS],
            "command": bin_stats["command"],
        },
        "fingerprint": plan.fingerprint,
        "options": plan.settings,
        "versions": state.data.get("versions", {}),
        "seconds": seconds,
    }


# ============================================================================ the stage
def prepare_data(options: DataOptions, progress: bool = True) -> Dict[str, Any]:
    """Prepare ``options.output`` (see the module's doc) and return the summary. Finished steps
    of an earlier run with the same inputs and options are skipped."""
    return prepare_data_steps(options, progress)[0]


def prepare_data_steps(options: DataOptions, progress: bool = True) -> Tuple[Dict[str, Any], List[str]]:
    """``prepare_data``, and the steps this run did (none: the folder was up to date)."""
    plan = make_plan(options)
    created = not os.path.exists(plan.out)
    top = plan.out  # the outermost folder this run creates: what a bad input removes
    while not os.path.exists(os.path.dirname(top)) and os.path.dirname(top) != top:
        top = os.path.dirname(top)
    plan.created_root = top if created else None
    try:
        os.makedirs(plan.out, exist_ok=True)
    except OSError as e:
        raise InputError(
            f"{options.output}: cannot create the output folder ({e.strerror})", code=Code.CANNOT_WRITE
        ) from None
    lock = lock_folder(plan.out)
    try:
        return _prepare_locked(plan, progress, created)
    finally:
        unlock_folder(lock)


def _prepare_locked(plan: Plan, progress: bool, created: bool) -> Tuple[Dict[str, Any], List[str]]:
    options, out = plan.options, plan.out
    state, why = load_state(plan)
    if options.overwrite:
        if state_exists(out) or any(os.path.lexists(os.path.join(out, n)) for n in plan.all_outputs()):
            _log(progress, f"--overwrite: removing the earlier outputs in {out}")
        clear_outputs(plan, old_output_names(plan))
        state = None
    elif state is None:
        present = [n for n in plan.all_outputs() if os.path.lexists(os.path.join(out, n))]
        if why:
            raise stale_error(options.output, why, "use --overwrite to replace it, or another --output")
        if present:
            raise InputError(
                f"{options.output}: already holds {', '.join(present[:4])}"
                + (", ..." if len(present) > 4 else "")
                + " not written by this command; use --overwrite to replace them, "
                "or another --output",
                code=Code.CANNOT_WRITE,
            )
    if state is None:
        state = DataState(plan)
        remove_state(out)  # an unusable one (e.g. of a run that finished no step)
    remove_path(os.path.join(out, SCRATCH))  # what an interrupted run left
    ran: List[str] = []
    try:
        redo = False
        for step in STEPS:
            if not redo and state.done(step):
                changed = state.stale(step)
                if changed is None:
                    _log(progress, f"{step}: done already (same inputs and options), skipped")
                    continue
                _log(
                    progress,
                    f"{step}: {os.path.join(out, changed)} was changed or removed since it was "
                    f"written; redoing this step and the later ones",
                )
            if not redo:  # the summary of the earlier outputs no longer holds
                remove_path(os.path.join(out, SUMMARY))
            redo = True
            state.forget(STEPS[STEPS.index(step) :])
            stats, seconds = _STEP_FUNCS[step](plan, progress)
            state.finish(step, stats, seconds)
            ran.append(step)
    except BaseException as e:
        remove_path(os.path.join(out, SCRATCH))
        # a bad input leaves nothing in a folder this run created; an interruption keeps the
        # finished steps for the next run
        if created and isinstance(e, InputError):
            shutil.rmtree(plan.created_root or out, ignore_errors=True)
        elif not state.data["steps"]:  # nothing finished: leave nothing behind
            remove_state(out)
            if created:
                shutil.rmtree(out, ignore_errors=True)
        raise
    remove_path(os.path.join(out, SCRATCH))
    summary = _summary(plan, state)
    summary_path = os.path.join(out, SUMMARY)
    text = json.dumps(summary, indent=1, ensure_ascii=False) + "\n"
    old = None
    try:
        with open(summary_path, encoding="utf-8") as f:
            old = json.load(f)
    except (OSError, ValueError):
        pass
    if ran or old != json.loads(text):
        atomic_write_text(summary_path, text, transactional=False)
    if ran or not state.data.get("outputs"):  # (none: the record of a stage under way)
        # the stage finished: its record lists its outputs, the dictionaries the models are built with
        state.save([os.path.join("bin", f"dict.{side}.txt") for side in (SOURCE_LANG, options.lang)])
    _log(progress, f"done: {out} (summary: {summary_path})")
    return summary, ran


__all__ = ["DataOptions", "default_workers", "prepare_data", "prepare_data_steps"]
