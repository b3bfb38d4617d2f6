"""The offline demo: planted-phenomena corpus -> the study's data and train stages -> scores.

On the demo corpus, runs the same data stage (sentencepiece, binarization) and train stage as
``make all`` (``pipeline.prepare.prepare_data``, ``pipeline.train.train_model``) with the
``demo`` preset (``pipeline/presets.py``): a sentence-level baseline and a contextual model
(target context, dynamic size, CoWord dropout) on CPU. Then translates the test documents with
each model's own previous translations as context, and prints BLEU and accuracy on the planted
tokens per phenomenon; then the accuracy of both models (and of the contextual one without
context) on a contrastive set built from the planted tokens. The corpus is written once and
the stages skip what they finished with the same inputs and settings, so an interrupted run
resumes.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional

from contextual_mt.errors import ContextualMTError
from contextual_mt.pipeline.layout import MODELS, PairLayout
from commandkit.outputs import atomic_write_text
from commandkit.text import read_lines

LANG = "fr"
PRESET = "demo"  # pipeline/presets.py: the models, their epochs and the vocabulary


@dataclass(frozen=True)
class DemoFolders(PairLayout):
    """Where the demo's stages write, as before it ran the study's stages: the prepared data
    (text, ``spm.model``, ``bin/``) in ``WORK/spm``, the models in ``WORK/checkpoints/MODEL``."""

    @property
    def data(self) -> str:
        return os.path.join(self.root, "spm")

    def checkpoints(self, model: str) -> str:
        return os.path.join(self.root, "checkpoints", model)


def demo_bin(workdir: str) -> str:
    """The demo's binarized data (for the benchmarks that read it after `make demo`)."""
    return DemoFolders(LANG, str(workdir)).bin


def _log(msg: str) -> None:
    print(f"[demo] {msg}", flush=True)


def prepare(work: Path, data: Path) -> DemoFolders:
    """The study's data stage on the demo corpus: sentencepiece and binarized data."""
    from contextual_mt.pipeline.prepare import DataOptions, prepare_data
    from contextual_mt.pipeline.presets import get_preset

    if (work / "data-bin").exists():  # the folders of the demo before it ran the study's stages
        raise ContextualMTError(f"{work}: written by an earlier version of the demo (it holds data-bin/); "
                                "remove it or give another --workdir")
    folders = DemoFolders(LANG, str(work))
    _log("training sentencepiece and binarizing")
    prepare_data(DataOptions(lang=LANG, output=folders.data, text=str(data),
                             vocab_size=get_preset(PRESET).vocab_size))
    return folders


def train(folders: DemoFolders, name: str, epochs: Optional[int] = None) -> Path:
    """The study's train stage with the demo preset, on CPU; resumes or skips like ``make train``."""
    from contextual_mt.pipeline.train import TrainOptions, train_model

    train_model(TrainOptions(LANG, name, preset=PRESET, root=folders.root, layout=folders, gpus=0,
                             max_epoch=epochs))
    return Path(folders.checkpoint(name))


def _quiet_logs() -> None:
    import logging

    logging.getLogger("fairseq").setLevel(logging.WARNING)
    logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # the demo text is tokenized on purpose


def run_demo(workdir: str = "demo", train_docs: int = 3000, test_docs: int = 300,
             sentence_epochs: Optional[int] = None, context_epochs: Optional[int] = None, beam: int = 4) -> Dict:
    """``sentence_epochs`` / ``context_epochs``: None for the demo preset's."""
    from contextual_mt.demo.corpus import generate_demo_data
    from contextual_mt.demo.planted import planted_accuracy, read_planted
    from contextual_mt.metrics import score
    from contextual_mt.backends.fairseq.model import FairseqModelOptions
    from contextual_mt.inference.decoding import DecodingOptions
    from contextual_mt.inference.translate import TranslateOptions, translate_files

    _quiet_logs()
    start = time.time()
    work = Path(workdir)
    data = work / "data"
    if not (data / "stats.json").exists():
        _log(f"writing the demo corpus to {data}")
        generate_demo_data(str(data), train_docs=train_docs, test_docs=test_docs)
    folders = prepare(work, data)
    model = Path(folders.spm)
    epochs = {"sentence": sentence_epochs, "context": context_epochs}  # None: the preset's
    refs = read_lines(str(data / "test.fr"))
    planted = read_planted(str(data / "test.planted.jsonl"))
    results = {}
    for name in MODELS:
        ckpt = train(folders, name, epochs[name])
        out = work / "outputs" / f"{name}.test.fr"
        context = " (its own previous translations as context)" if name == "context" else " (no context)"
        _log(f"translating the test documents with the {name} model{context}")
        hyps = translate_files(TranslateOptions(
            FairseqModelOptions(str(ckpt), spm=str(model)), str(data / "test.en"), str(data / "test.docids"), str(out),
            decoding=DecodingOptions(beam=beam, batch_size=64)))
        scores = score(hyps, refs, read_lines(str(data / "test.docids")))
        results[name] = {"bleu": scores["bleu"]["score"], "d_bleu": scores["d_bleu"]["score"],
                         "bleu_signature": scores["bleu"]["signature"],
                         "planted": planted_accuracy(hyps, planted), "output": str(out)}
    results["contrastive"] = planted_contrastive(work, data, model, folders)
    results["seconds"] = round(time.time() - start, 1)
    atomic_write_text(str(work / "results.json"), json.dumps(results, indent=2) + "\n")
    print(format_demo_table(results))
    return results


