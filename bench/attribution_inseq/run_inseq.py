"""Runs Inseq's ``attribute-context`` (PECoRe: CTI + CCI) on a list of examples, in the Inseq venv.

Issue 29, item 5: the Inseq side of a side-by-side benchmark against ``contextual-mt attribute``.
Runs in its own virtual environment (/work/inseq-venv, see README.md), never in the project's.

    /work/inseq-venv/bin/python bench/attribution_inseq/run_inseq.py JOB.json -o RESULT.json
    /work/inseq-venv/bin/python bench/attribution_inseq/run_inseq.py --make-job JOB.json --model /tmp/bench-marian

Job file (JSON)::

    {"model": "/tmp/bench-marian",              # local folder (save_pretrained), or hub id
     "method": "saliency",                      # --attribution_method (CCI)
     "metric": "kl_divergence",                 # --context_sensitivity_metric (CTI): kl_divergence | pcxmi | ...
     "attributed_fn": "contrast_prob_diff",     # --attributed_fn (CCI target); null = Inseq default (probability)
     "context_sensitivity_std_threshold": 1.0,  # CTI selection: |score| >= mean + k * std (torch unbiased std)
     "context_sensitivity_topk": null,
     "attribution_std_threshold": 1.0,          # cue selection, same rule over one CCI step's context scores
     "attribution_topk": null,
     "input_template": null, "output_template": null,   # Inseq defaults: "{context} {current}"
     "special_tokens_to_keep": [],
     "attribution_kwargs": {},                  # e.g. {"logprob": true} for contrast_prob_diff
     "threads": null,                           # torch.set_num_threads; null = torch default
     "warmup": 1,                               # untimed runs of the first example before timing
     "repeat": 1,                               # timed passes over all examples (the scores come from the last)
     "examples": [{"source_context": "...", "source": "...", "target_context": "...", "target": "..."}]}

Target texts are forced (references): with both ``target_context`` and ``target`` given, Inseq generates
nothing for CTI (``prepare_outputs`` setting 1); CCI with a contrastive ``attributed_fn`` still generates
one contextless next token per selected target token (part of the method, hence timed).
The timing covers ``attribute_context_with_model`` calls only (model loaded once, before timing).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

DEFAULTS: Dict[str, Any] = {
    "method": "saliency",
    "metric": "kl_divergence",
    "attributed_fn": "contrast_prob_diff",
    "context_sensitivity_std_threshold": 1.0,
    "context_sensitivity_topk": None,
    "attribution_std_threshold": 1.0,
    "attribution_topk": None,
    "input_template": None,
    "output_template": None,
    "special_tokens_to_keep": [],
    "attribution_kwargs": {},
    "threads": None,
    "warmup": 1,
    "repeat": 1,
}


def make_job(out: Path, model: str, **overrides: Any) -> Dict[str, Any]:
    """A job over the test sentences of tests/hf_models.py: example i has sentence i as context and
    sentence i+1 as current sentence (EN source, FR reference target)."""
    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root))
    from tests.hf_models import EN, FR  # module level imports are stdlib only

    examples = [
        {"source_context": EN[i], "source": EN[i + 1], "target_context": FR[i], "target": FR[i + 1]}
        for i in range(len(EN) - 1)
    ]
    job = {"model": model, **DEFAULTS, **overrides, "examples": examples}
    out.write_text(json.dumps(job, indent=1, ensure_ascii=False))
    return job


def _versions() -> Dict[str, str]:
    from importlib.metadata import version

    out = {"python": platform.python_version()}
    for name in ("inseq", "torch", "transformers", "captum", "tokenizers", "sentencepiece", "numpy"):
        with contextlib.suppress(Exception):
            out[name] = version(name)
    return out


def _peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM: of this program alone; ru_maxrss would
    include the parent's at the fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _loadavg() -> Optional[List[float]]:
    try:
        import os

        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def build_args(job: Dict[str, Any], ex: Dict[str, Any]):
    """The AttributeContextArgs that ``inseq attribute-context`` builds from the equivalent CLI call."""
    from inseq.commands.attribute_context.attribute_context_args import AttributeContextArgs

    kwargs: Dict[str, Any] = {
        "model_name_or_path": job["model"],
        "attribution_method": job["method"],
        "context_sensitivity_metric": job["metric"],
        "attributed_fn": job["attributed_fn"],
        "context_sensitivity_std_threshold": job["context_sensitivity_std_threshold"],
        "context_sensitivity_topk": job["context_sensitivity_topk"],
        "attribution_std_threshold": job["attribution_std_threshold"],
        "attribution_topk": job["attribution_topk"],
        "special_tokens_to_keep": list(job["special_tokens_to_keep"]),
        "attribution_kwargs": dict(job["attribution_kwargs"]),
        "input_current_text": ex["source"],
        "input_context_text": ex.get("source_context") or None,
        "output_current_text": ex["target"],
        "output_context_text": ex.get("target_context") or None,
        "handle_output_context_strategy": "pre",  # never prompt: outputs are forced
        "show_viz": False,
        "add_output_info": False,
        "device": "cpu",
    }
    if job["input_template"]:
        kwargs["input_template"] = job["input_template"]
    elif kwargs["input_context_text"] is None:
        kwargs["input_template"] = "{current}"
    if job["output_template"]:
        kwargs["output_template"] = job["output_template"]
    elif kwargs["output_context_text"] is None:
        kwargs["output_template"] = "{current}"
    return AttributeContextArgs(**kwargs)


def cli_equivalent(job: Dict[str, Any], ex: Dict[str, Any]) -> List[str]:
    """The ``inseq attribute-context`` command line doing the same for one example."""
    cmd = [
        "inseq",
        "attribute-context",
        "--model_name_or_path",
        job["model"],
        "--attribution_method",
        job["method"],
        "--context_sensitivity_metric",
        job["metric"],
        "--context_sensitivity_std_threshold",
        str(job["context_sensitivity_std_threshold"]),
        "--attribution_std_threshold",
        str(job["attribution_std_threshold"]),
        "--input_current_text",
        ex["source"],
        "--output_current_text",
        ex["target"],
        "--handle_output_context_strategy",
        "pre",
        "--show_viz",
        "False",
    ]
    if job["attributed_fn"]:
        cmd += ["--attributed_fn", job["attributed_fn"]]
    if ex.get("source_context"):
        cmd += ["--input_context_text", ex["source_context"]]
    if ex.get("target_context"):
        cmd += ["--output_context_text", ex["target_context"]]
    for key in ("input_template", "output_template"):
        if job[key]:
            cmd += [f"--{key}", job[key]]
    if job["attribution_kwargs"]:
        cmd += ["--attribution_kwargs", json.dumps(job["attribution_kwargs"])]
    return cmd


def _selected(
    tokens: List[str], scores: List[float], pool: List[float], k: Optional[float], topk: Optional[int]
) -> List[Dict[str, Any]]:
    """Inseq's cue selection (attribute_context_viz_helpers.format_context_comment): threshold over the
    step's input+output context scores (``pool``), tokens of one context kept when |score| >= it."""
    from inseq.commands.attribute_context.attribute_context_helpers import get_scores_threshold

    threshold = float(get_scores_threshold(pool, k)) if pool else 0.0
    ranked = sorted(zip(range(len(scores)), scores, tokens, strict=False), key=lambda x: abs(x[1]), reverse=True)
    ranked = [(i, s, t) for i, s, t in ranked if abs(s) >= threshold]
    if topk:
        ranked = ranked[:topk]
    return [{"index": i, "token": t, "score": s} for i, s, t in ranked]


