"""float32 against bfloat16 (and float16 on CUDA) with a Hugging Face model on one device:
`contextual-mt cxmi --hf-model` (PCXMIScorer on the HF backend) side by side, and optionally
`translate --hf-model` (HFDocumentTranslator).

The model is a Marian at opus-mt size with random weights (d_model 512, 6+6 layers, 8 heads,
FFN 2048, 58,101-entry output layer), its tokenizers trained on the demo corpus; everything
is built locally, nothing is downloaded. ``--head-scale`` multiplies its output layer so that
the logits reach a trained model's size (the random ones stay near 1; at 10 they reach about
30), where half precision rounding is coarser. Sentences: the demo test split, context 1/1.

Variants, each in its own process (its own cuDNN graph cache and peak memory), interleaved
over the repeats; timings exclude loading:

    float32, bfloat16, float16 (CUDA only)   the code as it is
    bfloat16+cudnn (CUDA only)   cuDNN attention allowed (torch's own choice, what the code did
                                 before): measures the per-shape graph building it costs
    bfloat16-unpadded            the output layer's rows not padded to a multiple of 64

For each: target tokens/s, the ratio to float32, max and mean |token P-CXMI - float32's| (nats),
the scoring path (output layer at the scored positions, or the full forward), what the output
layer check measured, the attention kernels and host syncs of one profiled batch, peak memory.

    .venv/bin/python -m bench.hf_dtype_speed --device cpu --sentences 200 --repeats 2
    python3 -m bench.hf_dtype_speed --device cuda --sentences 3000 --repeats 3 --translate 300 \\
        --max-tokens 4096,8192,16384 --json $OUT/dtype_speed.json
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import harness

CUDA_VARIANTS = ["float32", "bfloat16", "float16", "bfloat16+cudnn", "bfloat16-unpadded"]
CPU_VARIANTS = ["float32", "bfloat16", "bfloat16-unpadded"]


def fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def build(work: Path, sentences: int, head_scale: float) -> None:
    import torch
    from transformers import MarianMTModel

    from contextual_mt.demo.corpus import generate_demo_data
    from tests.hf_models import OPUS_MT_SIZE, build_marian

    data = work / "data"
    generate_demo_data(str(data), train_docs=300, valid_docs=5, test_docs=max(20, sentences // 5 + 20), seed=13)
    for ext in ("en", "fr", "docids"):
        lines = (data / f"test.{ext}").read_text().splitlines()[:sentences]
        (work / f"test.{ext}").write_text("\n".join(lines) + "\n")
    train_en = (data / "train.en").read_text().splitlines()
    train_fr = (data / "train.fr").read_text().splitlines()
    folder = build_marian(
        work / "marian",
        **OPUS_MT_SIZE,
        vocab_size=58101,
        lines_src=train_en,
        lines_tgt=train_fr,
        spm_vocab=4000,
        max_positions=512,
    )
    if head_scale != 1:
        model = MarianMTModel.from_pretrained(folder)
        model.config.tie_word_embeddings = False  # scale the output layer only
        with torch.no_grad():
            model.lm_head.weight = torch.nn.Parameter(model.lm_head.weight.detach() * head_scale)
        model.save_pretrained(folder)


def variant_settings(variant: str):
    """(dtype, allow cuDNN attention, pad the output layer)."""
    dtype = variant.split("+")[0].split("-")[0]
    return dtype, variant.endswith("+cudnn"), not variant.endswith("-unpadded")


def child(args) -> None:
    import contextlib

    import torch
    from torch.profiler import ProfilerActivity, profile

    from contextual_mt.analysis.pcxmi_scorer import PCXMIScorer
    from contextual_mt.backends.hf.model import HFModel
    from contextual_mt.backends.hf.options import HFModelOptions
    from contextual_mt.backends.hf.scoring import HFScoringBackend

    work = Path(args.work)
    dtype, cudnn, padded = variant_settings(args.method)
    if cudnn:  # torch's own attention backend choice, as before the fix
        HFModel.attention = lambda self: contextlib.nullcontext()
    if not padded:
        HFScoringBackend.HEAD_ROWS_MULTIPLE = 1
    src, ref, ids = ((work / f"test.{e}").read_text().splitlines() for e in ("en", "fr", "docids"))
    options = HFModelOptions(str(work / "marian"), cpu=args.device == "cpu", dtype=dtype)
    backend = HFScoringBackend.open(options, args.max_tokens or None)
    scorer = PCXMIScorer(backend, batch_size=10_000, name="bench", max_tokens=backend.max_tokens)
    cuda = args.device == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    batches = []
    original = backend._forward

    def counted(rows, fast=None):
        batches.append(len(rows))
        return original(rows, fast)

    backend._forward = counted
    sync = torch.cuda.synchronize if cuda else None
    timed = harness.time_it(
        lambda: [r for batch in scorer.score(src, ref, ids, progress=False) for r in batch], repeats=1, sync=sync
    )
    records = timed.result
    result = {
        "variant": args.method,
        "seconds": timed.median,
        "tokens": sum(len(r["token_pcxmi"]) for r in records),
        "batches": len(batches),
        "max_tokens": backend.max_tokens,
        "path": "output layer at scored positions" if backend.fast_head else "full forward",
        "head_check": backend.head_check,
        "pcxmi": {r["line"]: r["token_pcxmi"] for r in records},
    }
    if cuda:
        result["peak_gpu_mib"] = torch.cuda.max_memory_allocated() / 2**20
    # one more batch under the profiler: which attention kernels, how many host syncs and casts
    few = max(1, min(len(src), 40))
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        list(scorer.score(src[:few], ref[:few], ids[:few], progress=False))
    ops = {e.key: e.count for e in prof.key_averages()}
    result["profile"] = {
        "sentences": few,
        "batches": len(batches) - result["batches"],
        "attention": {
            k.replace("aten::_scaled_dot_product_", ""): v
            for k, v in ops.items()
            if k.startswith("aten::_scaled_dot_product_")
        },
        "host syncs (_local_scalar_dense)": ops.get("aten::_local_scalar_dense", 0),
        "dtype casts (_to_copy)": ops.get("aten::_to_copy", 0),
    }
    if args.translate:
        from contextual_mt.backends.hf.translator import HFDocumentTranslator
        from contextual_mt.inference.decoding import DecodingOptions

        n = min(args.translate, len(src))
        translator = HFDocumentTranslator(
            backend.hf, DecodingOptions(beam=4, max_len_a=1.2, max_len_b=10, batch_size=64, decoding="sequential")
        )
        timed = harness.time_it(lambda: translator.translate(src[:n], ids[:n], progress=False), repeats=1, sync=sync)
        hyps = timed.result
        result["translate"] = {
            "sentences": n,
            "seconds": timed.median,
            "hypotheses": hyps,
            "words": sum(len(h.split()) for h in hyps),
        }
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(args.result).write_text(json.dumps(result))


def times(seconds) -> str:
    return ", ".join(f"{s:.2f}s" for s in seconds)


def report(runs: dict, args, device: str) -> dict:
    base = runs["float32"][-1]["pcxmi"]
    rate = {m: harness.summarize([r["seconds"] for r in rs]).rate(rs[-1]["tokens"]) for m, rs in runs.items()}
    out = {
        "device": device,
        "sentences": args.sentences,
        "repeats": args.repeats,
        "head_scale": args.head_scale,
        "variants": {},
    }
    first = runs["float32"][-1]
    print(
        f"{device}; {len(base)} sentences, {first['tokens']} target tokens (with </s>), context 1/1; Marian "
        f"512/2048 6+6 layers, vocabulary 58,101, random weights, output layer x{args.head_scale}; "
        f"max_tokens {first['max_tokens']}"
    )
    print(
        f"  {'variant':18s} {'tokens/s':>9s} {'vs fp32':>7s} {'max|dP|':>8s} {'mean|dP|':>8s}  path; check; "
        "profiled batch; memory"
    )
    for m, rs in runs.items():
        last = rs[-1]
        diffs = [abs(x - y) for line, values in last["pcxmi"].items() for x, y in zip(values, base[line], strict=True)]
        check = ", ".join(f"{k} {v:.3g}" for k, v in last["head_check"].items())
        p = last["profile"]
        memory = (
            f"peak GPU {last['peak_gpu_mib']:.0f} MiB"
            if "peak_gpu_mib" in last
            else f"peak RSS {max(r['peak_rss_mib'] for r in rs):.0f} MiB"
        )
        print(
            f"  {m:18s} {rate[m]:9.1f} {rate[m] / rate['float32']:6.2f}x {max(diffs):8.4f} "
            f"{sum(diffs) / len(diffs):8.5f}  {last['path']}; {check}; {p['batches']} batches of {p['sentences']} "
            f"sentences: attention {p['attention']}, {p['host syncs (_local_scalar_dense)']} syncs, "
            f"{p['dtype casts (_to_copy)']} casts; {memory}; times {times(r['seconds'] for r in rs)} "
            f"in {last['batches']} batches"
        )
        out["variants"][m] = {
            "tokens_per_s": rate[m],
            "vs_float32": rate[m] / rate["float32"],
            "max_abs_dpcxmi": max(diffs),
            "mean_abs_dpcxmi": sum(diffs) / len(diffs),
            "path": last["path"],
            "head_check": last["head_check"],
            "profile": p,
            "seconds": [r["seconds"] for r in rs],
            "batches": last["batches"],
            "max_tokens": last["max_tokens"],
            **({"peak_gpu_mib": last["peak_gpu_mib"]} if "peak_gpu_mib" in last else {}),
            "peak_rss_mib": max(r["peak_rss_mib"] for r in rs),
        }
    if args.translate:
        print(f"  translate, {args.translate} sentences, beam 4, sequential waves:")
        ref = runs["float32"][-1]["translate"]["hypotheses"]
        t_rate = {
            m: harness.summarize([r["translate"]["seconds"] for r in rs]).rate(rs[-1]["translate"]["sentences"])
            for m, rs in runs.items()
        }
        for m, rs in runs.items():
            t = rs[-1]["translate"]
            same = sum(a == b for a, b in zip(t["hypotheses"], ref, strict=True))
            print(
                f"  {m:18s} {t_rate[m]:9.2f} sentences/s {t_rate[m] / t_rate['float32']:6.2f}x  "
                f"({same}/{len(ref)} translations as float32's; times "
                f"{times(r['translate']['seconds'] for r in rs)})"
            )
            out["variants"][m]["translate"] = {
                "sentences_per_s": t_rate[m],
                "vs_float32": t_rate[m] / t_rate["float32"],
                "same_as_float32": same,
            }
    return out


def run_child(work: Path, method: str, size: int, args) -> harness.Elapsed:
    """One variant in its own process: its own seconds (loading excluded), and its record."""
    out = work / f"{method}.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.hf_dtype_speed",
            "--device",
            args.device,
            "--method",
            method,
            "--work",
            str(work),
            "--result",
            str(out),
            "--max-tokens",
            str(size),
            "--translate",
            str(args.translate),
        ],
        check=True,
        cwd=harness.REPO,
    )
    record = json.loads(out.read_text())
    return harness.Elapsed(record["seconds"], record)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=("cuda", "cpu"), required=True)
    p.add_argument("--sentences", type=int, default=400)
    p.add_argument("--max-tokens", default="", help="comma-separated; default: the backend's (1024 CPU, 8192 GPU)")
    p.add_argument(
        "--variants",
        default="",
        help=f"comma-separated (default cuda: {','.join(CUDA_VARIANTS)}; cpu: {','.join(CPU_VARIANTS)})",
    )
    p.add_argument("--head-scale", type=float, default=1.0)
    p.add_argument("--translate", type=int, default=0, help="also translate this many sentences per variant")
    p.add_argument("--method", help=argparse.SUPPRESS)
    p.add_argument("--work", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    harness.add_arguments(p, repeats=2)
    p.error = fail  # one line, exit 1
    args = harness.parse(p, argv)
    if args.method:
        args.max_tokens = int(args.max_tokens or 0)
        return child(args)
    import torch

    variants = args.variants.split(",") if args.variants else (CUDA_VARIANTS if args.device == "cuda" else CPU_VARIANTS)
    known = CUDA_VARIANTS if args.device == "cuda" else CPU_VARIANTS
    if bad := [v for v in variants if v not in known]:
        fail(f"--variants: {', '.join(bad)} not among {', '.join(known)} on {args.device}")
    if "float32" not in variants:
        variants = ["float32", *variants]  # the reference of every ratio
    if args.sentences < 2 or args.repeats < 1 or args.translate < 0 or args.head_scale <= 0:
        fail("--sentences must be >= 2, --repeats >= 1, --translate >= 0, --head-scale > 0")
    try:
        sizes = [int(x) for x in args.max_tokens.split(",")] if args.max_tokens else [0]
    except ValueError:
        fail(f"--max-tokens: comma-separated integers (got {args.max_tokens!r})")
    if any(s < 0 for s in sizes):
        fail("--max-tokens: positive integers")
    if args.device == "cuda" and not torch.cuda.is_available():
        fail("--device cuda: no GPU is visible")
    if args.device == "cuda":
        import transformers

        device = (
            f"{torch.cuda.get_device_name(0)} (sm{''.join(map(str, torch.cuda.get_device_capability(0)))}), "
            f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, transformers "
            f"{transformers.__version__}"
        )
    else:
        device = f"CPU, {torch.get_num_threads()} threads, torch {torch.__version__}"
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        build(work, args.sentences, args.head_scale)
        for size in sizes:
            timings = harness.time_interleaved(
                {m: (lambda m=m, size=size: run_child(work, m, size, args)) for m in variants},
                repeats=args.repeats,
                rotate=False,
            )
            results.append(report({m: t.results for m, t in timings.items()}, args, device))
    harness.finish(args, "hf_dtype_speed", results, device=args.device)


if __name__ == "__main__":
    main()
