"""Counterfactual context suites on the demo (issue 43): does the demo's context model follow the
cue it was trained on, stay put under control edits, lose the cue beyond its context size, and
what does a distractor do? The sentence model is the baseline that reads no context; the CADec
model of `make cadec-demo` is scored too when the demo has one.

The demo's test split is built into a counterfactual suite (`testset build --counterfactual`,
the reference tagged by `make muda-eval`), scored with both models (`contrastive`), measured
(`testset cues`, its plot copied to ``--png``); with ``--generative`` each edited document is also
translated with its edited target context (`translate --gold-target-context`), checked by `testset
evaluate` and measured again. Every step is the command line a user runs, in this process.

    python -m bench.studies.counterfactual_demo --demo demo --json bench/studies/counterfactual_demo.json \\
        --png bench/studies/counterfactual_demo.png [--generative]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from typing import Dict, List

from bench import harness


def cli(*argv: str) -> None:
    from contextual_mt.cli import main

    rc = main([str(a) for a in argv])
    if rc != 0:
        raise SystemExit(f"contextual-mt {' '.join(map(str, argv[:2]))} failed ({rc})")


def read_json(path: str) -> Dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def seconds(fn) -> float:
    """One timed run (these are end-to-end command times, not a comparison)."""
    return round(harness.time_it(fn, repeats=1).median, 1)


def main(argv: List[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--demo", default="demo", help="a finished demo (make demo; make muda-eval for the tags)")
    ap.add_argument("--json", required=True, help="the measures and the timings")
    ap.add_argument("--png", required=True, help="the distance curve of the contrastive run")
    ap.add_argument("--generative", action="store_true", help="also translate the edited documents")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    d, r = f"{args.demo}/data/fr", f"{args.demo}/results/fr"
    times: Dict[str, float] = {}
    out: Dict = {"machine": harness.machine_info()}
    with tempfile.TemporaryDirectory(prefix="cf-demo-") as work:
        suite = os.path.join(work, "counterfactual")
        build = lambda: cli(  # noqa: E731
            "testset", "build", "--source", f"{d}/test.en", "--reference", f"{d}/test.fr",
            "--docids", f"{d}/test.docids", "--lang", "fr", "--tags", f"{r}/muda/reference.tags.json",
            "--lexicon", f"{args.demo}/corpus/train.fr.conllu", "--output-dir", work, "--counterfactual",
        )  # fmt: skip
        times["build_s"] = seconds(build)
        out["suite"] = read_json(os.path.join(suite, "summary.json"))
        summaries = []
        for name in ("context", "sentence", "cadec"):  # cadec: make cadec-demo's model, when there is one
            if name == "cadec" and not os.path.isfile(f"{args.demo}/checkpoints/fr/cadec/checkpoint_best.pt"):
                continue
            score = lambda name=name: cli(  # noqa: E731
                "contrastive", "--format", "voita", "--input", os.path.join(suite, "voita.json"),
                "--path", f"{args.demo}/checkpoints/fr/{name}/checkpoint_best.pt", "--spm", f"{d}/spm.model",
                "--output", os.path.join(work, f"{name}.scores"), "--summary", os.path.join(work, f"{name}.json"),
                "--cpu", "--quiet", "--threads", str(args.threads),
            )  # fmt: skip
            times[f"contrastive_{name}_s"] = seconds(score)
            summaries += ["--contrastive", os.path.join(work, f"{name}.json")]
        plot, measures = os.path.join(work, "cues.png"), os.path.join(work, "cues.json")
        cli("testset", "cues", "--suite", suite, *summaries, "--output", measures, "--plot", plot)
        out["contrastive"] = read_json(measures)
        shutil.copyfile(plot, args.png)
        if args.generative:
            hyps = []
            for name in ("context", "sentence"):
                hyp = os.path.join(work, f"{name}.hyp.fr")
                run = lambda name=name, hyp=hyp: cli(  # noqa: E731
                    "translate", "--path", f"{args.demo}/checkpoints/fr/{name}/checkpoint_best.pt",
                    "--spm", f"{d}/spm.model", "--source", os.path.join(suite, "source.en"),
                    "--docids", os.path.join(suite, "docids"), "--gold-target-context",
                    os.path.join(suite, "reference.fr"), "--output", hyp, "--cpu", "--quiet",
                    "--threads", str(args.threads),
                )  # fmt: skip
                times[f"translate_{name}_s"] = seconds(run)
                hyps += ["--hyp", hyp]
            evaluation = os.path.join(work, "evaluate.json")
            cli("testset", "evaluate", "--manifest", os.path.join(suite, "manifest.jsonl"), *hyps,
                "--output", evaluation, "--bootstrap", "0")  # fmt: skip
            cli("testset", "cues", "--suite", suite, "--evaluation", evaluation, "--output", measures)
            out["generative"] = read_json(measures)
    out["times"] = times
    harness.write_json(args.json, out)
    print(json.dumps(times))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