def run_demo_first(needed: str, workdir: str = "demo") -> None:
    """A later step on the demo's outputs (``make pcxmi``, ``report``, ``muda-eval`` without LANG;
    ``make cadec-demo``) reads ``needed``, which the demo makes: the demo runs first when it is not
    there yet (``make demo``'s defaults), as it does when run by hand."""
    if not os.path.isfile(needed):
        _log(f"{needed} not found: running the demo first")
        run_demo(workdir)


CONTRASTIVE_SYSTEMS = {"sentence": ("sentence", None), "context": ("context", None),
                       "context at 0/0": ("context", 0)}


def planted_contrastive(work: Path, data: Path, spm_model: Path, folders: DemoFolders) -> Dict:
    """Accuracy on the planted contrastive set (written beside the corpus, Voita format) of the
    sentence model, the context model, and the context model with context sizes 0/0."""
    from contextual_mt.contrastive.evaluate import ContrastiveOptions, run_contrastive
    from contextual_mt.demo.contrastive_set import write_planted_contrastive
    from contextual_mt.backends.fairseq.model import FairseqModelOptions

    test_set = data / "test.contrastive.json"
    if not test_set.exists():
        write_planted_contrastive(str(data), str(test_set))
    out = work / "outputs" / "contrastive"
    results = {}
    for label, (name, size) in CONTRASTIVE_SYSTEMS.items():
        _log(f"contrastive set: {label} model")
        stem = label.replace(" ", "_").replace("/", "-")
        # the demo text is tokenized as the models were trained: no detokenization
        summary = run_contrastive(ContrastiveOptions(
            FairseqModelOptions(folders.checkpoint(name), spm=str(spm_model),
                         source_context_size=size, target_context_size=size),
            "voita", str(test_set), str(out / f"{stem}.scores"), str(out / f"{stem}.json"), detokenize="no",
            progress=False))
        results[label] = {"accuracy": summary["accuracy"], "groups": summary["groups"],
                          "by_phenomenon": {k: v["accuracy"] for k, v in summary["by"]["phenomenon"].items()}}
    return results


def format_demo_table(results: Dict) -> str:
    phenomena = sorted(results["sentence"]["planted"])
    head = f"{'model':10s} {'BLEU':>6s} {'d-BLEU':>7s} " + " ".join(f"{p:>15s}" for p in phenomena)
    rows = [head, "-" * len(head)]
    for name in MODELS:
        r = results[name]
        cells = " ".join(f"{r['planted'][p]['accuracy']:14.1f}%" for p in phenomena)
        rows.append(f"{name:10s} {r['bleu']:6.2f} {r['d_bleu']:7.2f} {cells}")
    total = results["sentence"]["planted"]
    rows.append("planted tokens: " + ", ".join(f"{p} {total[p]['total']}" for p in phenomena)
                + "; accuracy = right context-dependent word")
    contrastive = results.get("contrastive")
    if contrastive:
        groups = next(iter(contrastive.values()))["groups"]
        rows += ["", f"contrastive set ({groups} groups: the reference against its planted tokens swapped)",
                 f"{'model':16s} {'all':>6s} " + " ".join(f"{p:>15s}" for p in phenomena)]
        for label, r in contrastive.items():
            rows.append(f"{label:16s} {r['accuracy']:6.3f} "
                        + " ".join(f"{r['by_phenomenon'].get(p, float('nan')):15.3f}" for p in phenomena))
    rows.append(f"{results['seconds']} s in all")
    return "\n".join(rows)
