"""CADec speed on the demo corpus (after `make demo` and `make cadec-demo`), in one run:

1. Training throughput, target words/s (fairseq's `wps`, median of the `train_inner` logs after
   the first), interleaved repeats: the base model (`contextual_transformer_tiny`, context 0),
   CADec with `--cadec-p 0.5` (half the first passes sampled from the base on the fly) and CADec
   with `--cadec-p 1.0` (no sampling: what training costs when the samples are precomputed,
   since a precomputed sample costs what a corrupted reference does).
2. The cost of precomputing: base-model sampling throughput (sentences/s) over training batches.
3. Translation of the test documents, model loading excluded: one pass of the base model
   against CADec's two passes, same beam and batch size.

    .venv/bin/python -m bench.cadec_speed --workdir demo [--updates 60] [--repeats 2] [--json result.json]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from bench import harness
from contextual_mt.demo.pipeline import demo_layout

BIN = Path(sys.executable).parent
USER_DIR = str(harness.REPO / "contextual_mt")

TRAIN = [
    "-s",
    "en",
    "-t",
    "fr",
    "--optimizer",
    "adam",
    "--lr",
    "1e-3",
    "--lr-scheduler",
    "inverse_sqrt",
    "--warmup-updates",
    "20",
    "--criterion",
    "label_smoothed_cross_entropy",
    "--label-smoothing",
    "0.1",
    "--max-tokens",
    "4096",
    "--cpu",
    "--no-progress-bar",
    "--log-format",
    "simple",
    "--log-interval",
    "10",
    "--no-save",
    "--disable-validation",
    "--seed",
    "1",
]


def wps(work: Path, model_args, updates: int) -> float:
    proc = subprocess.run(
        [
            str(BIN / "fairseq-train"),
            demo_layout(work).bin,
            "--user-dir",
            USER_DIR,
            *model_args,
            *TRAIN,
            "--max-update",
            str(updates),
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    values = [float(m.group(1)) for m in re.finditer(r"train_inner .* wps=([\d.]+)", proc.stdout + proc.stderr)]
    return harness.spread(values[1:] or values)["median"]


def sampling_rate(work: Path, batches: int = 10) -> float:
    import torch

    from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
    from contextual_mt.backends.fairseq.tasks.cadec_translation import sample_translations

    m = DocumentModel.load(
        FairseqModelOptions(str(Path(demo_layout(work).checkpoint("cadec"))), data=demo_layout(work).bin, cpu=True)
    )
    task = m.task
    task.load_dataset("train")
    dataset = task.datasets["train"]
    itr = task.get_batch_iterator(dataset, max_tokens=4096, seed=1).next_epoch_itr(shuffle=True)
    n, seconds = 0, 0.0
    for k, sample in enumerate(itr):
        if k == batches:
            break
        drawn = harness.time_it(
            lambda sample=sample, k=k: sample_translations(
                m.model.base,
                sample["net_input"]["src_tokens"],
                sample["net_input"]["src_lengths"],
                task.tgt_dict.eos(),
                task.tgt_dict.pad(),
                1024,
                torch.Generator().manual_seed(k),
            ),
            repeats=1,
        )
        seconds += drawn.median
        n += len(drawn.result)
    return n / seconds


def translation_seconds(work: Path, checkpoint: Path, beam: int) -> float:
    from contextual_mt.backends.fairseq.model import FairseqModelOptions
    from contextual_mt.backends.fairseq.translator import DocumentTranslator
    from contextual_mt.inference.decoding import DecodingOptions

    data = Path(demo_layout(work).data)
    src, ids = (data / "test.en").read_text().splitlines(), (data / "test.docids").read_text().splitlines()
    translator = DocumentTranslator(
        FairseqModelOptions(str(checkpoint), spm=demo_layout(work).spm, cpu=True),
        options=DecodingOptions(beam=beam, batch_size=64),
    )
    return harness.time_it(lambda: translator.translate(src, ids, progress=False), repeats=1).median


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", default="demo")
    p.add_argument("--updates", type=int, default=60)
    p.add_argument("--beam", type=int, default=4)
    harness.add_arguments(p, repeats=2)
    args = harness.parse(p, argv)
    import torch

    print(harness.machine_line(harness.machine_info()), flush=True)
    work = Path(args.workdir)
    base = Path(demo_layout(work).checkpoint("sentence"))
    cadec = [
        "--task",
        "cadec_translation",
        "--arch",
        "cadec_transformer_tiny",
        "--context-size",
        "3",
        "--base-model",
        str(base),
    ]
    configs = {
        "base (contextual_transformer_tiny, context 0)": [
            "--task",
            "document_translation",
            "--arch",
            "contextual_transformer_tiny",
            "--share-all-embeddings",
        ],
        "CADec, cadec-p 0.5 (sampling on the fly)": [*cadec, "--cadec-p", "0.5"],
        "CADec, cadec-p 1.0 (no sampling: precomputed samples' cost)": [*cadec, "--cadec-p", "1.0"],
    }
    timings = harness.time_interleaved(  # interleaved, so that all see the same machine load
        {name: (lambda a=model_args: round(wps(work, a, args.updates), 1)) for name, model_args in configs.items()},
        repeats=args.repeats,
        rotate=False,
    )
    result = {
        "threads": torch.get_num_threads(),
        "updates": args.updates,
        "training_wps": {name: {"runs": t.results, **harness.spread(t.results)} for name, t in timings.items()},
    }
    result["sampling_sentences_per_s"] = round(sampling_rate(work), 1)
    t_base = translation_seconds(work, base, args.beam)
    t_cadec = translation_seconds(work, Path(demo_layout(work).checkpoint("cadec")), args.beam)
    result["translation_seconds"] = {
        "base, one pass": round(t_base, 2),
        "CADec, two passes": round(t_cadec, 2),
        "ratio": round(t_cadec / t_base, 2),
    }
    print(json.dumps(result, indent=2))
    harness.finish(args, "cadec_speed", result)


if __name__ == "__main__":
    main()
