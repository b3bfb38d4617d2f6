"""Issue 28, item 2 on a GPU: target words/s of `make train` with BATCH=preset (the papers'
4096 tokens per update) against BATCH=auto (the batch plan), side by side in one run, through
the train stage's own code (`contextual-mt pipeline train`), on the demo's data.

    python bench/train_gpu_batch.py --preset small --train-docs 20000 --updates 300 \
        --out bench/out/train_gpu_batch.json

``--train-docs N``: a demo corpus of N training documents made here (the demo's generator, then
the data stage, 1,000 pieces: the demo text has no more), as the issue measured (20,000);
without it, the demo's own data (3,000 documents: at 32k tokens per update an epoch is a dozen
updates).

Each setting trains the context model from scratch for ``--updates`` updates; target words/s
is the median of fairseq's per-epoch figures (the train record, .stage/train.json), so it includes data loading and
the per-update overhead, not start-up.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from bench import harness

ROOT = harness.REPO


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spm", type=Path, default=ROOT / "demo" / "data" / "fr", help="the demo's data folder (make demo)")
    p.add_argument("--train-docs", type=int, help="make a demo corpus of this many training documents")
    p.add_argument("--vocab-size", type=int, default=1000, help="the demo text allows at most ~1,068 pieces")
    p.add_argument("--preset", default="small")
    p.add_argument("--batches", nargs="+", default=["preset", "auto"])
    p.add_argument("--updates", type=int, default=300)
    p.add_argument("--gpus", type=int, default=None, help="default: every visible GPU (0: CPU, a smoke run)")
    harness.add_arguments(p, repeats=None)
    a = harness.parse(p, argv)
    from contextual_mt.pipeline.train import TrainOptions, train_model

    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = a.spm.resolve()
        if a.train_docs:
            from contextual_mt.demo.corpus import generate_demo_data
            from contextual_mt.pipeline.data_plan import DataOptions
            from contextual_mt.pipeline.prepare import prepare_data

            text = os.path.join(tmp, "text")
            generate_demo_data(text, train_docs=a.train_docs)
            data = Path(tmp) / "data"
            prepare_data(DataOptions("fr", str(data), text=text, vocab_size=a.vocab_size), progress=False)
        for batch in a.batches:
            root = os.path.join(tmp, f"run-{batch}")
            os.makedirs(os.path.join(root, "data"))
            os.symlink(data, os.path.join(root, "data", "fr"))
            # many epochs' worth: the run stops at --updates
            options = TrainOptions(
                "fr",
                "context",
                preset=a.preset,
                root=root,
                gpus=a.gpus,
                batch=batch,
                max_epoch=1000,
                max_update=a.updates,
                progress=False,
            )
            timed = harness.time_it(lambda options=options: train_model(options), repeats=1)
            record = timed.result
            runs[batch] = {
                "seconds": round(timed.median, 1),
                "gpus": record["gpus"],
                "fp16": record["fp16"],
                "batch": record["batch"],
                "num_updates": record["num_updates"],
                "target_words_per_second": record["target_words_per_second"],
                "updates_per_second": record["updates_per_second"],
                "target_words_per_update": record["target_words_per_update"],
                "valid_curve": record["valid_curve"],
            }
            print(
                f"{batch}: {runs[batch]['target_words_per_second']} target words/s, "
                f"{runs[batch]['updates_per_second']} updates/s, {record['batch']['tokens_per_update']} tokens "
                f"per update ({runs[batch]['seconds']} s)",
                file=sys.stderr,
                flush=True,
            )
    first = runs[a.batches[0]]["target_words_per_second"]
    for r in runs.values():
        r["ratio"] = round(r["target_words_per_second"] / first, 3) if first else None
    device = "CPU"
    try:
        import torch

        if torch.cuda.is_available():
            device = torch.cuda.get_device_name(0)
    except ImportError:
        pass
    print("| BATCH | tokens per update | lr | target words/s | updates/s | ratio |\n|---|---|---|---|---|---|")
    for batch, r in runs.items():
        print(
            f"| {batch} | {r['batch']['tokens_per_update']} | {r['batch']['lr']:.3g} | "
            f"{r['target_words_per_second']} | {r['updates_per_second']} | {r['ratio']} |"
        )
    harness.finish(
        a, "studies.train_gpu_batch", {"device": device, "preset": a.preset, "train_docs": a.train_docs, "runs": runs}
    )


if __name__ == "__main__":
    main()
