"""Decoding speed: `contextual-mt translate` against stock `fairseq-generate`.

Uses the contextual model and data of `make demo` (run it first). All timings exclude model
loading: fairseq-generate's own "Translated N sentences ... in Xs" figure, and the wall time of
`DocumentTranslator.translate` (which includes sentencepiece encoding and decoding).

1. fairseq-generate, sentence level (--target-context-size 0), on the binarized test split;
2. translate with context size 0, then with predicted target context M=3;
3. translate M=3 with fairseq's incremental decoding switched off (full recomputation of the
   decoder, prefix included, at every step), for the speed-up of incremental decoding.

    .venv/bin/python bench/translate_speed.py --workdir demo --beam 4
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
USER_DIR = str(Path(__file__).resolve().parent.parent / "contextual_mt")
from contextual_mt.demo.pipeline import demo_layout  # noqa: E402


def fairseq_generate(work: Path, ckpt: Path, beam: int, batch: int) -> float:
    proc = subprocess.run(
        [
            str(BIN / "fairseq-generate"),
            demo_layout(work).bin,
            "--user-dir",
            USER_DIR,
            "--task",
            "document_translation",
            "-s",
            "en",
            "-t",
            "fr",
            "--target-context-size",
            "0",
            "--path",
            str(ckpt),
            "--beam",
            str(beam),
            "--batch-size",
            str(batch),
            "--gen-subset",
            "test",
            "--cpu",
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    m = re.search(r"Translated ([\d,]+) sentences .* in ([\d.]+)s", proc.stdout + proc.stderr)
    return int(m.group(1).replace(",", "")) / float(m.group(2))


def translate_rate(work: Path, ckpt: Path, beam: int, batch: int, context: int, incremental: bool = True) -> float:
    from contextual_mt.backends.fairseq.model import FairseqModelOptions
    from contextual_mt.backends.fairseq.translator import DocumentTranslator
    from contextual_mt.inference.decoding import DecodingOptions

    t = DocumentTranslator(
        FairseqModelOptions(str(ckpt), spm=demo_layout(work).spm, target_context_size=context, cpu=True),
        options=DecodingOptions(beam=beam, batch_size=batch, incremental=incremental),
    )
    src = (Path(demo_layout(work).data) / "test.en").read_text().splitlines()
    ids = (Path(demo_layout(work).data) / "test.docids").read_text().splitlines()
    start = time.perf_counter()
    t.translate(src, ids, progress=False)
    return len(src) / (time.perf_counter() - start)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", default="demo")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default="bench/out/translate_speed.json")
    args = p.parse_args()
    work = Path(args.workdir)
    ckpt = Path(demo_layout(work).checkpoint("context"))
    if not ckpt.exists():
        raise SystemExit(f"{ckpt} not found: run `make demo` first")
    runs = {
        "fairseq-generate, context 0": [],
        "translate, context 0": [],
        "translate, predicted M=3": [],
        "translate, predicted M=3, no incremental decoding": [],
    }
    for r in range(args.repeats):
        runs["fairseq-generate, context 0"].append(fairseq_generate(work, ckpt, args.beam, args.batch_size))
        runs["translate, context 0"].append(translate_rate(work, ckpt, args.beam, args.batch_size, 0))
        runs["translate, predicted M=3"].append(translate_rate(work, ckpt, args.beam, args.batch_size, 3))
        runs["translate, predicted M=3, no incremental decoding"].append(
            translate_rate(work, ckpt, args.beam, args.batch_size, 3, incremental=False)
        )
        print(f"[{r + 1}/{args.repeats}] " + ", ".join(f"{k}: {v[-1]:.1f}" for k, v in runs.items()), flush=True)
    med = {k: statistics.median(v) for k, v in runs.items()}
    summary = {
        "sentences_per_second": med,
        "runs": runs,
        "settings": vars(args),
        "time_ratio_translate_M3_vs_fairseq_generate_ctx0": med["fairseq-generate, context 0"]
        / med["translate, predicted M=3"],
        "incremental_speedup_M3": med["translate, predicted M=3"]
        / med["translate, predicted M=3, no incremental decoding"],
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2))
    for k, v in med.items():
        print(f"{k:52s} {v:8.1f} sentences/s")
    print(
        f"time of translate M=3 / fairseq-generate context 0: {summary['time_ratio_translate_M3_vs_fairseq_generate_ctx0']:.2f}x"
    )
    print(f"incremental decoding speed-up (M=3): {summary['incremental_speedup_M3']:.2f}x")


if __name__ == "__main__":
    main()
