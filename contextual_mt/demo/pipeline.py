"""The offline demo: an ordinary language-pair run of the study on a synthetic EN-FR corpus.

``make demo`` writes the demo corpus (planted phenomena: pronoun gender, formality, lexical
choice; ``demo.corpus``) to ``WORK/corpus`` and runs the study's own stages on it as the pair
``fr`` under ``WORK`` (the folders of ``make ... LANG=fr WORK=demo``): data (``TEXT=WORK/corpus``),
train (the ``demo`` preset, sentence and context models, on CPU), translate (the three systems),
score, and contrastive on the planted contrastive set. Then it prints BLEU and the accuracy on
the planted tokens per phenomenon. Every stage keeps its records, so a re-run does nothing and
an interrupted one resumes. The stages run without LANG (``make pcxmi``, ``report``,
``muda-eval``, ``attribute``, ``testset``) use this pair (``pipeline.layout.eval_paths``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, Iterator, Optional, Sequence

from commandkit.options import option
from commandkit.outputs import atomic_write_text
from commandkit.text import read_lines
from contextual_mt.demo.corpus import PLANTED_SET, TEST_DOCS, TRAIN_DOCS, VALID_DOCS
from contextual_mt.errors import Code, InputError, given
from contextual_mt.pipeline.layout import DEMO_LANG, MODELS, PairLayout, demo_corpus

if TYPE_CHECKING:  # the stages import torch and fairseq: loaded when the demo runs
    from contextual_mt.pipeline.train import TrainOptions
    from contextual_mt.pipeline.translate_stage import TranslateStageOptions

LANG = DEMO_LANG
PRESET = "demo"  # pipeline/presets.py: the models, their epochs and the vocabulary
WORKDIR = "demo"  # the demo's folder (`make demo`'s WORK)


@dataclass
class DemoOptions:
    """``contextual-mt demo`` (``run_demo``): the corpus's size and the models' epochs."""

    workdir: str = option(default=WORKDIR)
    train_docs: int = option(default=TRAIN_DOCS)
    sentence_epochs: Optional[int] = option(help="default: the demo preset's")  # None: the preset's
    context_epochs: Optional[int] = option(help="default: the demo preset's")
    test_docs: int = TEST_DOCS  # not on the command line
    valid_docs: int = VALID_DOCS


def demo_layout(workdir: str) -> PairLayout:
    """The demo pair's folders: ``WORK/data/fr``, ``WORK/checkpoints/fr/MODEL``, ``WORK/results/fr``."""
    return PairLayout(LANG, str(workdir))


def demo_results(workdir: str) -> str:
    """The demo's own figures (BLEU, the planted tokens, the planted contrastive set): ``WORK/results/fr/demo.json``."""
    return os.path.join(demo_layout(workdir).results, "demo.json")


def _log(msg: str) -> None:
    print(f"[demo] {msg}", flush=True)


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the training runs are children)."""
    return sum(
        u.ru_utime + u.ru_stime
        for u in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )


@contextmanager
def _timed(times: Dict[str, Dict[str, float]], stage: str) -> Iterator[None]:
    """Where the demo's time goes: wall and CPU seconds of ``stage``, into ``times``."""
    wall, cpu = time.time(), _cpu_seconds()
    yield
    times[stage] = {"wall_s": round(time.time() - wall, 1), "cpu_s": round(_cpu_seconds() - cpu, 1)}


def _quiet_logs() -> None:
    import logging

    logging.getLogger("fairseq").setLevel(logging.WARNING)
    logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # the demo text is tokenized on purpose


def _refuse_old_layout(work: Path) -> None:
    for old in ("data-bin", "spm", "outputs"):  # the folders of the demo before it was a pair run
        if (work / old).is_dir():
            raise InputError(
                f"{work}: written by an earlier version of the demo (it holds {old}/); "
                "remove it or give another --workdir",
                code=Code.MISMATCH,
            )


