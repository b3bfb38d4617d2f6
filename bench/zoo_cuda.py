"""The model zoo on a device against the CPU (issue 55, step 1): every family of the zoo
(tests/hf_models.py, ZOO: tiny random models built from each family's transformers config)
through ``cxmi``, ``attribute`` and ``translate`` (the Python API, as the commands run) in float32
and bfloat16 on ``--device`` and on the CPU, compared:

- float32 on the device against float32 on the CPU, within the zoo's float32 tolerance (``TOL``,
  nats per token): P-CXMI per token, attribution's CTI values (P-CXMI and KL) per token, the same
  tokens selected; the same translations line for line;
- bfloat16 on the device against float32 on the CPU, within the zoo's bfloat16 tolerance
  (``BF16_TOL``, its stated bound of bfloat16 against float32): P-CXMI and CTI values; the
  translations that equal the CPU's float32 ones are counted, not required (bfloat16 rounding
  may change a greedy choice).

translate is greedy (beam 1), at most 8 tokens per sentence, predicted target context.

Per family: ok or fail, the largest difference of each check, the error of a command that failed.
The record is rewritten after each family, so a run cut short keeps the families done. With
``--device cpu`` (a dry run) both sides are the CPU: it proves the plumbing, not the agreement.

    python -m bench.zoo_cuda --device cuda --json OUT/zoo_cuda.json [--families marian,llama]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import traceback
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

from bench import harness

DTYPES = ("float32", "bfloat16")


@contextlib.contextmanager
def models_loaded_once() -> Iterator[Dict[str, Any]]:
    """``HFModel.load`` memoized by its options while inside: the commands' timings and the
    zoo's hundreds of runs then exclude loading (each command still builds its own backend)."""
    from contextual_mt.backends.hf.model import HFModel

    original = HFModel.__dict__["load"]
    cache: Dict[str, Any] = {}

    def load(cls, options):
        key = repr(options)
        if key not in cache:
            cache[key] = original.__func__(cls, options)
        return cache[key]

    HFModel.load = classmethod(load)  # type: ignore[method-assign, assignment]
    try:
        yield cache
    finally:
        HFModel.load = original  # type: ignore[method-assign]


def the_commands(model: Dict, files: Dict, corpus: Path, out: Path) -> Dict[str, Callable[[], Any]]:
    """The three commands on the zoo's corpus, as the Python API runs them: their outputs."""
    from contextual_mt import api

    reference = str(corpus / "ref.fr")
    return {
        "cxmi": lambda: (
            api.cxmi(**model, **files, reference=reference, output=str(out / "p.jsonl"), quiet=True).records
        ),
        "attribute": lambda: (
            api.attribute(
                **model,
                **files,
                reference=reference,
                output=str(out / "a.jsonl"),
                method="saliency",
                cti_scope="sentence",
                quiet=True,
            ).records
        ),
        "translate": lambda: (
            api.translate(**model, **files, output=str(out / "t.txt"), beam=1, max_len_b=8, quiet=True).lines
        ),
    }


def run_family(name: str, folder: Path, corpus: Path, work: Path, device: str) -> Dict[str, Dict[str, Any]]:
    """cxmi, attribute and translate of one family on ``device`` in each dtype and on the CPU in
    float32 (the reference): {side/dtype: {command: output or error}}."""
    from tests.hf_models import ZOO

    z = ZOO[name]
    langs = {k: v for k, v in (("src_lang", z.src_lang), ("tgt_lang", z.tgt_lang)) if v}
    files = {"source": str(corpus / "src.en"), "docids": str(corpus / "docids")}
    runs: Dict[str, Dict[str, Any]] = {}
    for side, dtype in [(device, d) for d in DTYPES] + ([("cpu", "float32")] if device != "cpu" else []):
        key, out = f"{side}/{dtype}", work / f"{side}-{dtype}"
        out.mkdir(parents=True, exist_ok=True)
        model = {"hf_model": str(folder), "cpu": side == "cpu", "dtype": dtype, **langs}
        results: Dict[str, Any] = {}
        for command, fn in the_commands(model, files, corpus, out).items():
            try:
                t = harness.time_it(fn, repeats=1)
                results[command] = {"output": t.result, "seconds": t.median}
            except Exception as e:  # a failure is a finding: recorded with its first lines
                lines = traceback.format_exception_only(type(e), e)
                results[command] = {"error": "".join(lines).strip()[:500]}
        runs[key] = results
    return runs


def largest(a: List[List[float]], b: List[List[float]]) -> Optional[float]:
    """The largest |a - b| over equal-length rows; None when the shapes differ."""
    if len(a) != len(b) or any(len(x) != len(y) for x, y in zip(a, b, strict=True)):
        return None
    return max((abs(x - y) for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True)), default=0.0)


