"""Context attribution throughput and memory: `contextual-mt attribute --hf-model` against Inseq's
`attribute-context` (PECoRe), side by side in one run, on the same models, sentences and methods,
on CPU (random weights: speed and memory do not depend on them).

Headline: a Marian at opus-mt size (d_model 512, 6+6 layers, 8 heads, FFN 2048, 32,000-entry
vocabulary; its tokenizer trained on the demo corpus) at three target lengths: segments of
``--lengths`` demo sentences joined (~17, ~38, ~75 target tokens for 3, 7 and 15), ``--pairs``
examples each. Every segment is distinct (no repeated pair): the demo corpus' distinct sentence
pairs (test split, then training split) are cut into segments in order, each length taking its
own sentences; documents of
up to ``--segments`` segments, context 1/1, so each segment after a document's first is one Inseq
example (previous source and target segment as context, the reference forced).

Long context (``--long-context N ...``): a decoder-only GPT-2 of realistic width (12 layers x 768,
12 heads, 32,000-entry vocabulary) attributing one translated sentence whose context (the previous
source and target segments in the prompt) is about N tokens; time and peak resident memory of
both tools, each in its own process. ``--inseq-timeout`` bounds Inseq's run: a run past it, or
killed for memory, is reported as such.

Footnote (``--tiny``): the tiny random Marian of the tests (d_model 32, 2+2 layers) on its 11
distinct EN/FR pairs.

Each tool runs in its own process (its peak resident memory its own) at ``--threads`` torch
threads, the two interleaved per setting. Inseq runs in its own virtual environment
(``--inseq-python``, bench/attribution_inseq/README.md says how it is made) through
bench/attribution_inseq/run_inseq.py: one untimed call first (warm-up), then its attribution calls
timed, the model loaded before. Ours: one untimed ``run_attribute`` over the first document first
(warm-up), then ``run_attribute`` timed (reading and writing included, and the
CTI of the documents' first segments, not counted as examples), its model loading timed apart
and left out of the figure compared (Inseq's excludes it; both are recorded). Settings matched: KL as the CTI
metric, λ = 1 per sentence (``--cti-scope sentence``), cues λ = 1, the contrast with the
no-context prediction (Inseq's ``contrast_prob_diff``, our ``--contrast foil``). The methods differ
in details that do not change the work done (Inseq's KL is KL(p_A || p_C), ours KL(p_C || p_A);
Inseq selects on |score| with the unbiased std; Inseq contrasts probabilities, we log-probabilities),
so the selected token counts differ a little; both are reported.

    .venv/bin/python -m bench.attribution_speed --threads 1 --lengths 3 7 15 --pairs 18 8 4 \\
        --long-context 512 2048 --tiny --inseq-python /work/inseq-venv/bin/python [--json result.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from bench import harness

REPO = harness.REPO
VOCAB = 32_000


# --- data and models ----------------------------------------------------------------------------


def demo_lines(work: Path) -> Tuple[List[str], List[str], List[str], List[str]]:
    """(train EN, train FR, distinct EN, distinct FR): the distinct sentence pairs of the demo
    corpus' test split, then of its training split."""
    from contextual_mt.demo.corpus import generate_demo_data

    data = work / "demo"
    generate_demo_data(str(data), train_docs=300, valid_docs=5, test_docs=400, seed=13)
    read = lambda name: (data / name).read_text().splitlines()  # noqa: E731
    seen, en, fr = set(), [], []
    for s, t in zip(read("test.en") + read("train.en"), read("test.fr") + read("train.fr"), strict=True):
        if s not in seen:
            seen.add(s)
            en.append(s)
            fr.append(t)
    return read("train.en"), read("train.fr"), en, fr


