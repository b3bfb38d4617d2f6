"""Long documents with a Llama-style decoder-only model of about 1B parameters (issue 55, steps
2-4). The model has random weights and is built from its config here (no download): Llama-3.2-1B's
shape by default (hidden 2048, 16 layers, 32 heads, 8 key/value heads, FFN 8192, a 128,256-entry
vocabulary) but with its output layer untied from the embedding and drawn as the zoo draws it
(N(0, 0.5): logits not flat; tied random embeddings make a model that repeats its last token
forever): 1.50B parameters. The zoo's Llama-3 tokenizer and chat template (tests/hf_models.py,
``build_causal``), positions up to ``--positions``, saved in bfloat16. The output rows past the
tokenizer's pieces are zero, so that no generated id is outside it.
Every size is an option: a dry run on CPU builds a tiny one.

--part build      build the model into ``--model``
--part context    one document per ``--contexts`` size: ``--context-sentences`` K paragraph lines
                  and a last one, read with K/K sentences of context, so that the last line reads
                  that many tokens of context (each line ~C/2K tokens a side: demo sentences
                  joined). On each: ``cxmi`` (P-CXMI) and ``attribute`` (CTI + CCI: saliency, the
                  ``--cti-top-k`` tokens of each sentence), as the Python API runs them, the model
                  loaded before; their time, peak GPU memory (``torch.cuda.max_memory_allocated``),
                  the passes attribute's summary records, the scorer's batches (rows, longest row:
                  the batch sizes chosen at long inputs); and the floor of P-CXMI: the base model's
                  forwards (no output layer) over the very batches the P-CXMI run read, i.e. two
                  plain forwards over the same tokens
--part dtype      P-CXMI of the ``--contexts`` documents in float32 and in bfloat16 (the model
                  loaded in each): the time ratio and the largest |ΔP-CXMI| per token
--part documents  ``translate --unit document``, greedy, of ``--documents`` demo documents:
                  output tokens/s (the outputs re-encoded by the tokenizer); then the first
                  ``--check-documents`` on the device and on the CPU, float32, at most
                  ``--check-max-len-b`` tokens: the same text or not

Each part writes its record (``--json``) after every document size, so a part cut short keeps
what it did; timings exclude loading the model and one warm-up on the smallest input.

    python -m bench.long_context --part build --model W/llm --device cuda --json OUT/llm_build.json
    python -m bench.long_context --part context --model W/llm --device cuda --contexts 8192 16384 32768 \\
        --json OUT/long_context.json
    # a dry run on CPU: a tiny model, short contexts
    python -m bench.long_context --part build --model /tmp/llm --device cpu --hidden 64 --layers 2 \\
        --heads 4 --kv-heads 2 --ffn 128 --vocab 2000 --positions 4096
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from bench import harness
from bench.zoo_cuda import models_loaded_once

PARTS = ("build", "context", "dtype", "documents")


# ------------------------------------------------------------------------------------- the model
def build(args) -> Dict[str, Any]:
    import torch
    from transformers import AutoTokenizer, GenerationConfig, LlamaConfig, LlamaForCausalLM

    from tests.hf_models import build_causal

    folder = Path(args.model)
    build_causal(folder, "llama")  # the tokenizer, chat template and end tokens; its tiny weights replaced below
    path = folder / "tokenizer_config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "model_max_length": args.positions}))
    tok = AutoTokenizer.from_pretrained(folder)
    tiny = json.loads((folder / "config.json").read_text())
    generation = GenerationConfig.from_pretrained(folder)
    config = LlamaConfig(
        vocab_size=max(args.vocab, len(tok)),
        hidden_size=args.hidden,
        intermediate_size=args.ffn,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        max_position_embeddings=args.positions,
        rope_theta=500_000.0,
        tie_word_embeddings=False,
        bos_token_id=tiny["bos_token_id"],
        eos_token_id=tiny["eos_token_id"],
    )
    torch.manual_seed(0)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)  # built where it runs, in the dtype it is saved in
    try:
        with torch.device("cuda" if args.device == "cuda" else "cpu"):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(default)
    with torch.no_grad():  # random but not flat logits; ids past the tokenizer's pieces: logit 0, never the top
        head = model.get_output_embeddings().weight
        head.normal_(0, 0.5)
        head[len(tok) :] = 0
    model.generation_config = generation
    model.save_pretrained(folder)
    size = sum(f.stat().st_size for f in folder.glob("*.safetensors"))
    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "config": {k: getattr(config, k) for k in ("hidden_size", "intermediate_size", "num_hidden_layers")}
        | {k: getattr(config, k) for k in ("num_attention_heads", "num_key_value_heads", "vocab_size")}
        | {"max_position_embeddings": args.positions, "tokenizer_pieces": len(tok)},
        "safetensors_bytes": size,
    }


# ------------------------------------------------------------------------------------- the inputs
def demo_sentences(work: Path, documents: int) -> Dict[str, List[str]]:
    """The demo corpus's test split (``documents`` documents): en, fr, docids lines."""
    from contextual_mt.demo.corpus import generate_demo_data

    data = work / "demo"
    if not (data / "test.docids").exists():
        generate_demo_data(str(data), train_docs=1, valid_docs=1, test_docs=documents, seed=13)
    return {ext: (data / f"test.{ext}").read_text(encoding="utf-8").splitlines() for ext in ("en", "fr", "docids")}


