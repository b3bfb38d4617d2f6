"""Wall and CPU time of every stage of `make all` (as contextual_mt/pipeline/stages.py lists them)
on the demo corpus in the TED layout, and the training words/s fairseq reports (mean over
epochs), with the preset given (tiny on CPU).

    .venv/bin/python -m bench.pipeline_stages_time --train-docs 3000 --preset tiny --json bench/out/pipeline_tiny.json

PRESET=tiny on a pair of about 10k training sentences (issue 50: `make all` within 30 minutes on 2
cores), the vocabulary the preset's (no SPM_VOCAB):

    .venv/bin/python -m bench.pipeline_stages_time --train-docs 1850 --preset tiny --spm-vocab 0 --beam 5 \
        --json bench/out/pipeline_tiny_10k.json

The CPU time of a stage (user and system, of make and everything it ran) is the figure a loaded
machine changes least: on a quiet machine of N cores a stage takes about its CPU time / N at best.

On a GPU machine, e.g. `--preset small --max-update 3000`. Each stage runs through make in a
fresh WORK folder; peak GPU memory is read with nvidia-smi when it is there.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from bench import harness

ROOT = harness.REPO
BIN = Path(sys.executable).parent


def stages():
    """The targets of `make all`, in its order."""
    from contextual_mt.pipeline.stages import make_all

    return make_all()


def cpu_seconds():
    """User and system CPU seconds of the finished children so far."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime, r.ru_stime


class GpuMemory(threading.Thread):
    """Peak memory in use on the GPUs while a stage runs (nvidia-smi every 0.5 s)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak_mib, self.stop = 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                out = subprocess.run(
                    ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                    capture_output=True,
                    text=True,
                    timeout=5,
                ).stdout
                self.peak_mib = max([self.peak_mib, *(int(x) for x in out.split() if x.isdigit())])
            except (OSError, subprocess.SubprocessError):
                return
            self.stop.wait(0.5)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train-docs", type=int, default=3000)
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--epochs", type=int, help="default: the preset's")
    parser.add_argument("--max-update", type=int)
    parser.add_argument("--spm-vocab", type=int, default=1000, help="0: none given (the preset's, or the data stage's)")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--keep", help="keep the work folder here")
    harness.add_arguments(parser, repeats=None)
    args = harness.parse(parser, argv)
    print(harness.machine_line(harness.machine_info()), flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="pipeline-bench-"))
    demo, work = tmp / "demo", Path(args.keep) if args.keep else tmp / "work"
    subprocess.run(
        [str(BIN / "contextual-mt"), "demo-data", "--output", str(demo), "--train-docs", str(args.train_docs), "--ted"],
        check=True,
        capture_output=True,
    )
    variables = [
        "LANG=fr",
        f"WORK={work}",
        f"TED={demo / 'ted_talks.tar.gz'}",
        *([f"SPM_VOCAB={args.spm_vocab}"] if args.spm_vocab else []),
        f"PRESET={args.preset}",
        f"BEAM={args.beam}",
        f"MUDA_ARGS=--lexicon {demo}/train.en.conllu {demo}/train.fr.conllu {demo}/train.align",
        # MuDA's taggers (stanza, the aligner) cannot be downloaded offline: the corpus' own annotations
        f"MUDA_TAG_ARGS=--src-conllu {demo}/test.en.conllu --tgt-conllu {demo}/test.fr.conllu "
        f"--alignments {demo}/test.align",
    ]
    if args.epochs:
        variables.append(f"EPOCHS={args.epochs}")
    if args.max_update:
        variables.append(f"MAX_UPDATE={args.max_update}")
    result = {"settings": vars(args), "stages": {}}
    for stage in stages():
        if stage == "pcxmi":
            for name in ("test.en.conllu", "test.fr.conllu", "test.align"):
                shutil.copy(demo / name, work / "data" / "fr" / name)
        user, system = cpu_seconds()
        gpu = GpuMemory()
        gpu.start()
        timed = harness.time_it(
            lambda stage=stage: subprocess.run(
                ["make", "-C", str(ROOT), "--no-print-directory", stage, *variables], capture_output=True, text=True
            ),
            repeats=1,
        )
        proc, seconds = timed.result, timed.median
        gpu.stop.set()
        if proc.returncode != 0:
            raise SystemExit(f"make {stage} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        used = [round(a - b, 1) for a, b in zip(cpu_seconds(), (user, system), strict=True)]
        result["stages"][stage] = {
            "seconds": round(seconds, 1),
            "cpu_user_seconds": used[0],
            "cpu_system_seconds": used[1],
            "gpu_peak_mib": gpu.peak_mib or None,
        }
        print(f"{stage:10s} {seconds:8.1f} s wall, CPU {used[0]:.1f} s user + {used[1]:.1f} s system", flush=True)
    summary = json.loads((work / "data" / "fr" / "summary.json").read_text())
    result["data"] = {
        split: {k: summary["splits"][split][k] for k in ("documents", "sentences")} for split in summary["splits"]
    }
    result["data"]["spm_pieces"] = summary["spm"]["pieces"]
    result["data"]["dictionary_size"] = summary["bin"]["dictionary_size"]
    result["total_seconds"] = round(sum(s["seconds"] for s in result["stages"].values()), 1)
    print(f"data: {result['data']}; make all: {result['total_seconds'] / 60:.1f} minutes", flush=True)
    for model in ("sentence", "context"):
        done = json.loads((work / "checkpoints" / "fr" / model / ".stage" / "train.json").read_text())
        wps = done["train_wps"]
        result["train_" + model] = {
            "seconds": done["seconds"],
            "seconds_per_epoch": round(done["seconds"] / max(1, done["epochs"]), 1),
            "updates": done["num_updates"],
            "epochs": done["epochs"],
            "mean_wps": round(sum(wps) / len(wps), 1) if wps else None,
            "valid_loss": done["valid_loss"],
            "gpus": done["gpus"],
            "fp16": done["fp16"],
        }
        print(
            f"train {model:8s} {done['seconds']:7.1f} s, {done['num_updates']} updates, "
            f"{result['train_' + model]['mean_wps']} target words/s (fairseq wps)"
        )
    result["scores"] = {
        s: {k: r[k]["score"] for k in ("bleu", "chrf", "d_bleu")}
        for s, r in json.loads((work / "results" / "fr" / "scores.json").read_text())["systems"].items()
    }
    print(json.dumps(result["scores"], indent=1))
    harness.finish(args, "pipeline_stages_time", result)
    if not args.keep:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
