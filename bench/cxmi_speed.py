"""P-CXMI throughput: `contextual-mt cxmi` against two stock `fairseq-generate --score-reference`
runs (one without context, one with it) over the same test split.

Uses the contextual model and data of `make demo` (run it first). Timings exclude model loading:
fairseq-generate's own "Translated N sentences (T tokens) in Xs" figures (the two runs' times
are added), and the wall time of `PCXMIScorer.score` over the whole split, which includes
sentencepiece encoding, building both datasets, both passes and the per-token/per-word records.

    .venv/bin/python bench/cxmi_speed.py --workdir demo
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
USER_DIR = str(REPO / "contextual_mt")
from contextual_mt.demo.pipeline import demo_layout  # noqa: E402


def score_reference(work: Path, ckpt: Path, context: int, batch: int):
    proc = subprocess.run(
        [
            str(BIN / "fairseq-generate"),
            demo_layout(work).bin,
            "--user-dir",
            USER_DIR,
            "--task",
            "document_translation",
            "-s",
            "en",
            "-t",
            "fr",
            "--source-context-size",
            "0",
            "--target-context-size",
            str(context),
            "--path",
            str(ckpt),
            "--score-reference",
            "--batch-size",
            str(batch),
            "--gen-subset",
            "test",
            "--cpu",
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    m = re.search(r"Translated ([\d,]+) sentences \(([\d,]+) tokens\) in ([\d.]+)s", proc.stdout + proc.stderr)
    return int(m.group(2).replace(",", "")), float(m.group(3))


def cxmi_time(scorer, work: Path) -> tuple:
    data = Path(demo_layout(work).data)
    src, ref = (data / "test.en").read_text().splitlines(), (data / "test.fr").read_text().splitlines()
    ids = (data / "test.docids").read_text().splitlines()
    start = time.perf_counter()
    tokens = sum(len(r["tokens"]) for batch in scorer.score(src, ref, ids, progress=False) for r in batch)
    return tokens, time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", default="demo")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default="bench/out/cxmi_speed.json")
    args = p.parse_args()
    from contextual_mt.analysis.cxmi import PCXMIScorer
    from contextual_mt.backends.fairseq.model import FairseqModelOptions

    work = Path(args.workdir)
    ckpt = Path(demo_layout(work).checkpoint("context"))
    if not ckpt.exists():
        raise SystemExit(f"{ckpt} not found: run `make demo` first")
    scorer = PCXMIScorer.from_checkpoint(
        FairseqModelOptions(str(ckpt), spm=demo_layout(work).spm, cpu=True), batch_size=args.batch_size
    )
    fairseq_rates, ours = [], []
    for r in range(args.repeats):
        t0, s0 = score_reference(work, ckpt, 0, args.batch_size)
        t3, s3 = score_reference(work, ckpt, scorer.n_tgt, args.batch_size)
        assert t0 == t3
        fairseq_rates.append(t0 / (s0 + s3))
        tokens, seconds = cxmi_time(scorer, work)
        assert tokens == t0, (tokens, t0)  # the same reference tokens, EOS included
        ours.append(tokens / seconds)
        print(
            f"[{r + 1}/{args.repeats}] fairseq-generate x2: {fairseq_rates[-1]:.0f} tokens/s "
            f"({s0:.2f}s + {s3:.2f}s); cxmi: {ours[-1]:.0f} tokens/s ({seconds:.2f}s)",
            flush=True,
        )
    summary = {
        "fairseq_score_reference_x2_tokens_per_s": statistics.median(fairseq_rates),
        "cxmi_tokens_per_s": statistics.median(ours),
        "runs": {"fairseq": fairseq_rates, "cxmi": ours},
        "tokens": t0,
        "settings": vars(args),
    }
    summary["ratio"] = summary["cxmi_tokens_per_s"] / summary["fairseq_score_reference_x2_tokens_per_s"]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2))
    print(
        f"cxmi {summary['cxmi_tokens_per_s']:.0f} tokens/s vs two fairseq-generate --score-reference runs "
        f"{summary['fairseq_score_reference_x2_tokens_per_s']:.0f} tokens/s: ratio {summary['ratio']:.2f}"
    )


if __name__ == "__main__":
    main()
