"""The Python side of ``bench/gpu_measurements.sh`` (GPU figures in one device call):

python -m bench.gpu_measurements train LOG GATE --json OUT/train.json
    the training run's figures from fairseq's log; exits 3 when the last validation loss is
    above GATE bits (the model has not learnt the corpus; the benches then bound the
    output length and say so)
python -m bench.gpu_measurements train-speed OUT/train_speed.json NAME=LOG ...
    target words/s of each run (median of fairseq's per-interval figures after the first,
    so start-up and the first interval's warm-up count for none), ratios to the first
python -m bench.gpu_measurements auto-plan DATA_ROOT PRESET --json OUT/auto_plan.json
    what ``--batch auto`` chooses for this corpus on this GPU, and why
python -m bench.gpu_measurements summary OUT
    ``OUT/summary.md`` from whichever step records exist (rewritten after every step): the
    second edition's (issue 55: zoo, long context, the LLM's dtypes and documents, train's
    phases, half precision at 512, the batching's cap), then the first's
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from bench import harness

INNER = re.compile(r"epoch (\d+):\s+(\d+) / (\d+) (.*)")
VALID = re.compile(r"valid on '?valid'? subset \| loss ([0-9.]+).*?num_updates (\d+)")


def log_figures(log: str) -> Dict[str, Any]:
    """Per-interval throughput and the validation curve of one fairseq training log."""
    wps: List[float] = []
    ups: List[float] = []
    wpb: List[float] = []
    last_update = 0
    for line in Path(log).read_text(encoding="utf-8", errors="replace").splitlines():
        m = INNER.search(line)
        if m:
            values = dict(item.strip().split("=", 1) for item in m.group(4).split(",") if "=" in item)
            if "wps" in values and "ups" in values:
                wps.append(float(values["wps"]))
                ups.append(float(values["ups"]))
                wpb.append(float(values.get("wpb", "nan")))
                last_update = int(float(values.get("num_updates", last_update)))
    curve = [[int(u), float(loss)] for loss, u in VALID.findall(Path(log).read_text(errors="replace"))]
    steady = wps[1:] or wps  # the first interval holds CUDA's and the data workers' start
    return {
        "intervals": len(wps),
        "last_logged_update": max([last_update] + [u for u, _ in curve]),
        "target_words_per_second": statistics.median(steady) if steady else None,
        "updates_per_second": statistics.median(ups[1:] or ups) if ups else None,
        "target_words_per_update": statistics.median(wpb[1:] or wpb) if wpb else None,
        "wps_per_interval": wps,
        "valid_curve": curve,
        "valid_loss": curve[-1][1] if curve else None,
    }


def train(args) -> int:
    figures = log_figures(args.log)
    loss = figures["valid_loss"]
    figures["gate_bits"] = args.gate
    figures["gate_passed"] = loss is not None and loss <= args.gate
    harness.write_json(args.json, {"name": "gpu.train", "device": device_name(), **figures})
    if not figures["gate_passed"]:
        print(f"undertrained: validation loss {loss} bits > {args.gate}: decoding benches bound the output length")
        return 3
    print(f"validation loss {loss} bits after {figures['last_logged_update']} updates: trained enough to measure")
    return 0


def train_speed(args) -> int:
    runs: Dict[str, Any] = {}
    for item in args.runs:
        name, log = item.split("=", 1)
        if Path(log).exists():
            figures = log_figures(log)
            runs[name] = {
                k: figures[k]
                for k in (
                    "intervals",
                    "last_logged_update",
                    "target_words_per_second",
                    "updates_per_second",
                    "target_words_per_update",
                )
            }
    first = next((r["target_words_per_second"] for r in runs.values() if r["target_words_per_second"]), None)
    for r in runs.values():
        r["ratio_to_first"] = (
            round(r["target_words_per_second"] / first, 3) if first and r["target_words_per_second"] else None
        )
    harness.write_json(args.json, {"name": "gpu.train_speed", "device": device_name(), "runs": runs})
    for name, r in runs.items():
        print(
            f"{name}: {r['target_words_per_second']} target words/s, {r['updates_per_second']} updates/s, "
            f"ratio {r['ratio_to_first']}"
        )
    return 0


def auto_plan(args) -> int:
    import torch

    from contextual_mt.pipeline.train import TrainOptions, batch_plan

    gpus = torch.cuda.device_count()
    plan = batch_plan(TrainOptions("fr", "context", preset=args.preset, root=args.root, batch="auto"), gpus)
    record = {
        "name": "gpu.auto_plan",
        "device": device_name(),
        "gpus": gpus,
        "summary": plan.summary(),
        "plan": plan.as_record(),
    }
    harness.write_json(args.json, record)
    print(f"auto: {plan.summary()}")
    return 0


def device_name() -> str:
    try:
        import torch

        if torch.cuda.is_available():
            return f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}"
        return f"CPU, torch {torch.__version__}"
    except ImportError:
        return "unknown"


def _load(path: Path) -> Optional[Dict[str, Any]]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _fmt(x: Any, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def summary(args) -> int:
    out = Path(args.out)
    lines = [f"# GPU measurements ({(out / 'gpu.txt').read_text().strip() if (out / 'gpu.txt').exists() else '?'})", ""]
    steps = (out / "steps.txt").read_text().splitlines() if (out / "steps.txt").exists() else []
    if steps:
        lines += ["| step | status | seconds |", "|---|---|---|", *steps, ""]
    lines += second_edition(out)
    if t := _load(out / "train.json"):
        lines += [
            "## Training (transformer-small context model, fp16, 16k tokens per update)",
            f"validation loss {t['valid_loss']} bits after {t['last_logged_update']} updates; gate "
            f"{t['gate_bits']}: {'passed' if t['gate_passed'] else 'FAILED (output length bounded on both sides)'}; "
            f"{_fmt(t['target_words_per_second'], 0)} target words/s, {_fmt(t['updates_per_second'])} updates/s",
            f"curve (updates, bits): {t['valid_curve']}",
            "",
        ]
    if s := _load(out / "train_speed.json"):
        lines += [
            "## Training speed",
            "| run | target words/s | updates/s | words per update | ratio |",
            "|---|---|---|---|---|",
        ]
        for name, r in s["runs"].items():
            lines.append(
                f"| {name} | {_fmt(r['target_words_per_second'], 0)} | {_fmt(r['updates_per_second'])} | "
                f"{_fmt(r['target_words_per_update'], 0)} | {_fmt(r['ratio_to_first'])} |"
            )
        lines.append("")
    if p := _load(out / "auto_plan.json"):
        lines += [f"auto on this corpus and GPU: {p['summary']}", ""]
    if d := _load(out / "parallel_decoding.json"):
        r = d["results"]
        lines += [
            f"## Predicted-context decoding ({r['sentences']} sentences, {r['talks']} talks, beam {r['beam']}, "
            f"max_len {r['max_len_a']}x+{r['max_len_b']}); fairseq-generate at context 0: "
            f"{r['fairseq_generate_context_0_sentences_per_s']} sentences/s",
            "| decoding | window | s | sentences/s | vs waves | vs fairseq-generate ctx 0 | rounds | translated "
            "| lines differing |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for x in r["runs"]:
            lines.append(
                f"| {x['decoding']} | {x['window'] or '-'} | {x['seconds']} | {x['sentences_per_s']} | "
                f"{x['vs_waves']} | {x.get('vs_fairseq_generate_context_0', '-')} | {x['rounds']} | "
                f"{x['translated']} | {x['lines_differing']} |"
            )
        lines.append("")
    if f := _load(out / "fairseq_dtype.json"):
        r = f["results"]
        lines += [
            f"## fairseq checkpoint, half precision ({r['lines']} lines)",
            "| dtype | task | sentences/s | vs float32 | lines differing | max abs dP-CXMI | dCXMI |",
            "|---|---|---|---|---|---|---|",
        ]
        for dt, row in r["tasks"].items():
            for task in ("translate-gold", "translate-predicted", "cxmi"):
                x = row[task]
                lines.append(
                    f"| {dt} | {task} | {_fmt(x['sentences_per_s'], 1)} | {_fmt(x['speed_vs_float32'])} | "
                    f"{x.get('lines_differing_from_float32', '')} | "
                    f"{_fmt(x.get('max_abs_token_pcxmi_delta'), 4) if task == 'cxmi' else ''} | "
                    f"{_fmt(x.get('cxmi_delta'), 4) if task == 'cxmi' else ''} |"
                )
        lines.append("")
    if h := _load(out / "hf_dtype.json"):
        for r in h["results"]:
            lines += [
                f"## Hugging Face Marian at opus-mt size ({r['device']})",
                "| variant | tokens/s | vs float32 | max abs dP-CXMI | mean abs dP-CXMI | translate vs float32 |",
                "|---|---|---|---|---|---|",
            ]
            for v, x in r["variants"].items():
                tr = x.get("translate", {})
                lines.append(
                    f"| {v} | {_fmt(x['tokens_per_s'], 0)} | {_fmt(x['vs_float32'])} | "
                    f"{_fmt(x['max_abs_dpcxmi'], 4)} | {_fmt(x['mean_abs_dpcxmi'], 5)} | "
                    f"{_fmt(tr.get('vs_float32'))} |"
                )
            lines.append("")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    return 0


def _results(path: Path) -> Optional[Dict[str, Any]]:
    """A harness record's results (None: no record)."""
    record = _load(path)
    return record.get("results") if record else None


