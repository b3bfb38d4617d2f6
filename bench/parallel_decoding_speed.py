"""Predicted-context decoding: waves (``--decoding sequential``) against rounds
(``--decoding parallel``, several windows), side by side in one run on one model.

The test split's documents are regrouped into ``--talks`` long documents (as in TED test sets:
a wave then holds at most that many sentences). Each setting translates the same talks with the
same loaded model; the wall time of ``DocumentTranslator.translate`` (sentencepiece included),
the rounds, the sentences translated again, and the lines that differ from the waves' output
(0 is the claim) are printed and, with ``--json``, written as JSON. With ``--bin``, stock
``fairseq-generate`` at target context 0 translates the same talks in the same run (its own
figure, model loading excluded): the baseline of the goal "predicted context at >= 0.9x the
speed of sentence-level decoding". ``--max-len-a/--max-len-b`` bound the output length on both
sides alike (an undertrained model's translations would otherwise run to the limit).

    python -m bench.parallel_decoding_speed --ckpt demo/checkpoints/fr/context/checkpoint_best.pt \\
        --spm demo/data/fr/spm.model --data demo/data/fr [--talks 20] [--windows 2 4 8 16] [--beam 4] \\
        [--batch-size 64] [--bin demo/data/fr/bin] [--max-len-a 1.5 --max-len-b 10] [--cpu] [--json result.json]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench import harness
from bench.fairseq_generate import generate
from bench.translate_talks_speed import regrouped_bin, talks  # the same regrouping as the decoding benchmark


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--spm", required=True)
    ap.add_argument("--data", required=True, help="folder with test.en and test.docids")
    ap.add_argument("--talks", type=int, default=20)
    ap.add_argument("--windows", type=int, nargs="+", default=[2, 4, 8, 16])
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--dtype", default="float32", help="the model's precision (translate's --dtype)")
    ap.add_argument("--lines", type=int, default=0, help="the first N test lines (0: all)")
    ap.add_argument("--bin", help="the binarized data: also time fairseq-generate at target context 0")
    ap.add_argument("--max-len-a", type=float, default=0.0, help="as translate's and fairseq-generate's")
    ap.add_argument("--max-len-b", type=int, default=200, help="as translate's and fairseq-generate's")
    harness.add_arguments(ap, repeats=None)
    a = harness.parse(ap, argv)

    import torch

    from contextual_mt.backends.fairseq.model import FairseqModelOptions
    from contextual_mt.backends.fairseq.translator import DocumentTranslator
    from contextual_mt.inference.decoding import DecodingOptions

    data = Path(a.data)
    src = (data / "test.en").read_text(encoding="utf-8").splitlines()
    ids = talks((data / "test.docids").read_text(encoding="utf-8").splitlines(), a.talks)
    if a.lines:
        src, ids = src[: a.lines], ids[: a.lines]
    translator = DocumentTranslator(
        FairseqModelOptions(a.ckpt, spm=a.spm, cpu=a.cpu, dtype=a.dtype),
        options=DecodingOptions(beam=a.beam, batch_size=a.batch_size, max_len_a=a.max_len_a, max_len_b=a.max_len_b),
    )
    device = "cpu" if a.cpu or not torch.cuda.is_available() else torch.cuda.get_device_name(0)
    runs = []

    def run(decoding: str, window: int = 1):
        translator.options.decoding, translator.options.window = decoding, window
        timed = harness.time_it(
            lambda: translator.translate(src, ids, progress=False),
            repeats=1,
            sync=torch.cuda.synchronize if device != "cpu" else None,
        )
        hyps, seconds = timed.result, timed.median
        stats = hyps.rounds
        return hyps, {
            "decoding": decoding,
            "window": window if decoding == "parallel" else None,
            "seconds": round(seconds, 2),
            "sentences_per_s": round(len(src) / seconds, 1),
            "rounds": stats.rounds if stats else max(ids.count(t) for t in set(ids)),
            "translated": sum(stats.translated) if stats else len(src),
        }

    run("sequential")  # warm-up (allocator, caches)
    reference, row = run("sequential")
    runs.append({**row, "lines_differing": 0})
    for w in a.windows:
        hyps, row = run("parallel", w)
        runs.append({**row, "lines_differing": sum(x != y for x, y in zip(hyps, reference, strict=True))})
    base = runs[0]["sentences_per_s"]
    for r in runs:
        r["vs_waves"] = round(r["sentences_per_s"] / base, 3)
    generate_rate = None
    if a.bin:  # the same talks, the same beam, batch, length bound and precision
        half = {"float16": ["--fp16"], "bfloat16": ["--bf16"]}.get(a.dtype, [])
        options = ["--beam", str(a.beam), "--batch-size", str(a.batch_size), *half]
        options += ["--max-len-a", str(a.max_len_a), "--max-len-b", str(a.max_len_b)]
        with tempfile.TemporaryDirectory() as work:
            # with --lines, fairseq-generate still decodes the whole split: its figure is a rate
            data_bin = a.bin if a.lines else regrouped_bin(a.bin, ids, work)
            # one process: its own figure excludes loading, but includes its first batch's CUDA set-up
            g = generate(data_bin, a.ckpt, *options, cpu=a.cpu)
        generate_rate = g.sentences / g.seconds
        for r in runs:
            r["vs_fairseq_generate_context_0"] = round(r["sentences_per_s"] / generate_rate, 3)
        print(f"fairseq-generate, target context 0: {g.sentences} sentences in {g.seconds:.2f} s")
    print(
        f"{device}; {len(src)} sentences in {a.talks} talks; beam {a.beam}, batch {a.batch_size}; "
        f"threads {torch.get_num_threads()}"
    )
    print(
        f"{'decoding':<12} {'window':>6} {'s':>8} {'sent/s':>8} {'ratio':>6} {'rounds':>6} {'translated':>10} "
        f"{'differ':>6} {'vs fairseq-generate':>20}"
    )
    for r in runs:
        print(
            f"{r['decoding']:<12} {r['window'] or '-'!s:>6} {r['seconds']:>8} {r['sentences_per_s']:>8} "
            f"{r['vs_waves']:>6.2f} {r['rounds']:>6} {r['translated']:>10} {r['lines_differing']:>6} "
            f"{r.get('vs_fairseq_generate_context_0', '-')!s:>20}"
        )
    harness.finish(
        a,
        "parallel_decoding_speed",
        {
            "device": device,
            "dtype": a.dtype,
            "sentences": len(src),
            "talks": a.talks,
            "beam": a.beam,
            "batch_size": a.batch_size,
            "max_len_a": a.max_len_a,
            "max_len_b": a.max_len_b,
            "fairseq_generate_context_0_sentences_per_s": None if generate_rate is None else round(generate_rate, 1),
            "runs": runs,
        },
        device="cpu" if a.cpu else "cuda",
    )


if __name__ == "__main__":
    main()
