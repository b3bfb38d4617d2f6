"""``contextual-mt align`` side by side with mweralign on real systems' output: the WMT24 general
task's English-German submissions, each made a whole-document output and aligned back.

    python -m bench.alignment_wmt --wmt WMT24/txt --mweralign /path/to/venv/bin/mweralign \\
        [--lexical-train TRAIN.en TRAIN.de] --json bench/out/alignment_wmt.json

``--wmt``: the ``txt`` folder of the WMT24 systems' repository (github.com/wmt-conference/
wmt24-news-systems): ``sources/en-de.txt``, ``references/en-de.refA.txt``, ``documents/en-de.docs``
(domain and document id of each line) and ``system-outputs/en-de/*.txt``. Its 998 lines are
paragraphs of 171 documents in four domains (news, social, speech, literary). Nothing of it is
part of the project; the bench reads it where it is given.

Each system's lines of a document are joined with a space into one text, as a document-level
system writes it, and re-aligned to the source lines three ways: ``align`` with the references as
the pivot, mweralign with the references (``-m none``: whitespace words; its default SentencePiece
model is a download), and ``align --pivot none`` (no reference: the output aligned to the source,
glossed by an IBM Model 1 table learned from ``--lexical-train``, e.g. the WMT21-23 English-German
test sets; without it the row is left out). What is measured against each system's own lines (the
truth, which the joining hid): the share of lines whose text is exactly their true text, and within
chrF 80 of it; BLEU and chrF against reference A through the alignment minus through the true
lines; and the CPU time of each command (user + system, median of ``--repeats`` interleaved runs).

``--json`` is written after each system, and a run given a ``--json`` that already holds systems
skips those whose fingerprint (the WMT files, the system's output, the lexical corpus, mweralign's
command, ``--repeats`` and the aligner's own source files) is that of this run: a run stopped
half-way resumes; anything changed is measured again. The JSON holds the systems of this run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from bench import harness
from bench.alignment_versus import BIN, corpus_scores, cpu_run
from commandkit.text import file_sha256, read_lines

TOOLS = ("align", "mweralign", "align --pivot none")


def line_scores(hyps: Sequence[str], truth: Sequence[str]) -> Dict[str, float]:
    from sacrebleu.metrics import CHRF

    metric = CHRF()
    exact = near = 0
    for h, t in zip(hyps, truth, strict=True):
        h, t = " ".join(h.split()), " ".join(t.split())
        if h == t:
            exact += 1
            near += 1
        elif h and t and metric.sentence_score(h, [t]).score >= 80:
            near += 1
    return {"exact": exact / len(truth), "near": near / len(truth)}


def documents(lines: Sequence[str], ids: Sequence[str]) -> List[Dict[str, str]]:
    out: List[Dict[str, str]] = []
    for line, doc in zip(lines, ids, strict=True):
        if out and out[-1]["doc"] == doc:
            out[-1]["text"] = " ".join(p for p in (out[-1]["text"], line.strip()) if p)
        else:
            out.append({"doc": doc, "text": line.strip()})
    return out


def system(
    name: str,
    lines: Sequence[str],
    wmt: Dict[str, Any],
    mweralign: str,
    lexical: Optional[Sequence[str]],
    work: str,
    repeats: int,
) -> Dict[str, Any]:
    paths = {k: os.path.join(work, f"{name}.{k}") for k in ("jsonl", "docs", "align", "records", "mwer", "free",
                                                             "free.records")}  # fmt: skip
    docs = documents(lines, wmt["ids"])
    Path(paths["jsonl"]).write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs))
    Path(paths["docs"]).write_text("".join(d["text"] + "\n" for d in docs))
    common = ["--hyp-documents", paths["jsonl"], "--docids", wmt["docids"], "--segmenter-lang", "de", "--quiet"]
    commands = {
        "align": [str(BIN / "contextual-mt"), "align", *common, "--pivot", wmt["refs"], "--output", paths["align"],
                  "--alignment", paths["records"]],
        "mweralign": [mweralign, "-r", wmt["refs"], "-t", paths["docs"], "-d", wmt["docids"], "-m", "none",
                      "-o", paths["mwer"]],
    }  # fmt: skip
    outputs = {"align": paths["align"], "mweralign": paths["mwer"]}
    if lexical:
        commands["align --pivot none"] = [
            str(BIN / "contextual-mt"), "align", *common, "--pivot", "none", "--source", wmt["source"],
            "--lexical-train", *lexical, "--output", paths["free"], "--alignment", paths["free.records"],
        ]  # fmt: skip
        outputs["align --pivot none"] = paths["free"]
    seconds: Dict[str, List[float]] = {k: [] for k in commands}
    for _ in range(repeats):  # interleaved
        for tool, argv in commands.items():
            seconds[tool].append(cpu_run(argv))
    truth = [line.strip() for line in lines]
    true_scores = corpus_scores(truth, wmt["ref_lines"])
    rows: Dict[str, Any] = {}
    for tool, out in outputs.items():
        hyps = [line.strip() for line in read_lines(out)]
        assert len(hyps) == len(truth), (name, tool, len(hyps))
        scores = corpus_scores(hyps, wmt["ref_lines"])
        rows[tool] = {
            **line_scores(hyps, truth),
            "BLEU - true": scores["BLEU"] - true_scores["BLEU"],
            "chrF - true": scores["chrF"] - true_scores["chrF"],
            "CPU s": statistics.median(seconds[tool]),
        }
    return {"system": name, "true": true_scores, "tools": rows}


ALIGNER = Path(__file__).resolve().parent.parent / "docalign"  # whose code the align rows measure


def fingerprint(files: Sequence[str], *extra: str) -> str:
    """What a system's row was measured from: the files' contents, the aligner's source files,
    and ``extra`` (commands, options)."""
    h = hashlib.sha256()
    for path in [*files, *sorted(str(p) for p in ALIGNER.rglob("*.py"))]:
        h.update(file_sha256(path).encode())
    for value in extra:
        h.update(value.encode() + b"\0")
    return h.hexdigest()


def previous(path: Optional[str]) -> Dict[str, Dict[str, Any]]:
    """The systems of an earlier run's JSON at ``path`` (none when there is no such file)."""
    if not path or not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return {r["system"]: r for r in data.get("systems", []) if "fingerprint" in r}