def _cut(r: Dict[str, Any]) -> str:
    return "" if r.get("complete", True) else " (cut short: what it did before)"


def second_edition(out: Path) -> List[str]:
    """The sections of issue 55's steps, from whichever of their records exist."""
    lines: List[str] = []
    if z := _results(out / "zoo_cuda.json"):
        lines += [
            f"## The zoo on {z['device']} against the CPU (float32 within {z['tolerances']['float32']:g}, "
            f"bfloat16 within {z['tolerances']['bfloat16']:g} of CPU float32){_cut(z)}",
            f"{len(z.get('ok', []))} of {len(z['families'])} families ok; failed: "
            f"{', '.join(z.get('failed', [])) or 'none'}",
            "",
            "| family | dtype | cxmi max diff | attribute max diff (same selection) | translate = CPU fp32 | ok |",
            "|---|---|---|---|---|---|",
        ]
        for family, row in z["families"].items():
            for dtype in ("float32", "bfloat16"):
                c, a, t = (row[dtype].get(k, {}) for k in ("cxmi", "attribute", "translate"))
                lines.append(
                    f"| {family} | {dtype} | {_fmt(c.get('max_abs_diff'), 6) if 'errors' not in c else 'ERROR'} | "
                    f"{_fmt(a.get('max_abs_diff'), 6) if 'errors' not in a else 'ERROR'} "
                    f"({a.get('same_selection', '-')}) | "
                    f"{t.get('lines_equal_to_cpu_float32', 'ERROR')}/{t.get('lines', '-')} | "
                    f"{'ok' if all(x.get('ok') for x in (c, a, t)) else 'FAIL'} |"
                )
        lines.append("")
    if b := _results(out / "llm_build.json"):
        lines += [f"## The LLM: {b['parameters']:,} parameters, {b['config']}", ""]
    if c := _results(out / "long_context.json"):
        lines += [
            f"## Long context ({c['device']}, {c['dtype']}; load and warm-up {_fmt(c.get('load_and_warm_up_s'))} s, "
            f"weights {_fmt(c.get('weights_gpu_mib'), 0)} MiB){_cut(c)}",
            "| context tokens | P-CXMI s | floor s | ratio | peak MiB | attribute s | peak MiB | passes | batches |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in c["runs"]:
            p, f, a = r["pcxmi"], r["floor"], r["attribute"]
            lines.append(
                f"| {r['last_line_tokens']['context']} | {_fmt(p['seconds'])} | {_fmt(f['seconds'])} | "
                f"{_fmt(f['pcxmi_over_floor'])} | {_fmt(p['peak_gpu_mib'], 0)} | {_fmt(a['seconds'])} | "
                f"{_fmt(a['peak_gpu_mib'], 0)} | {a['passes']} | {p['batches']} |"
            )
        lines.append("")
    if d := _results(out / "llm_dtype.json"):
        lines += [f"## bfloat16 against float32 on the LLM ({d['device']}){_cut(d)}"]
        for size, row in d["runs"].items():
            times = {k: _fmt(v["median_s"]) for k, v in row.items() if isinstance(v, dict)}
            lines.append(
                f"- context {size}: {times} s; bfloat16 {_fmt(row.get('bfloat16_speed_vs_float32'))}x float32, "
                f"max |dP-CXMI| {_fmt(row.get('max_abs_dpcxmi'), 4)}"
            )
        lines.append("")
    if g := _results(out / "llm_documents.json"):
        tr, check = g.get("translate", {}), g.get("cpu_check", {})
        lines += [
            f"## translate --unit document, the LLM ({g['device']}, {g['dtype']}, greedy){_cut(g)}",
            f"{g['documents']} documents: {tr.get('output_tokens')} output tokens in {_fmt(tr.get('seconds'))} s "
            f"({_fmt(tr.get('output_tokens_per_s'), 1)} tokens/s); the first {check.get('documents', '-')} in float32: "
            f"{check.get('same_as_cpu', '-')} the same as on the CPU",
            "",
        ]
    if t := _results(out / "train_phases.json"):
        f, a = t.get("fairseq", {}), t.get("after_fairseq", {})
        lines += [
            f"## pipeline train around fairseq{_cut(t)}",
            f"total {t['total_s']} s; before fairseq {t.get('before_fairseq_s')} s; fairseq {f.get('seconds')} s "
            f"('done training in {f.get('done_training_in_s')} s'), its exit {f.get('exit_after_last_line_s')} s after "
            f"its last line; after it {a.get('seconds')} s: {a.get('phases')}; the command after train_model "
            f"{t.get('after_train_model_s')} s",
            "",
        ]
    if f := _load(out / "fairseq_dtype_512.json"):
        r = f["results"]
        lines += [f"## fairseq checkpoint, half precision at 512 sentences per batch ({r['lines']} lines)"]
        for dt, row in r["tasks"].items():
            cells = ", ".join(
                f"{task} {_fmt(row[task]['sentences_per_s'], 1)}/s ({_fmt(row[task]['speed_vs_float32'])}x)"
                for task in ("translate-gold", "translate-predicted", "cxmi")
            )
            lines.append(f"- {dt}: {cells}")
        lines.append("")
    if k := _results(out / "batch_cap.json"):
        lines += [
            f"## The wide batching's token cap ({k['lines']} lines of {k['join']} sentences; default "
            f"{k['default']}){_cut(k)}",
            "| cap | lines/s | batches | rows per batch | longest row | peak MiB | lines differing |",
            "|---|---|---|---|---|---|---|",
        ]
        for cap, r in k["caps"].items():
            lines.append(
                f"| {cap} | {_fmt(r['sentences_per_s'], 1)} | {r['batches']} | {r['rows_per_batch']} | "
                f"{r['longest_row_tokens']} | {_fmt(r['peak_gpu_mib'], 0)} | {r['lines_differing_from_first']} |"
            )
        lines.append("")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="step", required=True)
    t = sub.add_parser("train")
    t.add_argument("log")
    t.add_argument("gate", type=float)
    t.add_argument("--json", required=True)
    s = sub.add_parser("train-speed")
    s.add_argument("json")
    s.add_argument("runs", nargs="+", help="NAME=LOG")
    a = sub.add_parser("auto-plan")
    a.add_argument("root")
    a.add_argument("preset")
    a.add_argument("--json", required=True)
    m = sub.add_parser("summary")
    m.add_argument("out")
    args = p.parse_args(argv)
    return {"train": train, "train-speed": train_speed, "auto-plan": auto_plan, "summary": summary}[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