def context_document(tok, demo: Dict[str, List[str]], context: int, k: int) -> Tuple[List[str], List[str]]:
    """K + 1 parallel paragraph lines of at least context / 2K tokens a side (demo sentences
    joined, in turn): the last line, read with K/K sentences of context, reads at least
    ``context`` rounded down to a multiple of 2K tokens of context, plus the template's."""
    per_line = max(1, context // (2 * k))
    counts = {side: [len(tok(s, add_special_tokens=False).input_ids) for s in demo[side]] for side in ("en", "fr")}
    lines: Dict[str, List[str]] = {"en": [], "fr": []}
    at = 0
    for _ in range(k + 1):
        taken: List[int] = []
        while min(sum(counts[side][i] for i in taken) for side in ("en", "fr")) < per_line:
            taken.append(at % len(demo["en"]))
            at += 1
        for side in ("en", "fr"):
            lines[side].append(" ".join(demo[side][i] for i in taken))
    return lines["en"], lines["fr"]


def write_corpus(folder: Path, src: Sequence[str], ref: Optional[Sequence[str]], ids: Sequence[str]) -> Dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    files = {"source": folder / "src.en", "docids": folder / "docids"}
    (folder / "src.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    (folder / "docids").write_text("\n".join(ids) + "\n", encoding="utf-8")
    if ref is not None:
        (folder / "ref.fr").write_text("\n".join(ref) + "\n", encoding="utf-8")
        files["reference"] = folder / "ref.fr"
    return {k: str(v) for k, v in files.items()}


# ------------------------------------------------------------------------------------- measuring
class Device:
    """The device's clock synchronisation and memory figures (none on the CPU)."""

    def __init__(self, name: str):
        import torch

        self.torch, self.cuda = torch, name == "cuda"
        self.sync: Optional[Callable[[], Any]] = torch.cuda.synchronize if self.cuda else None

    def reset_peak(self) -> None:
        if self.cuda:
            self.torch.cuda.reset_peak_memory_stats()

    def peak_mib(self) -> Optional[float]:
        return self.torch.cuda.max_memory_allocated() / 2**20 if self.cuda else None

    def allocated_mib(self) -> Optional[float]:
        return self.torch.cuda.memory_allocated() / 2**20 if self.cuda else None

    def free(self) -> None:
        gc.collect()
        if self.cuda:
            self.torch.cuda.empty_cache()


class ScoredBatches:
    """While inside: every batch the HF scorer reads (``HFScoringBackend._forward``), kept with
    its backend, so that the same batches can be read again by the base model alone."""

    def __init__(self) -> None:
        self.batches: List[Tuple[Any, list]] = []

    def __enter__(self) -> ScoredBatches:
        from contextual_mt.backends.hf.scoring import HFScoringBackend

        self.original = HFScoringBackend._forward
        batches = self.batches

        def forward(backend, rows, fast=None):
            batches.append((backend, list(rows)))
            return self.original(backend, rows, fast)

        HFScoringBackend._forward = forward  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc) -> None:
        from contextual_mt.backends.hf.scoring import HFScoringBackend

        HFScoringBackend._forward = self.original  # type: ignore[method-assign]

    def shapes(self) -> List[List[int]]:
        """[rows, longest row] of each batch."""
        return [[len(rows), max(r.length for r in rows)] for _, rows in self.batches]

    def floor(self) -> None:
        """The base model's forward over each batch (the same padded tokens; no output layer)."""
        import torch

        for backend, rows in self.batches:
            inputs = backend._inputs(rows)[0]
            with torch.no_grad(), backend.hf.attention():
                backend.hf.model.base_model(**inputs, use_cache=False)


def model_options(args, dtype: str, cpu: bool) -> Dict[str, Any]:
    k = args.context_sentences
    return {"hf_model": args.model, "dtype": dtype, "cpu": cpu, "source_context_size": k, "target_context_size": k}


def context_lengths(args, hf, src: List[str], ref: List[str]) -> Dict[str, int]:
    """The last line's row with and without its context, as the scorer lays it out (tokens), by
    the loaded model ``hf``."""
    from contextual_mt.backends.hf.scoring import HFScoringBackend

    backend = HFScoringBackend(hf)
    k = args.context_sentences
    full = backend.layout.row(src[-1], ref[-1], src[-1 - k : -1], ref[-1 - k : -1], k, k, str)
    alone = backend.layout.row(src[-1], ref[-1], (), (), 0, 0, str)
    return {"with_context": full.length, "without": alone.length, "context": full.length - alone.length}


def part_context(args, work: Path, device: Device) -> Dict[str, Any]:
    from transformers import AutoTokenizer

    from contextual_mt import api

    tok = AutoTokenizer.from_pretrained(args.model)
    demo = demo_sentences(work, 60)  # sentences reused in turn
    model = model_options(args, args.dtype, args.device == "cpu")
    results: Dict[str, Any] = {"device": args.device, "dtype": args.dtype, "runs": [], "complete": False}
    results["attribute_options"] = {"method": "saliency", "cti_scope": "sentence", "cti_top_k": args.cti_top_k}
    corpora = {}
    for size in args.contexts:
        src, ref = context_document(tok, demo, size, args.context_sentences)
        corpora[size] = (src, ref, write_corpus(work / f"context-{size}", src, ref, ["d"] * len(src)))

    def cxmi(files, name):
        return api.cxmi(**model, **files, output=str(work / name), quiet=True)

    def attribute(files, name):
        return api.attribute(
            **model,
            **files,
            output=str(work / name),
            method="saliency",
            cti_scope="sentence",
            cti_top_k=args.cti_top_k,
            quiet=True,
        )

    with models_loaded_once() as loaded:
        smallest = corpora[min(args.contexts)][2]
        warm = harness.time_it(lambda: (cxmi(smallest, "warm.jsonl"), attribute(smallest, "warm-a.jsonl")), repeats=1)
        results["load_and_warm_up_s"] = warm.median
        results["weights_gpu_mib"] = device.allocated_mib()
        hf = next(iter(loaded.values()))  # cxmi's and attribute's (models_loaded says whether one)
        for size in args.contexts:
            src, ref, files = corpora[size]
            run: Dict[str, Any] = {"context_tokens_asked": size, "lines": len(src)}
            run["last_line_tokens"] = context_lengths(args, hf, src, ref)
            device.reset_peak()
            with ScoredBatches() as seen:
                t = harness.time_it(partial(cxmi, files, f"p{size}.jsonl"), repeats=1, sync=device.sync)
            scored = sum(len(r["token_pcxmi"]) for r in t.result.records)
            run["pcxmi"] = {
                "seconds": t.median,
                "peak_gpu_mib": device.peak_mib(),
                "scored_tokens": scored,
                "tokens_per_s": scored / t.median,
                "cxmi": t.result.summary.get("cxmi"),
                "batches": seen.shapes(),
                "padded_tokens_read": sum(rows * longest for rows, longest in seen.shapes()),
            }
            floor = harness.time_it(seen.floor, repeats=1, sync=device.sync)
            run["floor"] = {
                "what": "the base model's forwards over the same batches (no output layer)",
                "seconds": floor.median,
                "pcxmi_over_floor": t.median / floor.median if floor.median > 0 else None,
            }
            del seen
            device.free()
            device.reset_peak()
            a = harness.time_it(partial(attribute, files, f"a{size}.jsonl"), repeats=1, sync=device.sync)
            summary = a.result.summary
            run["attribute"] = {
                "seconds": a.median,
                "peak_gpu_mib": device.peak_mib(),
                "selected_tokens": summary["selected_tokens"],
                "cues": summary["cues"],
                "passes": summary["cci"].get("passes"),
                "max_tokens": summary["cci"].get("max_tokens"),
            }
            device.free()
            run["models_loaded"] = len(loaded)  # 1: the peak memory holds one copy of the weights
            results["runs"].append(run)
            print(
                f"context {run['last_line_tokens']['context']} tokens: P-CXMI {t.median:.2f} s "
                f"({run['floor']['pcxmi_over_floor']:.2f}x the floor {floor.median:.2f} s), peak "
                f"{run['pcxmi']['peak_gpu_mib']} MiB; attribute {a.median:.2f} s, peak "
                f"{run['attribute']['peak_gpu_mib']} MiB, passes {run['attribute']['passes']}",
                flush=True,
            )
            save(args, results)
    return results


def part_dtype(args, work: Path, device: Device) -> Dict[str, Any]:
    import numpy as np
    from transformers import AutoTokenizer

    from contextual_mt import api

    tok = AutoTokenizer.from_pretrained(args.model)
    demo = demo_sentences(work, 60)  # sentences reused in turn
    results: Dict[str, Any] = {"device": args.device, "runs": {}, "complete": False}
    if device.cuda:
        results["tf32_matmul"] = device.torch.backends.cuda.matmul.allow_tf32
    corpora = {}
    for size in args.contexts:
        src, ref = context_document(tok, demo, size, args.context_sentences)
        corpora[size] = write_corpus(work / f"dtype-{size}", src, ref, ["d"] * len(src))
    dtypes = ["float32", "bfloat16"]
    for dtype in dtypes:
        model = model_options(args, dtype, args.device == "cpu")
        with models_loaded_once():
            warm = corpora[min(args.contexts)]
            api.cxmi(**model, **warm, output=str(work / f"warm-{dtype}.jsonl"), quiet=True)
            for size, files in corpora.items():
                device.reset_peak()
                t = harness.time_it(
                    partial(api.cxmi, **model, **files, output=str(work / f"{dtype}-{size}.jsonl"), quiet=True),
                    repeats=args.repeats,
                    sync=device.sync,
                )
                results["runs"].setdefault(str(size), {})[dtype] = {
                    "seconds": t.times,
                    "median_s": t.median,
                    "peak_gpu_mib": device.peak_mib(),
                    "pcxmi": [r["token_pcxmi"] for r in t.result.records],
                }
        device.free()
    for size, row in results["runs"].items():
        if set(dtypes) <= set(row):
            a = [x for r in row["float32"]["pcxmi"] for x in r]
            b = [x for r in row["bfloat16"]["pcxmi"] for x in r]
            row["bfloat16_speed_vs_float32"] = row["float32"]["median_s"] / row["bfloat16"]["median_s"]
            row["max_abs_dpcxmi"] = float(np.max(np.abs(np.subtract(a, b)))) if len(a) == len(b) else None
            print(
                f"context {size}: bfloat16 {row['bfloat16_speed_vs_float32']:.2f}x float32, max |dP-CXMI| "
                f"{row['max_abs_dpcxmi']}"
            )
        for dtype in dtypes:
            row.get(dtype, {}).pop("pcxmi", None)  # the record keeps the figures, not the scores
    return results


def part_documents(args, work: Path, device: Device) -> Dict[str, Any]:
    from transformers import AutoTokenizer

    from contextual_mt import api

    tok = AutoTokenizer.from_pretrained(args.model)
    demo = demo_sentences(work / "documents", args.documents)
    ids = demo["docids"]
    all_files = write_corpus(work / "docs", demo["en"], None, ids)
    first = ids.index(ids[0]) if ids else 0
    one = [i for i, d in enumerate(ids) if d == ids[first]]
    warm_files = write_corpus(work / "docs-warm", [demo["en"][i] for i in one], None, [ids[i] for i in one])
    check_ids = list(dict.fromkeys(ids))[: args.check_documents]
    keep = [i for i, d in enumerate(ids) if d in check_ids]
    check_files = write_corpus(work / "docs-check", [demo["en"][i] for i in keep], None, [ids[i] for i in keep])
    decoding = {"unit": "document", "beam": 1, "max_len_a": args.max_len_a, "max_len_b": args.max_len_b}
    results: Dict[str, Any] = {"device": args.device, "dtype": args.dtype, "documents": len(set(ids))}
    results["decoding"] = decoding
    model = {"hf_model": args.model, "dtype": args.dtype, "cpu": args.device == "cpu"}
    with models_loaded_once():
        api.translate(**model, **warm_files, output=str(work / "warm.jsonl"), **decoding, quiet=True)
        device.reset_peak()
        t = harness.time_it(
            lambda: api.translate(**model, **all_files, output=str(work / "docs.jsonl"), **decoding, quiet=True),
            repeats=1,
            sync=device.sync,
        )
    device.free()
    texts = [d.text for d in t.result.documents]
    tokens = sum(len(tok(text, add_special_tokens=False).input_ids) for text in texts)
    results["translate"] = {
        "seconds": t.median,
        "output_tokens": tokens,
        "output_tokens_per_s": tokens / t.median,
        "source_lines": len(ids),
        "peak_gpu_mib": device.peak_mib(),
    }
    print(f"{len(set(ids))} documents: {tokens} output tokens in {t.median:.2f} s ({tokens / t.median:.1f}/s)")
    save(args, results)
    check = {"unit": "document", "beam": 1, "max_len_a": 0.0, "max_len_b": args.check_max_len_b}
    outputs = {}
    for side in dict.fromkeys([args.device, "cpu"]):
        with models_loaded_once():
            made = api.translate(
                hf_model=args.model,
                dtype="float32",
                cpu=side == "cpu",
                **check_files,
                output=str(work / f"check-{side}.jsonl"),
                **check,
                quiet=True,
            )
        outputs[side] = [d.text for d in made.documents]
        device.free()
    same = [a == b for a, b in zip(outputs[args.device], outputs["cpu"], strict=True)]
    results["cpu_check"] = {
        "documents": len(same),
        "dtype": "float32",
        "decoding": check,
        "same_as_cpu": sum(same),
        "first_differing": next((i for i, s in enumerate(same) if not s), None),
        "outputs": outputs,
    }
    print(f"first {len(same)} documents, float32, greedy: {sum(same)} the same on {args.device} and CPU")
    return results


def save(args, results: Dict[str, Any]) -> None:
    """The record so far (a part cut short keeps it)."""
    if args.json:
        harness.write_json(args.json, harness.record("long_context", results, args, args.device))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--part", choices=PARTS, required=True)
    p.add_argument("--model", required=True, help="the model's folder (--part build writes it)")
    p.add_argument("--device", choices=("cuda", "cpu"), required=True)
    p.add_argument("--work", help="inputs and outputs (default: a temporary folder)")
    size = p.add_argument_group("the model (--part build)")
    size.add_argument("--hidden", type=int, default=2048)
    size.add_argument("--layers", type=int, default=16)
    size.add_argument("--heads", type=int, default=32)
    size.add_argument("--kv-heads", type=int, default=8)
    size.add_argument("--ffn", type=int, default=8192)
    size.add_argument("--vocab", type=int, default=128256, help="at least the tokenizer's pieces")
    size.add_argument("--positions", type=int, default=131072)
    runs = p.add_argument_group("the runs")
    runs.add_argument("--dtype", choices=("float32", "bfloat16"), default="bfloat16", help="context, documents")
    runs.add_argument("--contexts", type=int, nargs="+", default=[8192, 16384, 32768], help="tokens of context")
    runs.add_argument("--context-sentences", type=int, default=8, help="K: sentences of context (a side)")
    runs.add_argument("--cti-top-k", type=int, default=2, help="attribute: tokens attributed per sentence")
    runs.add_argument("--documents", type=int, default=50)
    runs.add_argument("--max-len-a", type=float, default=1.2, help="documents: the output bound, a x source + b")
    runs.add_argument("--max-len-b", type=int, default=10)
    runs.add_argument("--check-documents", type=int, default=2, help="documents: compared with the CPU's")
    runs.add_argument("--check-max-len-b", type=int, default=24)
    harness.add_arguments(p, repeats=1)
    args = harness.parse(p, argv)
    if min(args.contexts) < 2 * args.context_sentences or args.context_sentences < 1 or args.repeats < 1:
        sys.exit("--contexts must be >= 2 x --context-sentences >= 2, --repeats >= 1")
    if args.part != "build" and not (Path(args.model) / "config.json").exists():
        sys.exit(f"--model {args.model}: no model there (build it first: --part build)")
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: no GPU is visible")
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    device = Device(args.device)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        parts = {"build": lambda: build(args)}
        parts |= {
            "context": partial(part_context, args, work, device),
            "dtype": partial(part_dtype, args, work, device),
            "documents": partial(part_documents, args, work, device),
        }
        t = harness.time_it(parts[args.part], repeats=1)
    results = {**t.result, "complete": True, "seconds": t.median}
    harness.finish(args, "long_context", results, device=args.device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
