"""CPU time of the whole ``contextual-mt align`` process without a model, against mweralign's
(the field's resegmenter; a bench-only dependency in its own environment), on the demo's test
documents; and of 10,000 sentences; and the start-up of ``align --help`` and of a line-aligned
``score``; with ``--wmt``, of real systems' output whose lines are paragraphs.

    python -m venv /tmp/mwvenv && /tmp/mwvenv/bin/pip install mweralign      # once, outside the project
    .venv/bin/python -m bench.align_time [--demo demo] [--mweralign /tmp/mwvenv/bin/mweralign] \\
        [--before /work/main] [--repeats 3] [--wmt WMT24/txt --systems GPT-4 CycleL] \\
        --json bench/out/align_time.json

The documents: the demo context model's test translations (``demo/results/fr/context.test.fr``)
joined per document after ``docalign.perturb`` merged, split, dropped and added sentences (seed 1),
aligned to the references; 10,000 sentences: the demo's training references from its first
document on, perturbed alike. Each command runs as a subprocess; its CPU time is the child's user +
system time (``resource``), so start-up, imports, reading and writing all count. The runs of the
tools are interleaved, ``--repeats`` rounds. The project's modules are byte-compiled once first
(into a cache of their own: ``PYTHONPYCACHEPREFIX``) as an installed package is, so no run pays
for compiling them. ``--before``: the same commands with another checkout's code, side by side
(their outputs compared: a pair that differs is reported).

``--wmt``: the ``txt`` folder of the WMT24 general task's systems (github.com/wmt-conference/
wmt24-news-systems; ``bench.alignment_wmt``): each of ``--systems``' English-German lines (paragraphs
of up to 15 sentences) joined per document, aligned to reference A with ``--segmenter-lang de``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Sequence

from bench import harness
from commandkit.documents import document_spans
from commandkit.text import read_lines
from docalign.perturb import Rates, perturb

BIN = Path(sys.executable).parent


def cpu_seconds(argv: Sequence[str], env: Dict[str, str], cwd: str) -> float:
    """The user + system CPU time of one run of ``argv`` (exit status 0 required)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(list(argv), capture_output=True, text=True, env=env, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def write_documents(work: Path, name: str, lines: List[str], refs: List[str], ids: List[str]) -> Dict[str, str]:
    """The perturbed documents as JSONL (for align) and one document per line (for mweralign)."""
    docs = perturb(lines, ids, Rates(), seed=1)
    paths = {k: str(work / f"{name}.{k}") for k in ("jsonl", "txt", "docids", "ref")}
    Path(paths["jsonl"]).write_text("".join(json.dumps({"doc": d.doc, "text": d.text}) + "\n" for d in docs))
    Path(paths["txt"]).write_text("".join(" ".join(d.text.split()) + "\n" for d in docs))
    Path(paths["docids"]).write_text("".join(i + "\n" for i in ids))
    Path(paths["ref"]).write_text("".join(r + "\n" for r in refs))
    return paths


def wmt_documents(wmt: Path, systems: Sequence[str], work: Path) -> Dict[str, Dict[str, str]]:
    """Each WMT24 system's English-German output joined per document (``bench.alignment_wmt``'s
    way), as JSONL for align and one document per line for mweralign, with reference A."""
    from bench.alignment_wmt import documents

    ids = [line.split("\t")[1].strip() for line in read_lines(str(wmt / "documents/en-de.docs"))]
    (work / "wmt.docids").write_text("".join(i + "\n" for i in ids))
    out = {}
    for system in systems:
        docs = documents(read_lines(str(wmt / "system-outputs/en-de" / f"{system}.txt")), ids)
        paths = {"jsonl": str(work / f"{system}.jsonl"), "txt": str(work / f"{system}.txt"),
                 "docids": str(work / "wmt.docids"), "ref": str(wmt / "references/en-de.refA.txt")}  # fmt: skip
        Path(paths["jsonl"]).write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs))
        Path(paths["txt"]).write_text("".join(d["text"] + "\n" for d in docs))
        out[system] = paths
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo", default="demo", help="a finished demo's folder (make demo)")
    parser.add_argument("--mweralign", default="/tmp/mwvenv/bin/mweralign", help="mweralign's console script")
    parser.add_argument("--before", help="another checkout (e.g. the main branch) timed beside this one")
    parser.add_argument("--after", default=str(harness.REPO), help="default: this checkout")
    parser.add_argument("--wmt", help="the txt folder of wmt24-news-systems: time its --systems too")
    parser.add_argument("--systems", nargs="*", default=["GPT-4", "CycleL"], help="with --wmt (default GPT-4 CycleL)")
    harness.add_arguments(parser, repeats=3)
    args = harness.parse(parser, argv)
    demo = Path(args.demo).resolve()
    data, results = demo / "data" / "fr", demo / "results" / "fr"
    checkouts = {"after": os.path.abspath(args.after)}
    if args.before:
        checkouts = {"before": os.path.abspath(args.before), **checkouts}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ids, refs = read_lines(str(data / "test.docids")), read_lines(str(data / "test.fr"))
        test = write_documents(work, "test", read_lines(str(results / "context.test.fr")), refs, ids)
        train_ids, train_refs = read_lines(str(data / "train.docids")), read_lines(str(data / "train.fr"))
        end = next(b for _, b in document_spans(train_ids) if b >= 10_000)
        big = write_documents(work, "big", train_refs[:end], train_refs[:end], train_ids[:end])
        envs = {
            name: dict(os.environ, PYTHONPATH=code, PYTHONPYCACHEPREFIX=str(work / f"pyc-{name}"))
            for name, code in checkouts.items()
        }
        for env in envs.values():
            env.pop("PYTHONDONTWRITEBYTECODE", None)

        outputs: Dict[str, List[str]] = {}  # per input: each checkout's output files, in checkout order

        def align(paths: Dict[str, str], name: str, language: str = "fr") -> List[str]:
            out = str(work / f"out.{sum(map(len, outputs.values()))}.{name}")
            outputs.setdefault(paths["jsonl"], []).extend([out, out + ".alignment"])
            return [str(BIN / "contextual-mt"), "align", "--hyp-documents", paths["jsonl"], "--docids", paths["docids"],
                    "--pivot", paths["ref"], "--segmenter-lang", language, "--output", out,
                    "--alignment", out + ".alignment"]  # fmt: skip

        def mweralign(paths: Dict[str, str]) -> List[str]:
            return [args.mweralign, "-r", paths["ref"], "-t", paths["txt"], "-d", paths["docids"], "-m", "none",
                    "-o", str(work / "mw.out")]  # fmt: skip

        score = [str(BIN / "contextual-mt"), "score", "--hyp", str(results / "context.test.fr"), "--ref",
                 str(data / "test.fr"), "--docids", str(data / "test.docids")]  # fmt: skip
        systems = wmt_documents(Path(args.wmt), args.systems, work) if args.wmt else {}
        runs: Dict[str, tuple] = {}
        for name, env in envs.items():
            runs[f"align, {len(ids)} lines ({name})"] = (align(test, name), env)
            runs[f"align, {end} lines ({name})"] = (align(big, name), env)
            for system, paths in systems.items():
                runs[f"align, WMT24 {system} ({name})"] = (align(paths, name, "de"), env)
            runs[f"align --help ({name})"] = ([str(BIN / "contextual-mt"), "align", "--help"], env)
            runs[f"score, line-aligned, {len(ids)} lines ({name})"] = (score, env)
        if os.path.exists(args.mweralign):
            runs[f"mweralign, {len(ids)} lines"] = (mweralign(test), dict(os.environ))
            runs[f"mweralign, {end} lines"] = (mweralign(big), dict(os.environ))
            for system, paths in systems.items():
                runs[f"mweralign, WMT24 {system}"] = (mweralign(paths), dict(os.environ))
        else:
            print(f"{args.mweralign}: not found, mweralign not timed (see the docstring)")
        for argv_, env in runs.values():  # warm-up: byte-compiles the modules into their caches
            cpu_seconds(argv_, env, tmp)
        times: Dict[str, List[float]] = {name: [] for name in runs}
        for _ in range(args.repeats):  # interleaved rounds: a busy machine slows all alike
            for name, (argv_, env) in runs.items():
                times[name].append(cpu_seconds(argv_, env, tmp))
        half = len(checkouts)  # each input's files: [checkout 0's output, alignment, checkout 1's ...]
        differ = [
            f"{files[k]} and {files[k + 2]} differ"
            for files in outputs.values()
            for k in range(2 if half > 1 else 0)
            if Path(files[k]).read_bytes() != Path(files[k + 2]).read_bytes()
        ]
    print(
        f"whole-process CPU seconds (user + system), {args.repeats} interleaved runs; load {os.getloadavg()[0]:.1f}\n"
    )
    if len(checkouts) > 1:
        print("outputs: " + ("; ".join(differ) if differ else "the same files from both checkouts") + "\n")
    print(f"{'command':48} {'median':>8} {'min':>8} {'max':>8}")
    for name, values in times.items():
        print(f"{name:48} {statistics.median(values):8.3f} {min(values):8.3f} {max(values):8.3f}")
    harness.finish(args, "align_time", {"checkouts": checkouts, "cpu_seconds": times, "outputs_differ": differ})
    return 0


if __name__ == "__main__":
    sys.exit(main())
