"""P-CXMI with a Hugging Face model: `contextual-mt cxmi --hf-model` (PCXMIScorer on the HF
backend: token batches, both passes in shared batches, the output layer only at scored
positions) against a per-example loop as Inseq computes it (one sentence at a time, two full
forwards: with and without context).

The model is a Marian at opus-mt size with random weights (d_model 512, 6+6 layers, 8 heads,
FFN 2048, 58,101-entry output layer; speed does not depend on the weights), its tokenizer
trained on the demo corpus. Sentences: the first documents of the demo test split, context 1/1.
Each method runs in its own process (so that its peak resident memory is its own), methods
interleaved over the repeats; timings exclude model loading. Both methods' token P-CXMI are
compared (max abs difference).

    .venv/bin/python -m bench.hf_cxmi_speed --sentences 400 --repeats 2 [--json result.json]
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


def build(work: Path, sentences: int) -> Path:
    from contextual_mt.demo.corpus import generate_demo_data
    from tests.hf_models import OPUS_MT_SIZE, build_marian

    data = work / "data"
    generate_demo_data(str(data), train_docs=300, valid_docs=5, test_docs=120, seed=13)
    train_en = (data / "train.en").read_text().splitlines()
    train_fr = (data / "train.fr").read_text().splitlines()
    for ext in ("en", "fr", "docids"):
        lines = (data / f"test.{ext}").read_text().splitlines()[:sentences]
        (work / f"test.{ext}").write_text("\n".join(lines) + "\n")
    return build_marian(
        work / "marian",
        **OPUS_MT_SIZE,
        vocab_size=58101,
        lines_src=train_en,
        lines_tgt=train_fr,
        spm_vocab=4000,
        max_positions=512,
    )


def run_batched(work: Path, max_tokens: int, dtype: str = "float32") -> dict:
    import torch

    from contextual_mt.analysis.cxmi import PCXMIScorer
    from contextual_mt.backends.hf.options import HFModelOptions

    torch.set_num_threads(torch.get_num_threads())
    src, ref, ids = ((work / f"test.{e}").read_text().splitlines() for e in ("en", "fr", "docids"))
    scorer = PCXMIScorer.from_checkpoint(
        HFModelOptions(str(work / "marian"), cpu=True, dtype=dtype), batch_size=10_000, max_tokens=max_tokens
    )
    timed = harness.time_it(
        lambda: [r for batch in scorer.score(src, ref, ids, progress=False) for r in batch], repeats=1
    )
    records = timed.result
    return {
        "seconds": timed.median,
        "tokens": sum(len(r["token_pcxmi"]) for r in records),
        "pcxmi": {r["line"]: r["token_pcxmi"] for r in records},
    }


def run_loop(work: Path) -> dict:
    """One sentence at a time, two forwards with full logits: what a per-example tool does."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    src, ref, ids = ((work / f"test.{e}").read_text().splitlines() for e in ("en", "fr", "docids"))
    tok = AutoTokenizer.from_pretrained(work / "marian")
    model = AutoModelForSeq2SeqLM.from_pretrained(work / "marian").eval()
    start_token = model.config.decoder_start_token_id

    @torch.no_grad()
    def log_probs(source: str, target: str, tgt_ctx: str) -> torch.Tensor:
        enc = tok(source, return_tensors="pt").input_ids
        scored = tok(text_target=target).input_ids
        forced = [start_token] + (tok(text_target=tgt_ctx, add_special_tokens=False).input_ids if tgt_ctx else [])
        logits = model(input_ids=enc, decoder_input_ids=torch.tensor([forced + scored[:-1]])).logits[0]
        lp = torch.log_softmax(logits, -1)[len(forced) - 1 :]
        return lp.gather(-1, torch.tensor(scored).unsqueeze(-1)).squeeze(-1)

    def loop():
        out, tokens = {}, 0
        for i in range(len(src)):
            first = i == 0 or ids[i] != ids[i - 1]
            # two forwards for every sentence, as a per-example tool does (at a document start the
            # "context" input is the sentence alone)
            a = log_probs(src[i], ref[i], "")
            c = log_probs(src[i] if first else f"{src[i - 1]} {src[i]}", ref[i], "" if first else ref[i - 1])
            out[i + 1] = (c - a).tolist()
            tokens += len(a)
        return out, tokens

    timed = harness.time_it(loop, repeats=1)
    out, tokens = timed.result
    return {"seconds": timed.median, "tokens": tokens, "pcxmi": out}


