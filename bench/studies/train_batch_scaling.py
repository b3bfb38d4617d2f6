"""Issue 28, item 2: does the batch plan's learning-rate rule keep validation loss at equal
training tokens? And is the data pipeline fast enough to feed a GPU?

``--train``: trains the demo's context model (preset ``demo``: 128-dim, target context 0-3
sampled, CoWord dropout 0.1) on the demo's data once per ``--batches`` setting, through
``contextual-mt pipeline train``'s own code (``TrainOptions(batch=...)``), and prints the
validation loss after every epoch side by side. Every setting sees the same training tokens per
epoch, so equal epochs are equal tokens.

``--data``: the context dataset alone (``__getitem__`` + ``collater``, one process, as one
fairseq data worker runs it) over one epoch of the demo's training split with the context
model's settings: current-sentence target tokens/s, against the training throughput a GPU needs.

    python -m bench.studies.train_batch_scaling --train --data --json bench/out/train_batch_scaling.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from bench import harness

ROOT = harness.REPO


def train(spm_folder: Path, batches, epochs: int, threads: int) -> dict:
    from contextual_mt.pipeline.train import TrainOptions, train_model

    os.environ["OMP_NUM_THREADS"] = str(threads)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "data"))
        os.symlink(spm_folder.resolve(), os.path.join(tmp, "data", "fr"))
        for batch in batches:
            root = os.path.join(tmp, f"run-{batch}")
            os.makedirs(os.path.join(root, "data"))
            os.symlink(spm_folder.resolve(), os.path.join(root, "data", "fr"))
            options = TrainOptions(
                "fr", "context", preset="demo", root=root, gpus=0, batch=batch, max_epoch=epochs, progress=False
            )
            timed = harness.time_it(lambda options=options: train_model(options), repeats=1)
            record = timed.result
            out[batch] = {
                "seconds": round(timed.median, 1),
                "batch": record["batch"],
                "valid_curve": record["valid_curve"],
                "num_updates": record["num_updates"],
                "target_words_per_second": record["target_words_per_second"],
                "best_valid_loss": record["best_valid_loss"],
            }
            print(
                f"{batch}: {out[batch]['seconds']} s, {record['num_updates']} updates, "
                f"valid {[round(p[2], 3) for p in record['valid_curve']]}",
                file=sys.stderr,
                flush=True,
            )
    return out


def data_side(spm_folder: Path, max_tokens: int) -> dict:
    from fairseq import options, tasks

    import contextual_mt_compat  # noqa: F401

    parser = options.get_training_parser()
    args = options.parse_args_and_arch(
        parser,
        [
            str(spm_folder / "bin"),
            "--task",
            "document_translation",
            "--user-dir",
            str(ROOT / "contextual_mt"),
            "--arch",
            "contextual_transformer_tiny",
            "-s",
            "en",
            "-t",
            "fr",
            "--target-context-size",
            "3",
            "--sample-context-size",
            "--coword-dropout",
            "0.1",
            "--max-tokens",
            str(max_tokens),
        ],
    )
    task = tasks.setup_task(args)
    task.load_dataset("train")
    ds = task.dataset("train")
    batches = ds.batch_by_size(ds.ordered_indices(), max_tokens=max_tokens)

    def epoch():
        tokens = processed = 0
        for b in batches:
            batch = ds.collater([ds[int(i)] for i in b])
            tokens += int(batch["ntokens"])
            processed += int(batch["net_input"]["prev_output_tokens"].numel())
        return tokens, processed

    timed = harness.time_it(epoch, repeats=1)
    (tokens, processed), seconds = timed.result, timed.median
    return {
        "batches": len(batches),
        "seconds": round(seconds, 3),
        "target_tokens": tokens,
        "target_tokens_per_second": round(tokens / seconds),
        "decoder_positions": processed,
        "max_tokens": max_tokens,
    }


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spm", type=Path, default=ROOT / "demo" / "data" / "fr", help="the demo's data folder (make demo)")
    p.add_argument("--train", action="store_true")
    p.add_argument("--data", action="store_true")
    p.add_argument("--batches", nargs="+", default=["preset", "16384", "32768"])
    p.add_argument("--epochs", type=int, default=16, help="the demo's context model: 16")
    p.add_argument("--threads", type=int, default=2)
    harness.add_arguments(p, repeats=None)
    a = harness.parse(p, argv)
    result = {}
    if a.data:
        result["data"] = {str(t): data_side(a.spm, t) for t in (4096, 32768)}
        print(json.dumps(result["data"], indent=1), file=sys.stderr)
    if a.train:
        result["train"] = train(a.spm, a.batches, a.epochs, a.threads)
        runs = result["train"]
        epochs = max(len(r["valid_curve"]) for r in runs.values())
        print(
            "| epoch | "
            + " | ".join(
                f"{b} ({runs[b]['batch']['tokens_per_update']} tok/upd, lr "
                f"{runs[b]['batch']['lr']:.3g}, warm-up {runs[b]['batch']['warmup_updates']})"
                for b in runs
            )
            + " |"
        )
        print("|---" * (len(runs) + 1) + "|")
        first = next(iter(runs))
        for e in range(epochs):
            cells = []
            for b, r in runs.items():
                curve = r["valid_curve"]
                if e < len(curve):
                    ratio = (
                        curve[e][2] / runs[first]["valid_curve"][e][2] if e < len(runs[first]["valid_curve"]) else None
                    )
                    cells.append(f"{curve[e][2]:.3f}" + (f" ({ratio:.3f})" if b != first and ratio else ""))
                else:
                    cells.append("-")
            print(f"| {e + 1} | " + " | ".join(cells) + " |")
    harness.finish(a, "studies.train_batch_scaling", result)


if __name__ == "__main__":
    main()
