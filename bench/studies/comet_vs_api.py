"""COMET and Doc-COMET of ``contextual_mt.metrics.score`` against unbabel-comet's own ``predict``
(and ``enable_context``) on the tiny COMET model the tests build: the largest difference per
segment. From the repository root: PYTHONPATH=$PWD .venv/bin/python bench/comet_vs_api.py [FOLDER]"""

import sys
from pathlib import Path

from contextual_mt.metrics import score
from muda.evaluation.metrics import quiet_comet
from tests.contextual_mt.test_comet import BATCH, DOCS, HYPS, REFS, SRCS, own_scores, paper_inputs
from tests.hf_models import build_comet


def main(folder: Path) -> None:
    build_comet(folder)
    with quiet_comet():
        import comet

        own = comet.load_from_checkpoint(str(folder / "checkpoints" / "model.ckpt"))
    result = score(HYPS, REFS, DOCS, SRCS, comet_model=str(folder), comet_batch_size=BATCH)
    sep = own.encoder.tokenizer.sep_token
    for name, key, (segments, system) in (
        ("COMET", "comet", own_scores(own, SRCS, HYPS, REFS)),
        ("Doc-COMET", "doc_comet", own_scores(own, *paper_inputs(sep), context=True)),
    ):
        ours = result[key]
        diff = max(abs(a - b) for a, b in zip(ours["segments"], segments))
        print(
            f"{name}: {len(segments)} segments, max |difference| {diff:g}, system {abs(ours['score'] - system):g}; "
            f"segments {min(segments):.4f} .. {max(segments):.4f}; {ours['signature']}"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/comet-bench-model"))