def documents(
    en: List[str], fr: List[str], join: int, examples: int, per_doc: int, start: int
) -> Tuple[Dict[str, List[str]], List[dict], int]:
    """Documents of up to ``per_doc`` segments of ``join`` sentences each, from sentence
    ``start`` on, exactly ``examples`` examples (the last document as long as they need).
    Returns (files' lines, Inseq examples, next sentence)."""
    src: List[str] = []
    tgt: List[str] = []
    ids: List[str] = []
    out: List[dict] = []
    at, d = start, 0
    while len(out) < examples:
        n = min(per_doc, examples - len(out) + 1)
        if at + n * join > len(en):
            raise SystemExit(f"{len(en)} distinct demo sentences are too few for these --lengths/--pairs")
        segments = [(" ".join(en[a : a + join]), " ".join(fr[a : a + join])) for a in range(at, at + n * join, join)]
        at += n * join
        for k, (s, t) in enumerate(segments):
            src.append(s)
            tgt.append(t)
            ids.append(f"d{d}")
            if k:
                out.append(
                    {
                        "source_context": segments[k - 1][0],
                        "source": s,
                        "target_context": segments[k - 1][1],
                        "target": t,
                    }
                )
        d += 1
    return {"src": src, "ref": tgt, "docids": ids}, out, at


def padded_rows(model, real: int) -> None:
    """The output rows beyond the tokenizer's vocabulary never win (zero embedding, low bias):
    the computation keeps its full width, but no tool generates an id the tokenizer lacks."""
    import torch

    with torch.no_grad():
        model.get_input_embeddings().weight[real:] = 0
        if getattr(model, "final_logits_bias", None) is not None:
            model.final_logits_bias[:, real:] = -10.0


def build_opus_size(work: Path, train_en: List[str], train_fr: List[str]) -> Path:
    from transformers import MarianMTModel, MarianTokenizer

    from tests.hf_models import OPUS_MT_SIZE, build_marian

    folder = build_marian(
        work / "marian-opus",
        **OPUS_MT_SIZE,
        vocab_size=VOCAB,
        lines_src=train_en,
        lines_tgt=train_fr,
        spm_vocab=4000,
        max_positions=512,
    )
    model = MarianMTModel.from_pretrained(folder)
    padded_rows(model, len(MarianTokenizer.from_pretrained(folder)))
    model.save_pretrained(folder)
    return folder