_RAW_TARGET: List[Dict[str, Any]] = []  # per CCI step: the full target-side scores, filled by _patch_cci_scores


def _patch_cci_scores() -> None:
    """Keeps, beside Inseq's own ``output_context_scores``, the full target-side CCI scores with their tokens.

    For an encoder-decoder without a language tag (Marian), Inseq 0.7.1's ``get_source_target_cci_scores``
    takes ``target_attributions[0:n]``: position 0 is the decoder start token, so its ``output_context_scores[j]``
    belongs to the decoder input *before* output context token j (off by one; the last context token's own
    score is dropped). ``output_context_scores_by_token`` below is the same step's scores at positions 1..n,
    aligned with ``output_context_tokens``. Both are reported; Inseq's cue selection uses its own list."""
    from inseq.commands.attribute_context import attribute_context as ac

    original = ac.get_source_target_cci_scores
    if getattr(original, "_bench_wrapped", False):
        return

    def wrapped(model, cci_attrib_out, *args, **kwargs):
        tgt = cci_attrib_out.target_attributions
        _RAW_TARGET.append(
            {
                "tokens": [t.token for t in cci_attrib_out.target],
                "scores": tgt[:, 0].tolist() if tgt is not None else None,
            }
        )
        return original(model, cci_attrib_out, *args, **kwargs)

    wrapped._bench_wrapped = True
    ac.get_source_target_cci_scores = wrapped