def child(args) -> None:
    work = Path(args.work)
    if args.method == "loop":
        result = run_loop(work)
    else:
        result = run_batched(work, args.max_tokens, "bfloat16" if args.method == "batched_bf16" else "float32")
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(args.result).write_text(json.dumps(result))


def run_child(work: Path, method: str, max_tokens: int) -> harness.Elapsed:
    """One method in its own process: its own seconds (loading excluded), and its record."""
    out = work / f"{method}.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.hf_cxmi_speed",
            "--method",
            method,
            "--work",
            str(work),
            "--result",
            str(out),
            "--max-tokens",
            str(max_tokens),
        ],
        check=True,
        cwd=harness.REPO,
    )
    record = json.loads(out.read_text())
    return harness.Elapsed(record["seconds"], record)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sentences", type=int, default=400)
    p.add_argument("--max-tokens", type=int, default=1024)
    p.add_argument(
        "--bf16", action="store_true", help="also the batched scorer in bfloat16 (CPUs with AVX512-BF16/AMX)"
    )
    p.add_argument("--method", help=argparse.SUPPRESS)
    p.add_argument("--work", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    harness.add_arguments(p, repeats=2)
    args = harness.parse(p, argv)
    if args.method:
        return child(args)
    import torch

    print(harness.machine_line(harness.machine_info()), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        build(work, args.sentences)
        methods = ["batched", "loop", *(["batched_bf16"] if args.bf16 else [])]
        timings = harness.time_interleaved(
            {m: (lambda m=m: run_child(work, m, args.max_tokens)) for m in methods}, repeats=args.repeats, rotate=False
        )
    runs = {m: t.results for m, t in timings.items()}
    b, lp = runs["batched"][-1], runs["loop"][-1]
    diff = max(abs(x - y) for line in b["pcxmi"] for x, y in zip(b["pcxmi"][line], lp["pcxmi"][line], strict=True))
    rate = {m: t.rate(t.result["tokens"]) for m, t in timings.items()}
    print(
        f"threads {torch.get_num_threads()}, {len(b['pcxmi'])} sentences, {b['tokens']} target tokens "
        f"(with </s>), Marian 512/2048 6+6 layers, vocabulary 58,101, random weights"
    )
    for m, rs in runs.items():
        times = ", ".join(f"{r['seconds']:.1f}s" for r in rs)
        print(
            f"  {m:8s} {rate[m]:8.1f} tokens/s  (times {times}; peak RSS {max(r['peak_rss_mib'] for r in rs):.0f} MiB)"
        )
    print(f"  speed-up {rate['batched'] / rate['loop']:.2f}x; max |token P-CXMI difference| {diff:.2e} nats")
    if "batched_bf16" in runs:
        h = runs["batched_bf16"][-1]
        dh = max(abs(x - y) for line in h["pcxmi"] for x, y in zip(h["pcxmi"][line], b["pcxmi"][line], strict=True))
        print(f"  bfloat16: {rate['batched_bf16'] / rate['loop']:.2f}x the loop; max |difference to float32| {dh:.2e}")
    rows = [harness.Row(f"P-CXMI, {m}", "tokens/s", rate["loop"], rate[m]) for m in methods if m != "loop"]
    print(harness.table(rows, baseline="per-example loop", ours="contextual-mt cxmi"))
    summary = {
        "sentences": len(b["pcxmi"]),
        "tokens": b["tokens"],
        "tokens_per_s": rate,
        "timings": {m: t.to_dict(items=t.result["tokens"]) for m, t in timings.items()},
        "peak_rss_mib": {m: max(r["peak_rss_mib"] for r in rs) for m, rs in runs.items()},
        "max_abs_pcxmi_difference": diff,
        "rows": harness.compare(rows),
    }
    harness.finish(args, "hf_cxmi_speed", summary)


if __name__ == "__main__":
    main()
