"""Decoding speed: `contextual-mt translate` against stock `fairseq-generate`.

Uses the contextual model and data of `make demo` (run it first). All timings exclude model
loading: fairseq-generate's own "Translated N sentences ... in Xs" figure, and the wall time of
`DocumentTranslator.translate` (which includes sentencepiece encoding and decoding).

1. fairseq-generate, sentence level (--target-context-size 0), on the binarized test split;
2. translate with context size 0, then with predicted target context M=3;
3. translate M=3 with fairseq's incremental decoding switched off (full recomputation of the
   decoder, prefix included, at every step), for the speed-up of incremental decoding.

    .venv/bin/python -m bench.translate_speed --workdir demo --beam 4 [--repeats 3] [--json result.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench import harness
from bench.fairseq_generate import generate
from contextual_mt.demo.pipeline import demo_layout


def fairseq_generate(work: Path, ckpt: Path, beam: int, batch: int) -> harness.Elapsed:
    """fairseq-generate on the test split; its own time (model loading excluded)."""
    g = generate(demo_layout(work).bin, str(ckpt), "--beam", str(beam), "--batch-size", str(batch))
    return harness.Elapsed(g.seconds, g.sentences)


def translator(work: Path, beam: int, batch: int, context: int, incremental: bool = True):
    from contextual_mt.backends.fairseq.model import FairseqModelOptions
    from contextual_mt.backends.fairseq.translator import DocumentTranslator
    from contextual_mt.inference.decoding import DecodingOptions

    return DocumentTranslator(
        FairseqModelOptions(
            demo_layout(work).checkpoint("context"), spm=demo_layout(work).spm, target_context_size=context, cpu=True
        ),
        options=DecodingOptions(beam=beam, batch_size=batch, incremental=incremental),
    )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", default="demo")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=64)
    harness.add_arguments(p, repeats=3)
    args = harness.parse(p, argv)
    work = Path(args.workdir)
    ckpt = Path(demo_layout(work).checkpoint("context"))
    if not ckpt.exists():
        raise SystemExit(f"{ckpt} not found: run `make demo` first")
    src = (Path(demo_layout(work).data) / "test.en").read_text().splitlines()
    ids = (Path(demo_layout(work).data) / "test.docids").read_text().splitlines()
    print(harness.machine_line(harness.machine_info()), flush=True)
    # models loaded before timing: only DocumentTranslator.translate is timed
    ctx0 = translator(work, args.beam, args.batch_size, 0)
    m3 = translator(work, args.beam, args.batch_size, 3)
    m3_full = translator(work, args.beam, args.batch_size, 3, incremental=False)
    timings = harness.time_interleaved(
        {
            "fairseq-generate, context 0": lambda: fairseq_generate(work, ckpt, args.beam, args.batch_size),
            "translate, context 0": lambda: ctx0.translate(src, ids, progress=False),
            "translate, predicted M=3": lambda: m3.translate(src, ids, progress=False),
            "translate, predicted M=3, no incremental decoding": lambda: m3_full.translate(src, ids, progress=False),
        },
        repeats=args.repeats,
        rotate=False,
    )
    n = len(src)
    med = {k: t.rate(n) for k, t in timings.items()}
    rows = [
        harness.Row(
            "translate predicted M=3 vs fairseq-generate context 0",
            "sentences/s",
            med["fairseq-generate, context 0"],
            med["translate, predicted M=3"],
        ),
        harness.Row(
            "incremental decoding (M=3): off vs on",
            "sentences/s",
            med["translate, predicted M=3, no incremental decoding"],
            med["translate, predicted M=3"],
        ),
    ]
    for k, t in timings.items():
        print(f"{k:52s} {med[k]:8.1f} sentences/s  ({harness.describe(t)})")
    print(harness.table(rows))
    summary = {
        "sentences": n,
        "sentences_per_second": med,
        "timings": timings,
        "time_ratio_translate_M3_vs_fairseq_generate_ctx0": med["fairseq-generate, context 0"]
        / med["translate, predicted M=3"],
        "incremental_speedup_M3": rows[1].ratio,
        "rows": harness.compare(rows),
    }
    harness.finish(args, "translate_speed", summary)


if __name__ == "__main__":
    main()