def compare(runs: Dict[str, Dict[str, Any]], device: str, tol: float, bf16_tol: float) -> Dict[str, Any]:
    """Each dtype on the device against the CPU: per command, the largest difference, its
    tolerance and ok; errors named."""
    out: Dict[str, Any] = {}
    reference = runs["cpu/float32"]
    for dtype in DTYPES:
        mine = runs[f"{device}/{dtype}"]
        tolerance = tol if dtype == "float32" else bf16_tol
        row: Dict[str, Any] = {}
        for command in ("cxmi", "attribute", "translate"):
            errors = [
                f"{side}: {r[command]['error']}"
                for side, r in ((f"{device} {dtype}", mine), ("cpu float32", reference))
                if "error" in r[command]
            ]
            if errors:
                row[command] = {"ok": False, "errors": errors}
                continue
            got, ref = mine[command]["output"], reference[command]["output"]
            cell: Dict[str, Any] = {"seconds": mine[command]["seconds"], "tolerance": tolerance}
            if command == "cxmi":
                cell["max_abs_diff"] = largest([r["token_pcxmi"] for r in got], [r["token_pcxmi"] for r in ref])
                cell["ok"] = cell["max_abs_diff"] is not None and cell["max_abs_diff"] <= tolerance
            elif command == "attribute":
                diffs = [largest([r["cti"][m] for r in got], [r["cti"][m] for r in ref]) for m in ("pcxmi", "kl")]
                cell["max_abs_diff"] = None if None in diffs else max(d for d in diffs if d is not None)
                cell["same_selection"] = [r["selected"] for r in got] == [r["selected"] for r in ref]
                cell["cues"] = [sum(len(r["cues"]) for r in got), sum(len(r["cues"]) for r in ref)]
                cell["ok"] = (
                    cell["max_abs_diff"] is not None
                    and cell["max_abs_diff"] <= tolerance
                    and (cell["same_selection"] or dtype != "float32")
                )
            else:
                cell["lines"] = len(got)
                cell["lines_equal_to_cpu_float32"] = sum(a == b for a, b in zip(got, ref, strict=False))
                cell["ok"] = len(got) == len(ref) and (
                    dtype != "float32" or cell["lines_equal_to_cpu_float32"] == len(ref)
                )
            row[command] = cell
        out[dtype] = row
    out["ok"] = all(cell["ok"] for dtype in DTYPES for cell in out[dtype].values())
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=("cuda", "cpu"), required=True, help="cpu: a dry run (both sides the CPU)")
    p.add_argument("--families", default="", help="comma-separated (default: every family of the zoo)")
    p.add_argument("--work", help="where the zoo's models are built (default: a temporary folder)")
    harness.add_arguments(p, repeats=None)
    args = harness.parse(p, argv)
    from tests.hf_models import BF16_TOL, EN, FR, TOL, ZOO

    families = args.families.split(",") if args.families else list(ZOO)
    if bad := [f for f in families if f not in ZOO]:
        sys.exit(f"--families: {', '.join(bad)} not in the zoo ({', '.join(ZOO)})")
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: no GPU is visible")
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    results: Dict[str, Any] = {
        "device": args.device,
        "tolerances": {"float32": TOL, "bfloat16": BF16_TOL},
        "families": {},
        "complete": False,
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp)
        corpus = work / "corpus"
        corpus.mkdir(parents=True, exist_ok=True)
        (corpus / "src.en").write_text("\n".join(EN) + "\n")
        (corpus / "ref.fr").write_text("\n".join(FR) + "\n")
        (corpus / "docids").write_text("\n".join(["a"] * 6 + ["b"] * 6) + "\n")
        for name in families:
            with models_loaded_once():
                built = harness.time_it(partial(ZOO[name].build, work / "zoo" / name), repeats=1)
                timed = harness.time_it(
                    partial(run_family, name, built.result, corpus, work / "runs" / name, args.device), repeats=1
                )
            row = compare(timed.result, args.device, TOL, BF16_TOL)
            row["seconds"] = {"build": built.median, "runs": timed.median}
            results["families"][name] = row
            failed = [f"{d} {c}" for d in DTYPES for c, cell in row[d].items() if not cell["ok"]]
            print(f"{name}: {'ok' if row['ok'] else 'FAIL: ' + ', '.join(failed)} ({timed.median:.1f} s)", flush=True)
            results["ok"] = [f for f, r in results["families"].items() if r["ok"]]
            results["failed"] = [f for f, r in results["families"].items() if not r["ok"]]
            if args.json:  # after every family: a run cut short keeps what it did
                harness.write_json(args.json, harness.record("zoo_cuda", results, args, args.device))
    results["complete"] = True
    harness.finish(args, "zoo_cuda", results, device=args.device)
    print(f"{len(results['ok'])} of {len(families)} families ok on {args.device}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
