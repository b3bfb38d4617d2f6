"""Training throughput: contextual_transformer against stock fairseq transformer.

Measures fairseq's own `wps` (target tokens per second; for the document task the count
covers the current sentence only, since context positions carry no loss) over the
`train_inner` logs of a fixed number of updates, skipping the first log (warm-up).
Configurations run interleaved, `--repeats` times each; the median is reported.

    .venv/bin/python -m bench.train_speed [--repeats 3] [--json bench/out/train_speed.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import harness

BIN = Path(sys.executable).parent
USER_DIR = str(harness.REPO / "contextual_mt")


def make_corpus(directory: Path, docs: int, seed: int = 0) -> None:
    """Synthetic parallel documents: random sentences of 5-30 words, target = mapped words."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(2000)]
    for split, ndocs in (("train", docs), ("valid", 20)):
        src, tgt, ids = [], [], []
        for d in range(ndocs):
            for _ in range(rng.randint(5, 15)):
                words = [rng.choice(vocab) for _ in range(rng.randint(5, 30))]
                src.append(" ".join(words))
                tgt.append(" ".join("x" + w[1:] for w in reversed(words)))
                ids.append(f"{split}{d}")
        for ext, rows in (("en", src), ("fr", tgt), ("docids", ids)):
            (directory / f"{split}.{ext}").write_text("\n".join(rows) + "\n")


def preprocess(raw: Path, dest: Path) -> None:
    subprocess.run(
        [
            str(BIN / "fairseq-preprocess"),
            "-s",
            "en",
            "-t",
            "fr",
            "--joined-dictionary",
            "--trainpref",
            str(raw / "train"),
            "--validpref",
            str(raw / "valid"),
            "--destdir",
            str(dest),
            "--workers",
            "2",
        ],
        check=True,
        capture_output=True,
    )
    for split in ("train", "valid"):
        (dest / f"{split}.en-fr.docids").write_text((raw / f"{split}.docids").read_text())
    subprocess.run(
        [str(BIN / "contextual-mt"), "add-symbols", str(dest / "dict.en.txt"), str(dest / "dict.fr.txt")],
        check=True,
        capture_output=True,
    )


def dims(dim: int, ffn: int, layers: int, heads: int):
    return [
        "--encoder-layers",
        str(layers),
        "--decoder-layers",
        str(layers),
        "--encoder-embed-dim",
        str(dim),
        "--decoder-embed-dim",
        str(dim),
        "--encoder-ffn-embed-dim",
        str(ffn),
        "--decoder-ffn-embed-dim",
        str(ffn),
        "--encoder-attention-heads",
        str(heads),
        "--decoder-attention-heads",
        str(heads),
        "--share-all-embeddings",
    ]


# --size medium: the issue-2 figure; --size small: PRESET=small, the papers' transformer-small
SIZES = {"medium": dims(256, 512, 3, 4), "small": dims(512, 1024, 6, 8)}
MODEL = SIZES["medium"]

CONFIGS = {
    "transformer (stock, translation task)": ["--task", "translation", "--arch", "transformer"],
    "contextual_transformer, context 0": [
        "--user-dir",
        USER_DIR,
        "--task",
        "document_translation",
        "--arch",
        "contextual_transformer",
    ],
    "contextual_transformer, N=M=3 dynamic": [
        "--user-dir",
        USER_DIR,
        "--task",
        "document_translation",
        "--arch",
        "contextual_transformer",
        "--source-context-size",
        "3",
        "--target-context-size",
        "3",
        "--sample-context-size",
    ],
}
# the study's context model (make train MODEL=context): target context 0-3, dynamic, CoWord 0.1
STUDY_CONTEXT = (
    "contextual_transformer, target 0-3 dynamic + CoWord 0.1 (the study's context model)",
    [
        "--user-dir",
        USER_DIR,
        "--task",
        "document_translation",
        "--arch",
        "contextual_transformer",
        "--source-context-size",
        "0",
        "--target-context-size",
        "3",
        "--sample-context-size",
        "--coword-dropout",
        "0.1",
    ],
)