def summarize(job: Dict[str, Any], out, raw_target: Optional[List[Dict[str, Any]]] = None) -> Dict[str, Any]:
    from inseq.commands.attribute_context.attribute_context_helpers import get_scores_threshold

    cti_scores = [float(s) for s in out.cti_scores]
    cti_threshold = float(get_scores_threshold(cti_scores, job["context_sensitivity_std_threshold"]))
    steps = []
    for k, cci in enumerate(out.cci_scores):
        in_scores = [float(s) for s in cci.input_context_scores] if cci.input_context_scores is not None else None
        out_scores = [float(s) for s in cci.output_context_scores] if cci.output_context_scores is not None else None
        pool = (in_scores or []) + (out_scores or [])
        steps.append(
            {
                "cti_index": cci.cti_idx,
                "cti_token": cci.cti_token,
                "cti_score": float(cci.cti_score),
                "contrast_token": cci.contrast_token,
                "contextual_output": cci.contextual_output,
                "contextless_output": cci.contextless_output,
                "input_context_scores": in_scores,
                "output_context_scores": out_scores,
                "target_attribution_tokens": raw_target[k]["tokens"] if raw_target else None,
                "target_attribution_scores": raw_target[k]["scores"] if raw_target else None,
                "output_context_scores_by_token": (
                    raw_target[k]["scores"][1 : 1 + len(out.output_context_tokens)]
                    if raw_target
                    and raw_target[k]["scores"] is not None
                    and out.output_context_tokens
                    and getattr(_MODEL_INFO, "is_encoder_decoder", False)
                    else None
                ),
                "cue_threshold": float(get_scores_threshold(pool, job["attribution_std_threshold"])) if pool else None,
                "input_context_cues": _selected(
                    out.input_context_tokens or [],
                    in_scores,
                    pool,
                    job["attribution_std_threshold"],
                    job["attribution_topk"],
                )
                if in_scores is not None
                else None,
                "output_context_cues": _selected(
                    out.output_context_tokens or [],
                    out_scores,
                    pool,
                    job["attribution_std_threshold"],
                    job["attribution_topk"],
                )
                if out_scores is not None
                else None,
            }
        )
    return {
        "input_context_tokens": out.input_context_tokens,
        "output_context_tokens": out.output_context_tokens,
        "output_current_tokens": out.output_current_tokens,  # the CTI tokens (target EOS excluded)
        "cti_scores": cti_scores,
        "cti_threshold": cti_threshold,
        "cti_selected": [{"index": s["cti_index"], "token": s["cti_token"], "score": s["cti_score"]} for s in steps],
        "cci": steps,
    }


class _ModelInfo:
    is_encoder_decoder = False


