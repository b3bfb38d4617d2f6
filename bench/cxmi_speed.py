"""P-CXMI throughput: `contextual-mt cxmi` against two stock `fairseq-generate --score-reference`
runs (one without context, one with it) over the same test split.

Uses the contextual model and data of `make demo` (run it first). Timings exclude model loading:
fairseq-generate's own "Translated N sentences (T tokens) in Xs" figures (the two runs' times
are added), and the wall time of `PCXMIScorer.score` over the whole split, which includes
sentencepiece encoding, building both datasets, both passes and the per-token/per-word records.

    .venv/bin/python -m bench.cxmi_speed --workdir demo [--repeats 3] [--json result.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench import harness
from bench.fairseq_generate import generate
from contextual_mt.demo.pipeline import demo_layout


def score_reference(work: Path, ckpt: Path, context: int, batch: int):
    g = generate(
        demo_layout(work).bin,
        str(ckpt),
        "--score-reference",
        "--batch-size",
        str(batch),
        target_context=context,
        source_context=0,
    )
    return g.tokens, g.seconds


def cxmi_time(scorer, work: Path) -> harness.Elapsed:
    """``PCXMIScorer.score`` over the test split: its seconds, and the tokens scored."""
    data = Path(demo_layout(work).data)
    src, ref = (data / "test.en").read_text().splitlines(), (data / "test.fr").read_text().splitlines()
    ids = (data / "test.docids").read_text().splitlines()
    timed = harness.time_it(
        lambda: sum(len(r["tokens"]) for batch in scorer.score(src, ref, ids, progress=False) for r in batch),
        repeats=1,
    )
    return harness.Elapsed(timed.median, timed.result)


def fairseq_twice(work: Path, ckpt: Path, context: int, batch: int) -> harness.Elapsed:
    """The two fairseq-generate --score-reference runs (context 0 and ``context``): their own
    times added, and the tokens scored (the same in both)."""
    t0, s0 = score_reference(work, ckpt, 0, batch)
    t3, s3 = score_reference(work, ckpt, context, batch)
    assert t0 == t3
    return harness.Elapsed(s0 + s3, t0)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", default="demo")
    p.add_argument("--batch-size", type=int, default=64)
    harness.add_arguments(p, repeats=3)
    args = harness.parse(p, argv)
    from contextual_mt.analysis.cxmi import PCXMIScorer
    from contextual_mt.backends.fairseq.model import FairseqModelOptions

    work = Path(args.workdir)
    ckpt = Path(demo_layout(work).checkpoint("context"))
    if not ckpt.exists():
        raise SystemExit(f"{ckpt} not found: run `make demo` first")
    print(harness.machine_line(harness.machine_info()), flush=True)
    scorer = PCXMIScorer.from_checkpoint(
        FairseqModelOptions(str(ckpt), spm=demo_layout(work).spm, cpu=True), batch_size=args.batch_size
    )
    timings = harness.time_interleaved(
        {
            "fairseq": lambda: fairseq_twice(work, ckpt, scorer.n_tgt, args.batch_size),
            "cxmi": lambda: cxmi_time(scorer, work),
        },
        repeats=args.repeats,
        rotate=False,
    )
    tokens = timings["fairseq"].result
    assert timings["cxmi"].result == tokens, (timings["cxmi"].result, tokens)  # the same tokens, EOS included
    row = harness.Row(
        "P-CXMI of the test split", "tokens/s", timings["fairseq"].rate(tokens), timings["cxmi"].rate(tokens)
    )
    summary = {
        "fairseq_score_reference_x2_tokens_per_s": row.baseline,
        "cxmi_tokens_per_s": row.ours,
        "timings": timings,
        "tokens": tokens,
        "ratio": row.ratio,
    }
    print(harness.table([row], baseline="fairseq-generate --score-reference x2", ours="contextual-mt cxmi"))
    harness.finish(args, "cxmi_speed", summary)


if __name__ == "__main__":
    main()