def build_long_lm(work: Path, lines: List[str], positions: int) -> Path:
    """GPT-2, 12 layers x 768, 12 heads, a byte-level BPE trained on ``lines`` in a 32,000-entry vocabulary."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    folder = work / "gpt2-long"
    (folder / "bpe").mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        [*lines, "Translate from English to French.", "English: French:"],
        vocab_size=4000,
        min_frequency=1,
        special_tokens=["<|endoftext|>"],
    )
    bpe.save_model(str(folder / "bpe"))
    tok = GPT2TokenizerFast(
        vocab_file=str(folder / "bpe/vocab.json"),
        merges_file=str(folder / "bpe/merges.txt"),
        model_max_length=positions,
    )
    tok.save_pretrained(folder)
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=VOCAB,
        n_positions=positions,
        n_embd=768,
        n_layer=12,
        n_head=12,
        bos_token_id=tok.eos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    model = GPT2LMHeadModel(config)
    padded_rows(model, len(tok))
    model.save_pretrained(folder)
    return folder


# --- one tool, one setting, in its own process --------------------------------------------------


def child(spec_path: str) -> None:
    """Ours in this process: warm-up over the first document, then the timed run; prints JSON."""
    import torch

    from contextual_mt.attribution.attribute import AttributeOptions, run_attribute
    from contextual_mt.backends.hf.options import HFModelOptions

    spec = json.loads(Path(spec_path).read_text())
    torch.set_num_threads(spec["threads"])
    work = Path(spec["work"])

    def options(prefix: str, out: str) -> AttributeOptions:
        model = HFModelOptions(spec["model"], source_context_size=1, target_context_size=1, cpu=True, **spec["extra"])
        return AttributeOptions(
            model,
            str(work / f"{prefix}.src"),
            str(work / f"{prefix}.docids"),
            str(work / out),
            reference=str(work / f"{prefix}.ref"),
            cti_scope="sentence",
            method=spec["method"],
            contrast="foil",
            progress=False,
            resume=False,
            max_tokens=spec.get("max_tokens"),
        )

    if spec["warmup"]:
        run_attribute(options("warm", "warm.jsonl"))
    # the model's loading, timed apart: Inseq's figure excludes it
    from contextual_mt.attribution import attribute

    opened = attribute.open_attribution
    load: List[float] = []

    def timed_open(*a, **k):
        timed = harness.time_it(lambda: opened(*a, **k), repeats=1)
        load.append(timed.median)
        return timed.result

    attribute.open_attribution = timed_open
    timed = harness.time_it(lambda: run_attribute(options("all", f"ours-{spec['method']}.jsonl")), repeats=1)
    summary, whole = timed.result, timed.median
    print(
        json.dumps(
            {
                "seconds": whole - sum(load),  # what Inseq's figure covers: the attribution, model loaded
                "seconds_with_loading": whole,
                "loading_seconds": sum(load),
                "peak_rss_mb": peak_rss_mb(),
                "selected_tokens": summary["selected_tokens"],
                "cues": summary["cues"],
                "cci_passes": summary["cci"].get("passes"),
            }
        )
    )


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM: of this program alone; ru_maxrss would
    include the parent's at the fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_files(work: Path, prefix: str, files: Dict[str, List[str]]) -> None:
    for key, lines in files.items():
        (work / f"{prefix}.{key}").write_text("\n".join(lines) + "\n")


def ours(
    work: Path,
    model: Path,
    files: Dict[str, List[str]],
    method: str,
    threads: int,
    extra: dict,
    warm: Optional[Dict[str, List[str]]] = None,
    root: Path = REPO,
) -> dict:
    """Ours in a child process, ``contextual_mt`` imported from ``root`` (``--before``: another
    checkout, such as the per-token loop of the main branch); the warm-up over ``warm`` (default:
    the first document)."""
    n = files["docids"].count(files["docids"][0])
    write_files(work, "all", files)
    write_files(work, "warm", warm or {k: v[:n] for k, v in files.items()})
    spec = {
        "work": str(work),
        "model": str(model),
        "method": method,
        "threads": threads,
        "warmup": True,
        "extra": extra,
    }
    path = work / "ours.json"
    path.write_text(json.dumps(spec))
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", str(path)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
    )
    if done.returncode:
        return {"failed": f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:] or ''}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def inseq(
    python: str, work: Path, model: Path, examples: list, method: str, threads: int, timeout: Optional[float], **job
) -> dict:
    job = {
        "model": str(model),
        "method": method,
        "metric": "kl_divergence",
        "attributed_fn": "contrast_prob_diff",
        "context_sensitivity_std_threshold": 1.0,
        "attribution_std_threshold": 1.0,
        "threads": threads,
        "warmup": 1,
        "repeat": 1,
        "examples": examples,
        **job,
    }
    path, out = work / f"inseq-{method}.json", work / f"inseq-{method}.result.json"
    out.unlink(missing_ok=True)
    path.write_text(json.dumps(job, ensure_ascii=False))
    try:
        done = subprocess.run(
            [python, str(REPO / "bench/attribution_inseq/run_inseq.py"), str(path), "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"failed": f"did not finish within {timeout:.0f} s (stopped)"}
    if done.returncode:
        why = "killed (out of memory?)" if done.returncode < 0 else f"exit {done.returncode}"
        tail = done.stderr.strip().splitlines()[-1:] if done.stderr else []
        return {"failed": f"{why}: {tail[0] if tail else ''}"}
    result = json.loads(out.read_text())
    selected = sum(len(r.get("cti_selected", [])) for r in result["results"])
    return {
        "seconds": result["seconds"],
        "selected_tokens": selected,
        "peak_rss_mb": result.get("peak_rss_mb"),
        "versions": result.get("versions"),
    }


def compare(name: str, n: int, a: dict, b: dict) -> dict:
    row = {"examples": n, "ours": a, "inseq": b}
    if "seconds" in a and "seconds" in b:
        row["ratio"] = b["seconds"] / a["seconds"]
        row["ours_examples_per_s"] = n / a["seconds"]
        row["inseq_examples_per_s"] = n / b["seconds"]

    def show(d: dict) -> str:
        if "seconds" not in d:
            return d["failed"]
        mem = f", {d['peak_rss_mb']:.0f} MB peak" if d.get("peak_rss_mb") else ""
        return f"{d['seconds']:.2f} s ({d['selected_tokens']} tokens selected{mem})"

    ratio = f": {row['ratio']:.1f}x" if "ratio" in row else ""
    print(f"{name}: {n} examples; contextual-mt {show(a)}, Inseq {show(b)}{ratio}", flush=True)
    return row


def token_lengths(model: Path, targets: Sequence[str]) -> float:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model)
    return sum(len(tok(text_target=t).input_ids) for t in targets) / max(1, len(targets))


# --- the three parts -----------------------------------------------------------------------------


def opus_size(args, work: Path, demo) -> Dict[str, dict]:
    train_en, train_fr, en, fr = demo
    model = build_opus_size(work, train_en, train_fr)
    rows: Dict[str, dict] = {}
    at = 0
    for join, pairs in zip(args.lengths, args.pairs, strict=True):
        files, examples, at = documents(en, fr, join, pairs, args.segments, at)
        length = token_lengths(model, [e["target"] for e in examples])
        for method in args.methods:
            a = ours(work, model, files, method, args.threads, {})
            b = inseq(args.inseq_python, work, model, examples, method, args.threads, None)
            row = compare(f"opus-mt size, {length:.0f}-token targets, {method}", len(examples), a, b)
            if args.before:
                c = ours(work, model, files, method, args.threads, {}, root=Path(args.before))
                row["ours_before"] = c
                if "seconds" in c and "seconds" in a:
                    row["gain_over_before"] = c["seconds"] / a["seconds"]
                    print(f"  {args.before}: {c['seconds']:.2f} s, {row['gain_over_before']:.2f}x slower", flush=True)
            rows[f"{join}-sentence segments, {method}"] = {**row, "target_tokens_mean": length}
    return rows


def long_context(args, work: Path, demo) -> Dict[str, dict]:
    train_en, train_fr, en, fr = demo
    largest = max(args.long_context)
    model = build_long_lm(work, train_en + train_fr, largest + 512)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model)
    rows: Dict[str, dict] = {}
    for n in args.long_context:
        # the context: the previous source and target segments, about n / 2 tokens each
        s: List[str] = []
        t: List[str] = []
        k = 0
        while len(tok(" ".join(s) + " " + " ".join(t)).input_ids) < n:
            s.append(en[k % len(en)])
            t.append(fr[k % len(fr)])
            k += 1
        cur_s, cur_t = en[-1 - n % 7], fr[-1 - n % 7]
        files = {"src": [" ".join(s), cur_s], "ref": [" ".join(t), cur_t], "docids": ["d0", "d0"]}
        prompt_context = f"English: {' '.join(s)}\nFrench: {' '.join(t)}"
        examples = [
            {
                "source_context": prompt_context,
                "source": f"English: {cur_s}\nFrench:",
                "target_context": "",
                "target": f" {cur_t}",
            }
        ]
        extra = {"src_lang": "English", "tgt_lang": "French"}
        warm = {"src": en[:2], "ref": fr[:2], "docids": ["w", "w"]}  # a short document: the code paths warmed
        for method in args.long_methods:
            a = ours(work, model, files, method, args.threads, extra, warm)
            if args.inseq_up_to is not None and n > args.inseq_up_to:
                b = {"failed": f"not run (--inseq-up-to {args.inseq_up_to})"}
            else:
                b = inseq(
                    args.inseq_python,
                    work,
                    model,
                    examples,
                    method,
                    args.threads,
                    args.inseq_timeout,
                    input_template="Translate from English to French.\n{context}\n{current}",
                    warmup=0,
                )
            rows[f"{n} context tokens, {method}"] = compare(
                f"decoder-only 12x768, {n}-token context, {method}", 1, a, b
            )
    return rows


def tiny(args, work: Path) -> Dict[str, dict]:
    from tests.hf_models import EN, FR, build_marian

    model = build_marian(work / "marian-tiny")
    files = {"src": EN, "ref": FR, "docids": ["d0"] * len(EN)}
    examples = [
        {"source_context": EN[i - 1], "source": EN[i], "target_context": FR[i - 1], "target": FR[i]}
        for i in range(1, len(EN))
    ]
    rows = {}
    for method in args.methods:
        a = ours(work, model, files, method, args.threads, {})
        b = inseq(args.inseq_python, work, model, examples, method, args.threads, None)
        rows[method] = compare(f"tiny Marian (footnote), {method}", len(examples), a, b)
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--lengths", type=int, nargs="*", default=[3, 7, 15], help="demo sentences per segment")
    ap.add_argument("--pairs", type=int, nargs="*", default=[18, 8, 4], help="examples per length")
    ap.add_argument("--segments", type=int, default=7, help="segments per document (at most)")
    ap.add_argument("--methods", nargs="+", default=["saliency"])
    ap.add_argument("--long-context", type=int, nargs="*", default=[], help="context tokens (decoder-only)")
    ap.add_argument("--long-methods", nargs="+", default=["saliency"])
    ap.add_argument("--inseq-timeout", type=float, default=1800.0, help="seconds (long context only)")
    ap.add_argument("--inseq-up-to", type=int, help="long context: Inseq only at contexts up to this many tokens")
    ap.add_argument("--tiny", action="store_true", help="also the tiny Marian (footnote)")
    ap.add_argument("--inseq-python", default="/work/inseq-venv/bin/python")
    ap.add_argument("--before", help="also ours from this checkout (e.g. /work/main: the per-token loop), opus-mt size")
    harness.add_arguments(ap, repeats=None)
    args = harness.parse(ap, argv)
    if args.child:
        child(args.child)
        return
    if len(args.lengths) != len(args.pairs):
        raise SystemExit("give as many --pairs as --lengths")
    if not Path(args.inseq_python).is_file():
        raise SystemExit(f"{args.inseq_python}: no such Python (--inseq-python; bench/attribution_inseq/README.md)")
    print(harness.machine_line(harness.machine_info()), flush=True)
    results: Dict[str, dict] = {"threads": args.threads}
    with tempfile.TemporaryDirectory(prefix="attribution-speed-") as tmp:
        work = Path(tmp)
        demo = demo_lines(work)
        if args.lengths:
            results["opus_size"] = opus_size(args, work, demo)
        if args.long_context:
            results["long_context"] = long_context(args, work, demo)
        if args.tiny:
            results["tiny"] = tiny(args, work)
    versions = [
        r["inseq"].get("versions")
        for part in results.values()
        if isinstance(part, dict)
        for r in part.values()
        if isinstance(r, dict) and "inseq" in r
    ]
    results["inseq_versions"] = next((v for v in versions if v), None)
    table = [
        harness.Row(name, "examples/s", r["inseq_examples_per_s"], r["ours_examples_per_s"])
        for name, r in results.get("opus_size", {}).items()
        if "ratio" in r
    ]
    if table:
        print(harness.table(table, baseline="Inseq attribute-context", ours="contextual-mt attribute"))
    harness.finish(args, "attribution_speed", results)


if __name__ == "__main__":
    main()
