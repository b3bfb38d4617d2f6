"""MuDA tagging speed on the pre-computed path, and per-stage times.

Builds a demo corpus of about 3,000 sentences (gold CoNLL-U with CorefUD coreference, Pharaoh
alignments), then runs `tag_files` on it several times and reports the median of each stage.
"Tagging" is the five phenomena over the annotated documents; the end-to-end figure includes
reading and validating CoNLL-U and alignments, ellipsis detection and writing the outputs.
Run it pinned to one core:

    taskset -c 0 .venv/bin/python -m bench.muda_tag_speed [--docs 545] [--repeats 5] [--json result.json]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench import harness
from contextual_mt.demo.corpus import generate_demo_data
from muda.tagger import TagOptions, tag_files


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docs", type=int, default=545, help="test documents (545 gives about 3,000 sentences)")
    harness.add_arguments(p, repeats=5)
    args = harness.parse(p, argv)
    print(harness.machine_line(harness.machine_info()), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        generate_demo_data(str(d), train_docs=1, valid_docs=1, test_docs=args.docs, seed=21)
        options = TagOptions(
            str(d / "test.en"),
            str(d / "test.fr"),
            str(d / "test.docids"),
            "fr",
            str(d / "tags.json"),
            src_conllu=str(d / "test.en.conllu"),
            tgt_conllu=str(d / "test.fr.conllu"),
            alignments=str(d / "test.align"),
        )
        runs = []
        wall = harness.time_it(lambda: runs.append(tag_files(options, progress=False)), repeats=args.repeats)
        n = runs[0]["sentences"]
    # the stages' own times (tag_files measures them), summarized alike
    stage_timings = {k: harness.summarize([r["seconds"][k] for r in runs]) for k in runs[0]["seconds"]}
    stages = {k: t.median for k, t in stage_timings.items()}
    total = sum(stages.values())
    summary = {
        "sentences": n,
        "documents": runs[0]["documents"],
        "tags": runs[0]["tags"],
        "median_seconds_per_stage": stages,
        "total_seconds": total,
        "tagging_sentences_per_s": n / stages["tagging"],
        "end_to_end_sentences_per_s": n / total,
        "stage_timings": stage_timings,
        "wall": wall,
    }
    print(f"{n} sentences, {summary['documents']} documents; tags: {summary['tags']}")
    for k, v in stages.items():
        print(f"  {k:12s} {v * 1000:8.1f} ms")
    print(
        f"tagging: {summary['tagging_sentences_per_s']:.0f} sentences/s; end to end: "
        f"{summary['end_to_end_sentences_per_s']:.0f} sentences/s"
    )
    harness.finish(args, "muda_tag_speed", summary)


if __name__ == "__main__":
    main()
