"""CADec on the demo corpus (``make cadec-demo``, after ``make demo``): the demo's sentence-level
model is the frozen base; CADec (``cadec_transformer_tiny``, K = 3) is trained on top of it, then
the test documents are translated in two passes and scored like the other demo systems: BLEU,
accuracy on the planted tokens, and the planted contrastive set. Steps resume like the demo's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List

from commandkit.options import option
from commandkit.outputs import atomic_write_text
from commandkit.text import read_lines
from contextual_mt.demo.pipeline import (
    LANG,
    PLANTED_SET,
    WORKDIR,
    _log,
    _quiet_logs,
    demo_layout,
    run_demo_first,
    write_corpus,
)
from contextual_mt.errors import Code, InputError
from contextual_mt.pipeline.presets import fairseq_train_options
from contextual_mt.pipeline.train_progress import TrainProgress

CADEC_ARGS = [
    "--task",
    "cadec_translation",
    "--arch",
    "cadec_transformer_tiny",
    "--context-size",
    "3",
    "--cadec-p",
    "0.5",
    "--cadec-corrupt",
    "0.2",
]
# CADec is no model kind of the study's train stage, so it is trained here, with the demo
# preset's settings (pipeline/presets.py, hydra_configs/tiny.yaml) as fairseq-train options
TRAINING = ["-s", "en", "-t", LANG, *fairseq_train_options("demo", skip=("max_epoch", "log_interval"))]
# fairseq logs an epoch's progress every this many updates: what the progress bar moves on (the
# demo preset's 100 is more than a CADec epoch of the demo corpus has)
LOG_INTERVAL = 5


def train_cadec(data_bin: Path, save_dir: Path, log_dir: Path, epochs: int, model_args: List[str]) -> Path:
    """fairseq-train with ``make train``'s progress (``train_progress``: a bar per epoch over its
    updates with its ETA, the run's after one epoch, a line per validation); resumes from
    checkpoint_last.pt."""
    user_dir = str(Path(__file__).resolve().parent.parent)  # the contextual_mt package
    cmd = [
        str(Path(sys.executable).parent / "fairseq-train"),
        str(data_bin),
        "--user-dir",
        user_dir,
        *model_args,
        *TRAINING,
        "--max-epoch",
        str(epochs),
        "--save-dir",
        str(save_dir),
        "--cpu",
        "--no-progress-bar",
        "--log-interval",
        str(LOG_INTERVAL),
    ]
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / "train_cadec.log"
    progress = TrainProgress("[train cadec]", max_epoch=epochs)
    try:
        with open(log_path, "w") as log:
            log.write(" ".join(cmd) + "\n")
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            assert proc.stdout is not None  # stdout=PIPE
            for line in proc.stdout:
                log.write(line)
                progress.feed(line)
            proc.wait()
    finally:
        progress.close()
    if proc.returncode != 0:
        raise InputError(f"training the cadec model failed; see {log_path}", code=Code.MODEL)
    for dict_file in data_bin.glob("dict.*.txt"):  # translate finds them beside the checkpoint
        shutil.copy(dict_file, save_dir / dict_file.name)
    return save_dir / "checkpoint_best.pt"


@dataclass
class CadecDemoOptions:
    """``contextual-mt cadec-demo`` (``run_cadec_demo``)."""

    workdir: str = option(default=WORKDIR)
    epochs: int = option(default=10)
    # run the demo first when its sentence-level model is not there yet (``make cadec-demo``)
    demo_first: bool = option(
        action="store_true",
        default=False,
        help="run the demo first when its sentence-level "
        "model is not there yet (make cadec-demo); without it, that is an error",
    )
    beam: int = 4  # not on the command line


def run_cadec_demo(options: CadecDemoOptions) -> Dict:
    """``contextual-mt cadec-demo``: CADec trained on the demo's sentence-level model, the two
    compared; prints the table, returns the figures."""
    from contextual_mt.backends.fairseq.model import FairseqModelOptions
    from contextual_mt.contrastive.evaluate import ContrastiveOptions, run_contrastive
    from contextual_mt.demo.planted import planted_accuracy, read_planted
    from contextual_mt.inference.decoding import DecodingOptions
    from contextual_mt.inference.translate import TranslateOptions, translate_files
    from contextual_mt.metrics import score

    _quiet_logs()
    start = time.time()
    work = Path(options.workdir)
    layout = demo_layout(str(work))
    data, spm, base = Path(layout.data), Path(layout.spm), Path(layout.checkpoint("sentence"))
    data_bin = Path(layout.bin)
    if options.demo_first:
        run_demo_first(str(base), options.workdir)
    for needed in (base, spm, data_bin / f"dict.{LANG}.txt"):
        if not needed.exists():
            raise InputError(f"{needed}: not found; run the demo first (make demo)", code=Code.NOT_FOUND)
    ckpt = train_cadec(
        data_bin,
        Path(layout.checkpoints("cadec")),
        Path(layout.results) / "logs",
        options.epochs,
        model_args=[*CADEC_ARGS, "--base-model", str(base)],
    )
    refs, ids = read_lines(str(data / "test.fr")), read_lines(str(data / "test.docids"))
    corpus = write_corpus(work)  # written by the demo; its planted tokens and contrastive set
    planted = read_planted(str(corpus / "test.planted.jsonl"))
    test_set = corpus / PLANTED_SET
    results: Dict[str, Any] = {}
    for name, path in (("base", base), ("cadec", ckpt)):
        out = Path(layout.results) / "cadec" / f"{name}.test.fr"
        _log(f"translating the test documents with the {name} model")
        hyps = translate_files(
            TranslateOptions(
                FairseqModelOptions(str(path), spm=str(spm)),
                str(data / "test.en"),
                str(data / "test.docids"),
                str(out),
                decoding=DecodingOptions(beam=options.beam, batch_size=64),
            )
        )
        scores = score(hyps, refs, ids)
        stem = Path(layout.results) / "cadec" / "contrastive" / f"{name}"
        contrastive = run_contrastive(
            ContrastiveOptions(
                FairseqModelOptions(str(path), spm=str(spm)),
                "voita",
                str(test_set),
                f"{stem}.scores",
                f"{stem}.json",
                detokenize="no",
                progress=False,
            )
        )
        results[name] = {
            "bleu": scores["bleu"]["score"],
            "d_bleu": scores["d_bleu"]["score"],
            "planted": planted_accuracy(hyps, planted),
            "contrastive": contrastive["accuracy"],
            "contrastive_by_phenomenon": {k: v["accuracy"] for k, v in contrastive["by"]["phenomenon"].items()},
            "output": str(out),
        }
    results["seconds"] = round(time.time() - start, 1)
    atomic_write_text(str(Path(layout.results) / "cadec" / "results.json"), json.dumps(results, indent=2) + "\n")
    print(format_cadec_table(results))
    return results


def format_cadec_table(results: Dict) -> str:
    phenomena = sorted(results["base"]["planted"])
    head = (
        f"{'model':8s} {'BLEU':>6s} {'d-BLEU':>7s} "
        + " ".join(f"{p:>15s}" for p in phenomena)
        + f" {'contrastive':>12s}"
    )
    rows = [head, "-" * len(head)]
    for name in ("base", "cadec"):
        r = results[name]
        cells = " ".join(f"{r['planted'][p]['accuracy']:14.1f}%" for p in phenomena)
        rows.append(f"{name:8s} {r['bleu']:6.2f} {r['d_bleu']:7.2f} {cells} {r['contrastive']:12.3f}")
    rows.append(
        "planted tokens: accuracy = right context-dependent word in the translation; contrastive: the "
        f"planted set ({results['seconds']} s in all)"
    )
    return "\n".join(rows)
