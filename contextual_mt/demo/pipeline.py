"""The offline demo: planted-phenomena corpus -> sentencepiece -> two models -> scores.

Trains a sentence-level baseline and a contextual model (target context, dynamic size, CoWord
dropout) on CPU, translates the test documents with each model's own previous translations as
context, and prints BLEU and accuracy on the planted tokens per phenomenon; then the accuracy
of both models (and of the contextual one without context) on a contrastive set built from the
planted tokens. Every step is skipped when its output already exists, so an interrupted run
resumes.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

from tqdm import tqdm

from contextual_mt.errors import ContextualMTError
from muda.io import atomic_write_lines, atomic_write_text, read_lines

BIN = Path(sys.executable).parent
USER_DIR = str(Path(__file__).resolve().parent.parent)  # the contextual_mt package

LANGS = ["-s", "en", "-t", "fr"]
ARCH = ["--arch", "contextual_transformer_tiny", "--share-all-embeddings"]
TRAINING = ["--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--lr", "2e-3",
            "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "200",
            "--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1",
            "--dropout", "0.1", "--max-tokens", "4096", "--no-epoch-checkpoints", "--seed", "1",
            "--log-format", "simple", "--log-interval", "100"]
COMMON = [*LANGS, *ARCH, *TRAINING]  # the demo models' options (benchmarks and tests use them too)
MODELS = {
    "sentence": ["--source-context-size", "0", "--target-context-size", "0"],
    "context": ["--source-context-size", "0", "--target-context-size", "3", "--sample-context-size",
                "--coword-dropout", "0.1"],
}


def _log(msg: str) -> None:
    print(f"[demo] {msg}", flush=True)


def train_sentencepiece(data: Path, out: Path, vocab_size: int = 500) -> Path:
    import sentencepiece as spm

    model = out / "spm.model"
    if not model.exists():
        spm.SentencePieceTrainer.train(
            input=f"{data / 'train.en'},{data / 'train.fr'}", model_prefix=str(out / "spm"),
            vocab_size=vocab_size, model_type="bpe", character_coverage=1.0,
            hard_vocab_limit=False, minloglevel=2,
        )
    return model


def encode_splits(data: Path, out: Path, model: Path) -> None:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(model))
    for split in ("train", "valid", "test"):
        for lang in ("en", "fr"):
            target = out / f"{split}.spm.{lang}"
            if not target.exists():
                lines = read_lines(str(data / f"{split}.{lang}"))
                atomic_write_lines(str(target), [" ".join(sp.encode(l, out_type=str)) for l in lines])


def binarize(data: Path, spm_dir: Path, out: Path) -> Path:
    if not (out / "test.en-fr.fr.bin").exists():
        subprocess.run(
            [str(BIN / "fairseq-preprocess"), "-s", "en", "-t", "fr", "--joined-dictionary",
             "--trainpref", str(spm_dir / "train.spm"), "--validpref", str(spm_dir / "valid.spm"),
             "--testpref", str(spm_dir / "test.spm"), "--destdir", str(out), "--workers", "2"],
            check=True, capture_output=True,
        )
        from contextual_mt.symbols import add_context_symbols

        for lang in ("en", "fr"):
            add_context_symbols(str(out / f"dict.{lang}.txt"))
    for split in ("train", "valid", "test"):
        shutil.copy(data / f"{split}.docids", out / f"{split}.en-fr.docids")
    return out


def train_model(name: str, data_bin: Path, save_dir: Path, log_dir: Path, epochs: int,
                model_args: Optional[List[str]] = None) -> Path:
    """fairseq-train with a progress bar over epochs; resumes from checkpoint_last.pt.
    ``model_args``: task, architecture and their options (default: the demo model ``name``)."""
    options = ([*model_args, *LANGS, *TRAINING] if model_args is not None
               else ["--task", "document_translation", *COMMON, *MODELS[name]])
    cmd = [str(BIN / "fairseq-train"), str(data_bin), "--user-dir", USER_DIR, *options,
           "--max-epoch", str(epochs), "--save-dir", str(save_dir), "--cpu", "--no-progress-bar"]
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"train_{name}.log"
    bar = tqdm(total=epochs, desc=f"training {name} model", unit="epoch")
    with open(log_path, "w") as log:
        log.write(" ".join(cmd) + "\n")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in proc.stdout:
            log.write(line)
            if "| valid |" in line or "| valid on" in line:
                loss = line.split("| loss ")[1].split(" ")[0] if "| loss " in line else "?"
                bar.set_postfix(valid_loss=loss, refresh=False)
                bar.update(1)
        proc.wait()
    bar.close()
    if proc.returncode != 0:
        raise ContextualMTError(f"training the {name} model failed; see {log_path}")
    for dict_file in data_bin.glob("dict.*.txt"):  # translate finds them beside the checkpoint
        shutil.copy(dict_file, save_dir / dict_file.name)
    return save_dir / "checkpoint_best.pt"


def _quiet_logs() -> None:
    import logging

    logging.getLogger("fairseq").setLevel(logging.WARNING)
    logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # the demo text is tokenized on purpose


def run_demo(workdir: str = "demo", train_docs: int = 3000, test_docs: int = 300,
             sentence_epochs: int = 8, context_epochs: int = 16, beam: int = 4) -> Dict:
    from contextual_mt.demo.corpus import generate_demo_data
    from contextual_mt.demo.planted import planted_accuracy, read_planted
    from contextual_mt.metrics import score
    from contextual_mt.inference.checkpoint import ModelOptions
    from contextual_mt.inference.translate import DecodingOptions, TranslateOptions, translate_files

    _quiet_logs()
    start = time.time()
    work = Path(workdir)
    data = work / "data"
    if not (data / "stats.json").exists():
        _log(f"writing the demo corpus to {data}")
        generate_demo_data(str(data), train_docs=train_docs, test_docs=test_docs)
    spm_dir = work / "spm"
    spm_dir.mkdir(parents=True, exist_ok=True)
    _log("training sentencepiece and binarizing")
    model = train_sentencepiece(data, spm_dir)
    encode_splits(data, spm_dir, model)
    data_bin = binarize(data, spm_dir, work / "data-bin")
    epochs = {"sentence": sentence_epochs, "context": context_epochs}
    refs = read_lines(str(data / "test.fr"))
    planted = read_planted(str(data / "test.planted.jsonl"))
    results = {}
    for name in MODELS:
        ckpt = train_model(name, data_bin, work / "checkpoints" / name, work / "logs", epochs[name])
        out = work / "outputs" / f"{name}.test.fr"
        _log(f"translating the test documents with the {name} model (its own previous translations as context)")
        hyps = translate_files(TranslateOptions(
            ModelOptions(str(ckpt), spm=str(model)), str(data / "test.en"), str(data / "test.docids"), str(out),
            decoding=DecodingOptions(beam=beam, batch_size=64)))
        scores = score(hyps, refs, read_lines(str(data / "test.docids")))
        results[name] = {"bleu": scores["bleu"]["score"], "d_bleu": scores["d_bleu"]["score"],
                         "bleu_signature": scores["bleu"]["signature"],
                         "planted": planted_accuracy(hyps, planted), "output": str(out)}
    results["contrastive"] = planted_contrastive(work, data, model)
    results["seconds"] = round(time.time() - start, 1)
    atomic_write_text(str(work / "results.json"), json.dumps(results, indent=2) + "\n")
    print(format_table(results))
    return results


CONTRASTIVE_SYSTEMS = {"sentence": ("sentence", None), "context": ("context", None),
                       "context at 0/0": ("context", 0)}


def planted_contrastive(work: Path, data: Path, spm_model: Path) -> Dict:
    """Accuracy on the planted contrastive set (written beside the corpus, Voita format) of the
    sentence model, the context model, and the context model with context sizes 0/0."""
    from contextual_mt.contrastive.run import ContrastiveOptions, run_contrastive
    from contextual_mt.demo.contrastive_set import write_planted_contrastive
    from contextual_mt.inference.checkpoint import ModelOptions

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
            ModelOptions(str(work / "checkpoints" / name / "checkpoint_best.pt"), spm=str(spm_model),
                         source_context_size=size, target_context_size=size),
            "voita", str(test_set), str(out / f"{stem}.scores"), str(out / f"{stem}.json"), detokenize="no",
            progress=False))
        results[label] = {"accuracy": summary["accuracy"], "groups": summary["groups"],
                          "by_phenomenon": {k: v["accuracy"] for k, v in summary["by"]["phenomenon"].items()}}
    return results


def format_table(results: Dict) -> str:
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
