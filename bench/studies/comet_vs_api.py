"""COMET and Doc-COMET of ``contextual_mt.metrics.score`` against unbabel-comet's own ``predict``
(and ``enable_context``) on the tiny COMET model the tests build: the largest difference per
segment. From the repository root:

    .venv/bin/python -m bench.studies.comet_vs_api [--folder /tmp/comet-bench-model] [--json result.json]
"""

import argparse
from pathlib import Path

from bench import harness
from contextual_mt.metrics import score
from muda.evaluation.metrics import quiet_comet
from tests.contextual_mt.test_comet import BATCH, DOCS, HYPS, REFS, SRCS, own_scores, paper_inputs
from tests.hf_models import build_comet


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--folder", type=Path, default=Path("/tmp/comet-bench-model"), help="where the tiny model is built")
    harness.add_arguments(p, repeats=None)
    args = harness.parse(p, argv)
    folder = args.folder
    build_comet(folder)
    with quiet_comet():
        import comet

        own = comet.load_from_checkpoint(str(folder / "checkpoints" / "model.ckpt"))
    result = score(HYPS, REFS, DOCS, SRCS, comet_model=str(folder), comet_batch_size=BATCH)
    sep = own.encoder.tokenizer.sep_token
    figures = {}
    for name, key, (segments, system) in (
        ("COMET", "comet", own_scores(own, SRCS, HYPS, REFS)),
        ("Doc-COMET", "doc_comet", own_scores(own, *paper_inputs(sep), context=True)),
    ):
        ours = result[key]
        diff = max(abs(a - b) for a, b in zip(ours["segments"], segments, strict=True))
        print(
            f"{name}: {len(segments)} segments, max |difference| {diff:g}, system {abs(ours['score'] - system):g}; "
            f"segments {min(segments):.4f} .. {max(segments):.4f}; {ours['signature']}"
        )
        figures[name] = {
            "segments": len(segments),
            "max_abs_segment_difference": diff,
            "system_difference": abs(ours["score"] - system),
            "signature": ours["signature"],
        }
    harness.finish(args, "studies.comet_vs_api", figures)


if __name__ == "__main__":
    main()
