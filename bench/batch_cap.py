"""The token cap of the wide GPU batching (issue 55, step 5), measured on a fairseq checkpoint.

What it is: without ``--batch-size``, a fairseq checkpoint on a GPU decodes 512 sentences per
batch (``GPU_BATCH_SIZE``), at most 16,384 padded tokens with their context (``GPU_MAX_TOKENS``;
both in contextual_mt/inference/decoding.py, applied by ``DecodingOptions.batching(wide=True)``,
which the fairseq translator asks for on CUDA). It was set without a measurement; at long
inputs it is what decides the batch.

This translates long lines (``--join`` consecutive test sentences of a document joined into
one line: TED-like lengths) with predicted target context (the translator's defaults: parallel
rounds on a GPU, waves on CPU) under 512 sentences per batch and each cap in ``--caps`` (0: no
cap), given explicitly so that a dry run on CPU takes the same path. For each: sentences/s,
the batches chosen (rows and longest row, as ``_chunks`` cut them), peak GPU memory, and the
lines that differ from the first cap's.

    python -m bench.batch_cap --ckpt CKPT --spm SPM --data DATA --device cuda --json OUT/batch_cap.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
from functools import partial
from pathlib import Path
from typing import Any, Dict, List, Tuple

from bench import harness


def long_lines(data: Path, join: int, lines: int) -> Tuple[List[str], List[str]]:
    """Test sentences joined ``join`` at a time within each document: (lines, docids)."""
    src = (data / "test.en").read_text(encoding="utf-8").splitlines()
    ids = (data / "test.docids").read_text(encoding="utf-8").splitlines()
    out: List[str] = []
    out_ids: List[str] = []
    group: List[str] = []
    for k, (s, d) in enumerate(zip(src, ids, strict=True)):
        group.append(s)
        if len(group) == join or k + 1 == len(src) or ids[k + 1] != d:
            out.append(" ".join(group))
            out_ids.append(d)
            group = []
    if lines:
        out, out_ids = out[:lines], out_ids[:lines]
    return out, out_ids


def translations(translator, src: List[str], ids: List[str]) -> List[str]:
    return list(translator.translate(src, ids, progress=False))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ckpt", required=True)
    p.add_argument("--spm", required=True)
    p.add_argument("--data", required=True, help="folder with test.en and test.docids")
    p.add_argument("--device", choices=("cpu", "cuda"), required=True)
    p.add_argument("--join", type=int, default=4, help="test sentences per line (default 4)")
    p.add_argument("--lines", type=int, default=400, help="the first N joined lines (0: all)")
    p.add_argument("--caps", type=int, nargs="+", default=[16384, 32768, 65536, 0], help="tokens per batch (0: none)")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--max-len-a", type=float, default=0.0, help="as translate's")
    p.add_argument("--max-len-b", type=int, default=200, help="as translate's")
    harness.add_arguments(p, repeats=1)
    args = harness.parse(p, argv)
    if args.join < 1 or args.lines < 0 or args.repeats < 1 or any(c < 0 for c in args.caps):
        sys.exit("--join >= 1, --lines >= 0, --repeats >= 1, --caps >= 0")
    import torch

    from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
    from contextual_mt.backends.fairseq.translator import DocumentTranslator
    from contextual_mt.inference.decoding import GPU_BATCH_SIZE, GPU_MAX_TOKENS, DecodingOptions

    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("--device cuda: no GPU is visible")
    src, ids = long_lines(Path(args.data), args.join, args.lines)
    model = DocumentModel.load(FairseqModelOptions(args.ckpt, spm=args.spm, cpu=not cuda, dtype="float32"))
    batches: List[Tuple[int, int]] = []
    original = DocumentTranslator._chunks

    def chunks(translator, rows):
        for chunk in original(translator, rows):
            size = [len(r["source"]) + len(r["src_ctx"]) + len(r["tgt_ctx"]) for r in chunk]
            batches.append((len(chunk), max(size)))
            yield chunk

    DocumentTranslator._chunks = chunks  # type: ignore[method-assign]
    sync = torch.cuda.synchronize if cuda else None
    results: Dict[str, Any] = {
        "where": "contextual_mt/inference/decoding.py: GPU_BATCH_SIZE, GPU_MAX_TOKENS; DecodingOptions.batching"
        "(wide=True), asked by the fairseq translator on CUDA when --batch-size is not given",
        "default": {"sentences": GPU_BATCH_SIZE, "max_tokens": GPU_MAX_TOKENS},
        "default_on_this_device": list(DecodingOptions().batching(wide=cuda)),
        "lines": len(src),
        "join": args.join,
        "beam": args.beam,
        "max_len": [args.max_len_a, args.max_len_b],
        "caps": {},
    }
    first = None
    for cap in args.caps:
        decoding = DecodingOptions(
            beam=args.beam,
            max_len_a=args.max_len_a,
            max_len_b=args.max_len_b,
            batch_size=GPU_BATCH_SIZE,
            max_tokens=cap or None,
        )
        translator = DocumentTranslator(model, options=decoding)
        translator.translate(src[:16], ids[:16], progress=False)  # warm-up, untimed
        batches.clear()
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        t = harness.time_it(partial(translations, translator, src, ids), repeats=args.repeats, sync=sync)
        hyps = t.result
        first = first if first is not None else hyps
        per_run = len(batches) // args.repeats
        chosen = batches[:per_run]
        results["caps"][str(cap or "none")] = {
            "seconds": t.times,
            "sentences_per_s": t.rate(len(src)),
            "batches": len(chosen),
            "rows_per_batch": {"median": statistics.median(r for r, _ in chosen), "max": max(r for r, _ in chosen)}
            if chosen
            else None,
            "longest_row_tokens": max((n for _, n in chosen), default=None),
            "batch_shapes": [list(b) for b in chosen],
            "peak_gpu_mib": torch.cuda.max_memory_allocated() / 2**20 if cuda else None,
            "lines_differing_from_first": sum(a != b for a, b in zip(hyps, first, strict=True)),
        }
        r = results["caps"][str(cap or "none")]
        print(
            f"cap {cap or 'none'}: {r['sentences_per_s']:.1f} lines/s, {r['batches']} batches, rows per batch "
            f"{r['rows_per_batch']}, longest row {r['longest_row_tokens']} tokens, peak {r['peak_gpu_mib']} MiB, "
            f"{r['lines_differing_from_first']} lines differ",
            flush=True,
        )
        if args.json:  # after every cap: a run cut short keeps the caps done
            harness.write_json(args.json, harness.record("batch_cap", results, args, args.device))
    DocumentTranslator._chunks = original  # type: ignore[method-assign]
    harness.finish(args, "batch_cap", results, device=args.device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
