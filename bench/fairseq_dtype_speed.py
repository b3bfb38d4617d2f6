"""Half precision at inference with a fairseq checkpoint (``--dtype``): float32 against bfloat16
and float16, side by side in one run on one device.

The checkpoint is loaded once per dtype (``DocumentModel.load``: cast at load). Every repeat runs,
for each dtype in turn (the order rotates from repeat to repeat, so that no dtype always runs
first or last): translation with gold target context (one pass), translation with predicted
target context (``--decoding auto``: waves on CPU, rounds on a GPU), both with beam ``--beam``,
and P-CXMI of the references (both passes). Reported per dtype: the median sentences/s and
tokens/s of each task (tokens: the hypotheses' pieces with </s> for translation, the references'
for P-CXMI) and their ratio to float32; the lines that differ from float32's; the largest
|ΔP-CXMI| of a token and the corpus CXMI difference; on a GPU the peak memory. A warm-up on the
first 16 lines of each dtype is not timed.

    python -m bench.fairseq_dtype_speed --ckpt demo/checkpoints/fr/context/checkpoint_best.pt \\
        --spm demo/data/fr/spm.model --data demo/data/fr --device cpu --dtypes float32 bfloat16 \\
        [--lines 300] [--repeats 3] [--beam 4] [--batch-size 64] [--json result.json]

    # on a GPU (float16 and bfloat16 against float32):
    python -m bench.fairseq_dtype_speed ... --device cuda --dtypes float32 float16 bfloat16 --lines 0
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path
from typing import Dict, List

from bench import harness

TASKS = ("translate-gold", "translate-predicted", "cxmi")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--spm", required=True)
    ap.add_argument("--data", required=True, help="folder with test.en, test.fr and test.docids")
    ap.add_argument("--device", choices=("cpu", "cuda"), required=True)
    ap.add_argument(
        "--dtypes",
        nargs="+",
        default=None,
        help="default: float32 bfloat16 on cpu, "
        "float32 float16 bfloat16 on cuda (float32 is always run: the reference)",
    )
    ap.add_argument("--lines", type=int, default=300, help="the first N test lines (0: all)")
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--max-len-a", type=float, default=0.0, help="as translate's")
    ap.add_argument("--max-len-b", type=int, default=200, help="as translate's")
    harness.add_arguments(ap, repeats=3)
    a = harness.parse(ap, argv)

    import numpy as np
    import torch

    from contextual_mt.analysis.pcxmi_scorer import PCXMIScorer
    from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
    from contextual_mt.backends.fairseq.scoring import scoring_backend
    from contextual_mt.backends.fairseq.translator import DocumentTranslator
    from contextual_mt.inference.decoding import DecodingOptions

    if a.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no GPU here")
    dtypes = a.dtypes or (["float32", "bfloat16"] if a.device == "cpu" else ["float32", "float16", "bfloat16"])
    dtypes = ["float32"] + [d for d in dtypes if d != "float32"]
    data = Path(a.data)
    read = lambda name: (data / name).read_text(encoding="utf-8").splitlines()  # noqa: E731
    src, ref, ids = read("test.en"), read("test.fr"), read("test.docids")
    if a.lines:
        src, ref, ids = src[: a.lines], ref[: a.lines], ids[: a.lines]
    cuda = a.device == "cuda"
    device = (
        torch.cuda.get_device_name(0)
        if cuda
        else f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"
    )

    models = {d: DocumentModel.load(FairseqModelOptions(a.ckpt, spm=a.spm, cpu=not cuda, dtype=d)) for d in dtypes}
    for d, m in models.items():  # the cast really happened
        assert {p.dtype for p in m.model.parameters()} == {getattr(torch, d)}, d
    decoding = DecodingOptions(beam=a.beam, batch_size=a.batch_size, max_len_a=a.max_len_a, max_len_b=a.max_len_b)
    translators = {d: DocumentTranslator(m, options=decoding) for d, m in models.items()}
    scorers = {d: PCXMIScorer(scoring_backend(m), batch_size=a.batch_size) for d, m in models.items()}
    codec = models["float32"].tgt_codec
    ref_tokens = sum(len(codec.encode(r)) + 1 for r in ref)

    def task(name: str, d: str, s, r, i):
        if name == "cxmi":
            return [rec for batch in scorers[d].score(s, r, i, progress=False) for rec in batch]
        return translators[d].translate(s, i, r if name == "translate-gold" else None, progress=False)

    def timed(name: str, d: str):
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        t = harness.time_it(
            lambda: task(name, d, src, ref, ids), repeats=1, sync=torch.cuda.synchronize if cuda else None
        )
        return t.result, t.median

    for d in dtypes:  # warm-up (allocator, kernels), not timed
        for name in TASKS:
            task(name, d, src[:16], ref[:16], ids[:16])

    seconds: Dict[str, Dict[str, List[float]]] = {d: {t: [] for t in TASKS} for d in dtypes}
    outputs: Dict[str, Dict[str, object]] = {d: {} for d in dtypes}
    peak: Dict[str, int] = dict.fromkeys(dtypes, 0)
    for r in range(a.repeats):
        order = dtypes[r % len(dtypes) :] + dtypes[: r % len(dtypes)]
        for name in TASKS:
            for d in order:
                out, s = timed(name, d)
                seconds[d][name].append(s)
                outputs[d][name] = out
                if cuda:
                    peak[d] = max(peak[d], torch.cuda.max_memory_allocated())
                print(f"[{r + 1}/{a.repeats}] {name:<20} {d:<8} {s:7.2f} s", flush=True)

    def tokens(name: str, d: str) -> int:
        if name == "cxmi":
            return ref_tokens
        return sum(len(codec.encode(h)) + 1 for h in outputs[d][name])

    result = {
        "device": device,
        "machine": harness.machine_info(a.device),
        "torch": torch.__version__,
        "lines": len(src),
        "dtypes": dtypes,
        "settings": vars(a),
        "tasks": {},
    }
    base = {name: harness.summarize(seconds["float32"][name]).median for name in TASKS}
    for d in dtypes:
        row = {}
        for name in TASKS:
            median = harness.summarize(seconds[d][name]).median
            row[name] = {
                "seconds": seconds[d][name],
                "sentences_per_s": len(src) / median,
                "tokens_per_s": tokens(name, d) / median,
                "speed_vs_float32": base[name] / median,
            }
            if name != "cxmi":
                row[name]["lines_differing_from_float32"] = sum(
                    x != y for x, y in zip(outputs[d][name], outputs["float32"][name], strict=True)
                )
        recs, recs32 = outputs[d]["cxmi"], outputs["float32"]["cxmi"]
        row["cxmi"]["max_abs_token_pcxmi_delta"] = max(
            abs(x - y)
            for r16, r32 in zip(recs, recs32, strict=True)
            for x, y in zip(r16["token_pcxmi"], r32["token_pcxmi"], strict=True)
        )
        row["cxmi"]["cxmi"] = float(np.mean([r["sentence_pcxmi"] for r in recs]))
        row["cxmi"]["cxmi_delta"] = row["cxmi"]["cxmi"] - float(np.mean([r["sentence_pcxmi"] for r in recs32]))
        if cuda:
            row["peak_memory_mib"] = peak[d] / 2**20
        result["tasks"][d] = row

    print(
        f"\n{device}, torch {torch.__version__}, {len(src)} lines, beam {a.beam}, batch {a.batch_size}, "
        f"median of {a.repeats}"
    )
    print(
        "| dtype | task | sentences/s | tokens/s | vs float32 | lines ≠ float32 | max \\|ΔP-CXMI\\| per token | ΔCXMI |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for d in dtypes:
        for name in TASKS:
            x = result["tasks"][d][name]
            differ = x.get("lines_differing_from_float32")
            delta = f"{x['max_abs_token_pcxmi_delta']:.4f} | {x['cxmi_delta']:+.4f}" if name == "cxmi" else "|"
            print(
                f"| {d} | {name} | {x['sentences_per_s']:.1f} | {x['tokens_per_s']:.0f} | "
                f"{x['speed_vs_float32']:.2f}x | {'' if differ is None else f'{differ}/{len(src)}'} | {delta} |"
            )
    if cuda:
        print("peak memory: " + ", ".join(f"{d} {result['tasks'][d]['peak_memory_mib']:.0f} MiB" for d in dtypes))
    harness.finish(a, "fairseq_dtype_speed", result, device=a.device)


if __name__ == "__main__":
    main()