def write_corpus(
    work: Path, train_docs: int = TRAIN_DOCS, test_docs: int = TEST_DOCS, valid_docs: int = VALID_DOCS
) -> Path:
    """The demo corpus and its planted contrastive set, once (``WORK/corpus``)."""
    from contextual_mt.demo.contrastive_set import write_planted_contrastive
    from contextual_mt.demo.corpus import generate_demo_data

    corpus = Path(demo_corpus(str(work)))
    if not (corpus / "stats.json").exists():
        _log(f"writing the demo corpus to {corpus}")
        generate_demo_data(str(corpus), train_docs=train_docs, valid_docs=valid_docs, test_docs=test_docs)
    if not (corpus / PLANTED_SET).exists():
        write_planted_contrastive(str(corpus), str(corpus / PLANTED_SET))
    return corpus


def train_side_by_side(
    options: Sequence[TrainOptions], then: Optional[Dict[str, Callable[[], None]]] = None
) -> Dict[str, float]:
    """The demo's models trained at once, each in its own process with the demo preset's one CPU
    thread: on two cores the pair takes the time of the longer run, not of both (one thread each
    also makes the weights the same on every machine). ``then[model]`` runs as soon as that model
    is trained, while the other still trains (the sentence model's translation: it ends first).
    The context model's progress is shown; a failure is raised once the other run has ended,
    whose checkpoints and record are kept, so a re-run trains only what is left. Returns the wall
    seconds of each model's training and of each ``then`` (``MODEL_then``)."""
    from contextual_mt.pipeline.train import train_model

    walls: Dict[str, float] = {}

    def train(training: TrainOptions) -> None:
        start = time.time()
        train_model(training)
        walls[training.model] = round(time.time() - start, 1)
        if then and training.model in then:
            start = time.time()
            then[training.model]()
            walls[f"{training.model}_then"] = round(time.time() - start, 1)

    with ThreadPoolExecutor(max_workers=len(options)) as pool:
        runs = [pool.submit(train, training) for training in options]
    for run in runs:
        run.result()
    return walls


def _translate_on_one_thread(translate: TranslateStageOptions, systems: Sequence[str]) -> None:
    """The translate stage for ``systems`` with one torch thread: the other core trains."""
    import torch

    from contextual_mt.pipeline.translate_stage import translate_systems

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        translate_systems(dataclasses.replace(translate, systems=tuple(systems), progress=False))
    finally:
        torch.set_num_threads(threads)


