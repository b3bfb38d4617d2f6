"""Context attribution throughput: `contextual-mt attribute --hf-model` against Inseq 0.7.1's
`attribute-context` (PECoRe), side by side in one run, on the same tiny random Marian, the same
sentences and the same methods, on CPU.

Sentences: ``--docs`` documents of the 12 EN/FR sentences of tests/hf_models.py (the tokenizer's
own text), context 1/1: each sentence after the first of its document is one Inseq example
(previous source and target sentence as context, the reference forced). Inseq runs in its own
virtual environment (``--inseq-python``, bench/attribution_inseq/README.md says how it is made:
it needs transformers 5, the project pins 4.57) through bench/attribution_inseq/run_inseq.py;
its timing covers its attribution calls only (model loaded before). Ours is timed around
``run_attribute`` whole (model loading, reading and writing included), which also scores the
documents' first sentences (CTI only; not counted as examples). Both run on ``--threads``
torch threads. Settings matched: KL as the CTI metric, λ = 1 per sentence (``--cti-scope
sentence``), cues λ = 1, the contrast with the no-context prediction (Inseq's
``contrast_prob_diff``, our ``--contrast foil``), saliency and input x gradient. The methods
differ in details that do not change the work done (Inseq's KL is KL(p_A || p_C), ours
KL(p_C || p_A); Inseq selects on |score| with the unbiased std; Inseq contrasts probabilities,
we log-probabilities).

    .venv/bin/python -m bench.attribution_speed --docs 20 --threads 1 \\
        --inseq-python /work/inseq-venv/bin/python [--json result.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

from bench import harness

REPO = harness.REPO


def ours(folder: Path, work: Path, method: str, threads: int) -> dict:
    import torch

    from contextual_mt.attribution.attribute import AttributeOptions, run_attribute
    from contextual_mt.backends.hf.options import HFModelOptions

    torch.set_num_threads(threads)
    model = HFModelOptions(str(folder), source_context_size=1, target_context_size=1, cpu=True)
    out = work / f"ours-{method}.jsonl"
    options = AttributeOptions(
        model,
        str(work / "src.en"),
        str(work / "docids"),
        str(out),
        reference=str(work / "ref.fr"),
        cti_scope="sentence",
        method=method,
        contrast="foil",
        progress=False,
        resume=False,
    )
    timed = harness.time_it(lambda: run_attribute(options), repeats=1)
    summary = timed.result
    return {
        "seconds": timed.median,
        "selected_tokens": summary["selected_tokens"],
        "cues": summary["cues"],
    }


def inseq(python: str, folder: Path, work: Path, examples: list, method: str, threads: int) -> dict:
    job = {
        "model": str(folder),
        "method": method,
        "metric": "kl_divergence",
        "attributed_fn": "contrast_prob_diff",
        "context_sensitivity_std_threshold": 1.0,
        "attribution_std_threshold": 1.0,
        "threads": threads,
        "warmup": 1,
        "repeat": 1,
        "examples": examples,
    }
    path, out = work / f"inseq-{method}.json", work / f"inseq-{method}.result.json"
    path.write_text(json.dumps(job, ensure_ascii=False))
    subprocess.run(
        [python, str(REPO / "bench/attribution_inseq/run_inseq.py"), str(path), "-o", str(out)],
        check=True,
        stderr=subprocess.DEVNULL,
    )
    result = json.loads(out.read_text())
    selected = sum(len(r.get("selected", r.get("cti_selected", []))) for r in result["results"])
    return {"seconds": result["seconds"], "selected_tokens": selected, "version": result.get("inseq_version")}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--methods", nargs="+", default=["saliency", "input_x_gradient"])
    ap.add_argument("--inseq-python", default="/work/inseq-venv/bin/python")
    harness.add_arguments(ap, repeats=None)
    args = harness.parse(ap, argv)
    if not Path(args.inseq_python).is_file():
        raise SystemExit(f"{args.inseq_python}: no such Python (--inseq-python; bench/attribution_inseq/README.md)")
    print(harness.machine_line(harness.machine_info()), flush=True)
    from tests.hf_models import EN, FR, build_marian

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = build_marian(work / "marian")
        (work / "src.en").write_text("\n".join(EN * args.docs) + "\n")
        (work / "ref.fr").write_text("\n".join(FR * args.docs) + "\n")
        (work / "docids").write_text("\n".join(f"d{d}" for d in range(args.docs) for _ in EN) + "\n")
        examples = [
            {"source_context": EN[i - 1], "source": EN[i], "target_context": FR[i - 1], "target": FR[i]}
            for _ in range(args.docs)
            for i in range(1, len(EN))
        ]
        rows = {}
        for method in args.methods:
            a = ours(folder, work, method, args.threads)
            b = inseq(args.inseq_python, folder, work, examples, method, args.threads)
            n = len(examples)
            rows[method] = {
                "examples": n,
                "ours": a,
                "inseq": b,
                "ours_examples_per_s": n / a["seconds"],
                "inseq_examples_per_s": n / b["seconds"],
                "ratio": b["seconds"] / a["seconds"],
            }
            print(
                f"{method}: {n} examples; contextual-mt {a['seconds']:.2f} s ({n / a['seconds']:.1f}/s, "
                f"{a['selected_tokens']} tokens selected), Inseq {b['seconds']:.2f} s ({n / b['seconds']:.2f}/s, "
                f"{b['selected_tokens']} selected): {b['seconds'] / a['seconds']:.1f}x",
                flush=True,
            )
    table = [harness.Row(m, "examples/s", r["inseq_examples_per_s"], r["ours_examples_per_s"]) for m, r in rows.items()]
    print(harness.table(table, baseline="Inseq attribute-context", ours="contextual-mt attribute"))
    harness.finish(args, "attribution_speed", {"threads": args.threads, "docs": args.docs, "methods": rows})


if __name__ == "__main__":
    main()