_MODEL_INFO = _ModelInfo()


def run(job: Dict[str, Any]) -> Dict[str, Any]:
    job = {**DEFAULTS, **job}
    import torch

    if job["threads"]:
        torch.set_num_threads(int(job["threads"]))
    import inseq
    from inseq.commands.attribute_context.attribute_context import attribute_context_with_model

    t0 = time.perf_counter()
    model = inseq.load_model(job["model"], job["method"], device="cpu")
    load_s = time.perf_counter() - t0
    _MODEL_INFO.is_encoder_decoder = bool(model.is_encoder_decoder)
    _patch_cci_scores()
    examples = job["examples"]
    for _ in range(int(job["warmup"])):
        attribute_context_with_model(build_args(job, examples[0]), model)
    per_example = [0.0] * len(examples)
    outs: List[Any] = [None] * len(examples)
    raws: List[List[Dict[str, Any]]] = [[] for _ in examples]
    repeat = max(1, int(job["repeat"]))
    pass_seconds: List[float] = []
    for _ in range(repeat):
        before = sum(per_example)
        for i, ex in enumerate(examples):
            args = build_args(job, ex)  # built outside the timed call; the call mutates it
            _RAW_TARGET.clear()
            t = time.perf_counter()
            outs[i] = attribute_context_with_model(args, model)
            per_example[i] += time.perf_counter() - t
            raws[i] = list(_RAW_TARGET)
        pass_seconds.append(sum(per_example) - before)
    seconds = sum(per_example)
    n = len(examples) * repeat
    return {
        "tool": "inseq attribute-context",
        "versions": _versions(),
        "torch_threads": torch.get_num_threads(),
        "model": job["model"],
        "method": job["method"],
        "metric": job["metric"],
        "attributed_fn": job["attributed_fn"],
        "context_sensitivity_std_threshold": job["context_sensitivity_std_threshold"],
        "attribution_std_threshold": job["attribution_std_threshold"],
        "load_seconds": load_s,
        "seconds": seconds,
        "repeat": repeat,
        "warmup": int(job["warmup"]),
        "examples": len(examples),
        "examples_per_second": n / seconds if seconds else None,
        "seconds_per_example": seconds / n if n else None,
        "pass_seconds": pass_seconds,  # one pass = all examples once; the best pass is the least disturbed
        "best_pass_examples_per_second": len(examples) / min(pass_seconds),
        "load_average": _loadavg(),
        "peak_rss_mb": _peak_rss_mb(),
        "cli_equivalent_first_example": cli_equivalent(job, examples[0]),
        "results": [
            {"example": ex, "seconds": per_example[i] / repeat, **summarize(job, outs[i], raws[i])}
            for i, ex in enumerate(examples)
        ],
    }


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("job", nargs="?", help="job JSON file")
    parser.add_argument("-o", "--output", help="result JSON file (default: stdout)")
    parser.add_argument("--make-job", metavar="OUT", help="write a job over tests/hf_models.py sentences and exit")
    parser.add_argument("--model", default="/tmp/bench-marian", help="model folder for --make-job")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="override a job field, e.g. --set method='\"input_x_gradient\"' --set repeat=3",
    )
    a = parser.parse_args(argv)
    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in a.set)}
    if a.make_job:
        make_job(Path(a.make_job), a.model, **overrides)
        return 0
    if not a.job:
        parser.error("a job file is needed (or --make-job)")
    job = {**json.loads(Path(a.job).read_text()), **overrides}
    result = run(job)
    text = json.dumps(result, indent=1, ensure_ascii=False)
    if a.output:
        Path(a.output).write_text(text)
        print(
            f"{result['examples']} examples x {result['repeat']}: {result['seconds']:.3f} s "
            f"({result['examples_per_second']:.2f} examples/s), {result['method']} / {result['metric']} / "
            f"{result['attributed_fn']}, {result['torch_threads']} threads",
            file=sys.stderr,
        )
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