def summary(results: Sequence[Dict[str, Any]]) -> Dict[str, Dict[str, float]]:
    """Per tool: the mean of each figure over the systems, and the worst system's."""
    out: Dict[str, Dict[str, float]] = {}
    for tool in TOOLS:
        rows = [r["tools"][tool] for r in results if tool in r["tools"]]
        if not rows:
            continue
        out[tool] = {
            "exact": statistics.mean(r["exact"] for r in rows),
            "near": statistics.mean(r["near"] for r in rows),
            "worst exact": min(r["exact"] for r in rows),
            "BLEU - true": statistics.mean(r["BLEU - true"] for r in rows),
            "worst BLEU - true": min(r["BLEU - true"] for r in rows),
            "chrF - true": statistics.mean(r["chrF - true"] for r in rows),
            "CPU s": statistics.mean(r["CPU s"] for r in rows),
        }
    return out


def table(results: Sequence[Dict[str, Any]]) -> str:
    lines = ["| system | BLEU | " + " | ".join(f"{t}: exact / near / BLEU - true" for t in TOOLS) + " |",
             "|" + "---|" * (len(TOOLS) + 2)]  # fmt: skip
    for r in results:
        cells = []
        for t in TOOLS:
            row = r["tools"].get(t)
            cells.append("-" if row is None else f"{row['exact']:.3f} / {row['near']:.3f} / {row['BLEU - true']:+.2f}")
        lines.append(f"| {r['system']} | {r['true']['BLEU']:.1f} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("| tool | " + " | ".join(("exact", "near", "worst exact", "BLEU - true", "worst BLEU - true",
                                           "chrF - true", "CPU s")) + " |")  # fmt: skip
    lines.append("|---|---|---|---|---|---|---|---|")
    for tool, s in summary(results).items():
        lines.append(
            f"| `{tool}` | {s['exact']:.3f} | {s['near']:.3f} | {s['worst exact']:.3f} | {s['BLEU - true']:+.2f} | "
            f"{s['worst BLEU - true']:+.2f} | {s['chrF - true']:+.2f} | {s['CPU s']:.2f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wmt", required=True, help="the txt folder of wmt24-news-systems")
    parser.add_argument("--mweralign", required=True, help="mweralign's command (a bench-only install)")
    parser.add_argument("--lexical-train", nargs=2, metavar=("TRAIN.en", "TRAIN.de"),
                        help="line-aligned English-German text for align --pivot none's lexical table")  # fmt: skip
    parser.add_argument("--systems", nargs="*", default=None, help="only these systems")
    harness.add_arguments(parser, repeats=1, warmup=0)
    args = harness.parse(parser, argv)
    wmt_dir = Path(args.wmt)
    ids = [line.split("\t")[1].strip() for line in read_lines(str(wmt_dir / "documents/en-de.docs"))]
    with tempfile.TemporaryDirectory() as work:
        docids = os.path.join(work, "docids")
        Path(docids).write_text("".join(i + "\n" for i in ids))
        wmt = {
            "ids": ids,
            "docids": docids,
            "source": str(wmt_dir / "sources/en-de.txt"),
            "refs": str(wmt_dir / "references/en-de.refA.txt"),
            "ref_lines": [line.strip() for line in read_lines(str(wmt_dir / "references/en-de.refA.txt"))],
        }
        names = sorted(p.stem for p in (wmt_dir / "system-outputs/en-de").glob("*.txt"))
        done = previous(args.json)
        inputs = [str(wmt_dir / f) for f in ("sources/en-de.txt", "references/en-de.refA.txt", "documents/en-de.docs")]
        results: List[Dict[str, Any]] = []
        for name in names if args.systems is None else args.systems:
            path = str(wmt_dir / "system-outputs/en-de" / f"{name}.txt")
            key = fingerprint([*inputs, path, *(args.lexical_train or [])], args.mweralign, str(args.repeats))
            if done.get(name, {}).get("fingerprint") == key:
                results.append(done[name])
                print(f"{name}: as in {args.json}", file=sys.stderr, flush=True)
                continue
            lines = read_lines(path)
            row = system(name, lines, wmt, args.mweralign, args.lexical_train, work, args.repeats)
            results.append({**row, "fingerprint": key, "machine": harness.machine_info()})
            print(f"{name}: " + ", ".join(f"{t} {r['exact']:.3f}" for t, r in row["tools"].items()),
                  file=sys.stderr, flush=True)  # fmt: skip
            if args.json:  # after each system: a run stopped half-way resumes from here
                write(args.json, results)
    print(table(results))
    if args.json:
        write(args.json, results)
    return 0


def write(path: str, results: Sequence[Dict[str, Any]]) -> None:
    harness.write_json(path, {"systems": list(results), "summary": summary(results), "machine": harness.machine_info()})


if __name__ == "__main__":
    sys.exit(main())