def run_once(data: Path, extra, updates: int, max_tokens: int) -> float:
    with tempfile.TemporaryDirectory() as save:
        cmd = [
            str(BIN / "fairseq-train"),
            str(data),
            *extra,
            *MODEL,
            "--optimizer",
            "adam",
            "--lr",
            "5e-4",
            "--max-tokens",
            str(max_tokens),
            "--max-update",
            str(updates),
            "--cpu",
            "--no-progress-bar",
            "--log-format",
            "json",
            "--log-interval",
            "10",
            "--save-dir",
            save,
            "--no-save",
            "--disable-validation",
            "--seed",
            "1",
            "--criterion",
            "label_smoothed_cross_entropy",
            "--label-smoothing",
            "0.1",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"fairseq-train failed:\n{proc.stderr[-3000:]}")
    wps = []
    for line in (proc.stdout + proc.stderr).splitlines():
        if "train_inner" in line and "{" in line:
            wps.append(float(json.loads(line[line.index("{") :])["wps"]))
    if len(wps) < 2:
        raise SystemExit("too few train_inner logs; raise --updates")
    return harness.spread(wps[1:])["median"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=400)
    parser.add_argument("--updates", type=int, default=60)
    parser.add_argument("--max-tokens", type=int, default=2048)
    parser.add_argument(
        "--size",
        choices=sorted(SIZES),
        default="medium",
        help="medium: 256/512, 3 layers; small: 512/1024, 6 layers, 8 heads (PRESET=small)",
    )
    harness.add_arguments(parser, repeats=3)
    args = harness.parse(parser, argv)
    print(harness.machine_line(harness.machine_info()), flush=True)
    global MODEL
    MODEL = SIZES[args.size]
    if args.size == "small":
        CONFIGS[STUDY_CONTEXT[0]] = STUDY_CONTEXT[1]
    with tempfile.TemporaryDirectory() as tmp:
        raw, data = Path(tmp) / "raw", Path(tmp) / "bin"
        raw.mkdir()
        make_corpus(raw, args.docs)
        preprocess(raw, data)
        timings = harness.time_interleaved(  # fairseq's own wps, configurations interleaved
            {
                name: (lambda extra=extra: run_once(data, extra, args.updates, args.max_tokens))
                for name, extra in CONFIGS.items()
            },
            repeats=args.repeats,
            rotate=False,
        )
    results = {name: t.results for name, t in timings.items()}
    medians = {name: harness.spread(v)["median"] for name, v in results.items()}
    names = list(CONFIGS)
    summary = {
        "runs_wps": results,
        "median_wps": medians,
        "ratio_context0_vs_stock": medians[names[1]] / medians[names[0]],
        "ratio_dynamic3_vs_stock_per_current_token": medians[names[2]] / medians[names[0]],
        **({"ratio_study_context_vs_stock": medians[names[3]] / medians[names[0]]} if len(names) > 3 else {}),
        "spread_wps": {name: harness.spread(v) for name, v in results.items()},
        "torch_threads": os.environ.get("OMP_NUM_THREADS", "default"),
    }
    for name in names:
        print(f"{name:45s} {medians[name]:8.0f} target words/s (median of {args.repeats})")
    print(f"context 0 / stock: {summary['ratio_context0_vs_stock']:.3f}")
    print(
        f"N=M=3 dynamic / stock (per current-sentence target token): "
        f"{summary['ratio_dynamic3_vs_stock_per_current_token']:.3f}"
    )
    if len(names) > 3:
        print(f"target 0-3 dynamic + CoWord / stock: {summary['ratio_study_context_vs_stock']:.3f}")
    harness.finish(args, "train_speed", summary)


if __name__ == "__main__":
    main()
