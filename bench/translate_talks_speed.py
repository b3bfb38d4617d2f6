"""Decoding speed on talk-shaped data (a few long documents, as in TED test sets): stock
`fairseq-generate` against `contextual-mt translate`, side by side in one run.

The test split's documents are regrouped into ``--talks`` long documents (consecutive documents
joined), so that waves of predicted-context decoding hold at most that many sentences. Timed,
model loading excluded (fairseq-generate's own "Translated N sentences in Xs"; the wall time of
`DocumentTranslator.translate`, sentencepiece included):

1. fairseq-generate, sentence level (--target-context-size 0), on the binarized test split;
   and with gold target context (the trained size, forced as a prefix);
2. translate with target context 0 and with gold (reference) target context, each in one pass
   batched freely by length (now) and in waves of one sentence per document (before);
3. translate with predicted target context (waves are necessary there).

    python -m bench.translate_talks_speed --ckpt CKPT --spm SPM --data RAW_DIR --bin BIN_DIR \\
        [--talks 18] [--beam 4] [--batch-size 64] [--cpu] [--repeats 3] [--json result.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench import harness
from bench.fairseq_generate import generate


def talks(docids, n):
    """Consecutive documents joined into ``n`` talks of about equal sentence counts."""
    from commandkit.documents import document_spans

    spans, total, out = document_spans(docids), len(docids), []
    for a, b in spans:
        out += [f"talk{min(n - 1, a * n // total)}"] * (b - a)
    return out


def regrouped_bin(bin_dir: str, talk_ids, work: str) -> str:
    """The binarized data with the test split's documents regrouped into talks (links to the
    data, a new docids file), so that fairseq-generate sees the same documents as translate."""
    out = Path(work) / "bin"
    out.mkdir()
    for f in Path(bin_dir).iterdir():
        if f.name != "test.en-fr.docids":
            (out / f.name).symlink_to(f.resolve())
    (out / "test.en-fr.docids").write_text("".join(f"{t}\n" for t in talk_ids))
    return str(out)


def fairseq_generate(args, data: str, context: int) -> harness.Elapsed:
    """fairseq-generate's own time (model loading excluded) and its sentence count."""
    # the same precision on both sides: fairseq's own --fp16 / --bf16 for half precision
    half = {"float16": ["--fp16"], "bfloat16": ["--bf16"]}.get(args.dtype, [])
    options = ["--beam", str(args.beam), "--batch-size", str(args.batch_size), *half]
    g = generate(data, args.ckpt, *options, target_context=context, cpu=args.cpu)
    return harness.Elapsed(g.seconds, g.sentences)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("--ckpt", "--spm", "--data", "--bin"):
        p.add_argument(name, required=True)
    p.add_argument("--talks", type=int, default=18)
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--cpu", action="store_true")
    p.add_argument(
        "--dtype",
        default="float32",
        choices=("float32", "float16", "bfloat16"),
        help="every variant in this precision (translate's --dtype, fairseq-generate's --fp16/--bf16)",
    )
    p.add_argument(
        "--limit",
        type=int,
        help="translate only the first N test sentences (fairseq-generate still "
        "decodes the whole split: its figure is a rate, sentences per second)",
    )
    harness.add_arguments(p, repeats=3)
    args = harness.parse(p, argv)
    import torch

    from commandkit.text import read_lines
    from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
    from contextual_mt.backends.fairseq.translator import DocumentTranslator
    from contextual_mt.inference.decoding import DecodingOptions

    data = Path(args.data)
    src, refs = read_lines(str(data / "test.en")), read_lines(str(data / "test.fr"))
    ids = talks(read_lines(str(data / "test.docids")), args.talks)
    if args.limit:
        src, refs, ids = src[: args.limit], refs[: args.limit], ids[: args.limit]
    result = {
        "sentences": len(src),
        "talks": args.talks,
        "beam": args.beam,
        "batch_size": args.batch_size,
        "repeats": args.repeats,
        "dtype": args.dtype,
        "device": "cpu" if args.cpu or not torch.cuda.is_available() else torch.cuda.get_device_name(0),
        "threads": torch.get_num_threads(),
        "sentences_per_second": {},
    }
    rate = result["sentences_per_second"]
    with tempfile.TemporaryDirectory() as work:
        data = args.bin if args.limit else regrouped_bin(args.bin, ids, work)
        timed = harness.time_it(lambda: fairseq_generate(args, data, 0), repeats=args.repeats)
        rate["fairseq-generate, context 0"] = timed.rate(timed.result)
        trained = DocumentModel.load(FairseqModelOptions(args.ckpt, spm=args.spm, cpu=True)).target_context_size
        timed = harness.time_it(lambda: fairseq_generate(args, data, trained), repeats=args.repeats)
        rate[f"fairseq-generate, gold context {trained}"] = timed.rate(timed.result)
    runs = [
        ("translate, context 0, one pass", 0, False, True),
        ("translate, context 0, waves (before)", 0, False, False),
        ("translate, gold context, one pass", None, True, True),
        ("translate, gold context, waves (before)", None, True, False),
        ("translate, predicted context (waves)", None, False, True),
    ]
    models, translators = {}, {}
    for name, size, gold, free in runs:
        if size not in models:
            models[size] = DocumentModel.load(
                FairseqModelOptions(args.ckpt, spm=args.spm, target_context_size=size, cpu=args.cpu, dtype=args.dtype)
            )
        translators[name] = (
            DocumentTranslator(
                models[size], options=DecodingOptions(beam=args.beam, batch_size=args.batch_size, free_batching=free)
            ),
            gold,
        )
    warm = translators[runs[0][0]][0]
    warm.translate(src[:200], ids[:200], progress=False)  # one-time costs (threads, allocator) count for nobody
    sync = torch.cuda.synchronize if warm.device.type == "cuda" else None
    timings = harness.time_interleaved(  # interleaved, so drifts of the machine hit every variant alike
        {
            name: (lambda t=t, gold=gold: t.translate(src, ids, gold_targets=refs if gold else None, progress=False))
            for name, (t, gold) in translators.items()
        },
        repeats=args.repeats,
        sync=sync,
        rotate=False,
    )
    for name, t in timings.items():
        rate[name] = t.rate(len(src))
    base = rate["fairseq-generate, context 0"]
    result["ratio_to_fairseq_generate"] = {k: round(v / base, 3) for k, v in rate.items()}
    result["sentences_per_second"] = {k: round(v, 1) for k, v in rate.items()}
    print(json.dumps(result, indent=2))
    result["timings"] = timings
    harness.finish(args, "translate_talks_speed", result, device="cpu" if args.cpu else "cuda")
    return 0


if __name__ == "__main__":
    sys.exit(main())