def run_demo(options: DemoOptions) -> Dict:
    """``contextual-mt demo``: every stage on the demo pair; prints the table, returns the figures."""
    from contextual_mt.demo.planted import planted_accuracy, read_planted
    from contextual_mt.pipeline.contrastive_stage import ContrastiveStageOptions, run_stage
    from contextual_mt.pipeline.prepare import DataOptions, prepare_data
    from contextual_mt.pipeline.presets import get_preset
    from contextual_mt.pipeline.score_stage import ScoreStageOptions, score_systems
    from contextual_mt.pipeline.train import TrainOptions
    from contextual_mt.pipeline.translate_stage import TranslateStageOptions, translate_systems

    _quiet_logs()
    start = time.time()
    work = Path(options.workdir)
    _refuse_old_layout(work)
    layout = demo_layout(str(work))
    # every option checked before the corpus is written or a model trained
    translate = TranslateStageOptions(LANG, str(work))
    scoring = ScoreStageOptions(LANG, str(work))
    contrastive = ContrastiveStageOptions(
        LANG,
        (f"voita:{os.path.join(demo_corpus(str(work)), PLANTED_SET)}",),
        str(work),
        detokenize="no",
        progress=False,
    )
    epochs = {"sentence": options.sentence_epochs, "context": options.context_epochs}  # None: the preset's
    training = [
        TrainOptions(
            LANG, name, preset=PRESET, root=str(work), gpus=0, max_epoch=epochs[name], progress=name == "context"
        )
        for name in MODELS
    ]
    times: Dict[str, Dict[str, float]] = {}
    with _timed(times, "corpus"):
        corpus = write_corpus(work, options.train_docs, options.test_docs, options.valid_docs)
    _log("data stage: sentencepiece and binarized data")
    with _timed(times, "data"):
        prepare_data(
            DataOptions(
                lang=LANG,
                output=layout.data,
                text=str(corpus),
                vocab_size=given(get_preset(PRESET).vocab_size, "the demo preset's vocab_size"),
            )
        )
    _log(
        "train stage: the sentence and the context model side by side, one thread each "
        f"(logs: {os.path.join(layout.checkpoints('MODEL'), 'train.log')})"
    )
    with _timed(times, "train"):  # and the sentence model's translation, once it is trained
        walls = train_side_by_side(
            training, then={"sentence": lambda: _translate_on_one_thread(translate, ["sentence"])}
        )
    times["train"].update({f"{name}_wall_s": wall for name, wall in walls.items()})
    _log(
        "translate stage: the context model, with its own previous translations and with the references "
        "as context (the sentence model's translation was made beside the context model's training)"
    )
    with _timed(times, "translate"):
        translate_systems(translate)  # up to date for the sentence model: the other two
    with _timed(times, "score"):
        scores = score_systems(scoring)["systems"]
    planted = read_planted(str(corpus / "test.planted.jsonl"))
    results: Dict = {}
    for name in MODELS:
        s = scores[name]
        results[name] = {
            "bleu": s["bleu"]["score"],
            "d_bleu": s["d_bleu"]["score"],
            "bleu_signature": s["bleu"]["signature"],
            "planted": planted_accuracy(read_lines(layout.translation(name)), planted),
            "output": layout.translation(name),
        }
    _log("contrastive stage: the planted contrastive set")
    with _timed(times, "contrastive"):
        table = next(iter(run_stage(contrastive).values()))
    results["contrastive"] = {
        system: {"accuracy": r["accuracy"], "groups": table["groups"], "by_phenomenon": r["by"].get("phenomenon", {})}
        for system, r in table.items()
        if isinstance(r, dict)
    }
    results["seconds"] = round(time.time() - start, 1)
    results["time"] = times
    atomic_write_text(demo_results(str(work)), json.dumps(results, indent=2) + "\n")
    print(format_demo_table(results))
    return results


def run_demo_first(needed: str, workdir: str = WORKDIR) -> None:
    """A later step on the demo pair (``make pcxmi``, ``report``, ``muda-eval`` without LANG;
    ``make cadec-demo``) reads ``needed``, which the demo makes: the demo runs first when it is not
    there yet (``make demo``'s defaults), as it does when run by hand."""
    if not os.path.isfile(needed):
        _log(f"{needed} not found: running the demo first")
        run_demo(DemoOptions(workdir))


def format_demo_table(results: Dict) -> str:
    phenomena = sorted(results["sentence"]["planted"])
    head = f"{'model':10s} {'BLEU':>6s} {'d-BLEU':>7s} " + " ".join(f"{p:>15s}" for p in phenomena)
    rows = [head, "-" * len(head)]
    for name in MODELS:
        r = results[name]
        cells = " ".join(f"{r['planted'][p]['accuracy']:14.1f}%" for p in phenomena)
        rows.append(f"{name:10s} {r['bleu']:6.2f} {r['d_bleu']:7.2f} {cells}")
    total = results["sentence"]["planted"]
    rows.append(
        "planted tokens: "
        + ", ".join(f"{p} {total[p]['total']}" for p in phenomena)
        + "; accuracy = right context-dependent word"
    )
    contrastive = results.get("contrastive")
    if contrastive:
        groups = next(iter(contrastive.values()))["groups"]
        rows += [
            "",
            f"contrastive set ({groups} groups: the reference against its planted tokens swapped)",
            f"{'model':16s} {'all':>6s} " + " ".join(f"{p:>15s}" for p in phenomena),
        ]
        for label, r in contrastive.items():
            rows.append(
                f"{label:16s} {r['accuracy']:6.3f} "
                + " ".join(f"{r['by_phenomenon'].get(p, float('nan')):15.3f}" for p in phenomena)
            )
    rows.append(f"{results['seconds']} s in all")
    return "\n".join(rows)
