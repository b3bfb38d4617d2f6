"""CUDA check of the inference layer: the same checkpoint on the GPU and on the CPU must give the
same translations (beam search with predicted context) and the same P-CXMI.

    python bench/gpu_check.py --path CKPT --spm SPM --source S --reference R --docids D [--out OUT.json]

Writes the agreement (identical output lines, max |P-CXMI difference|) and the seconds of each
device as JSON. Needs a GPU; prints what it found and exits 1 when CUDA is not available.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import torch


def run(device_cpu: bool, args: argparse.Namespace, sources, references, ids):
    from contextual_mt.analysis.cxmi import PCXMIScorer
    from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
    from contextual_mt.backends.fairseq.scoring import FairseqScoringBackend
    from contextual_mt.backends.fairseq.translator import DocumentTranslator
    from contextual_mt.inference.decoding import DecodingOptions

    # float32 on both devices: the check compares CUDA with CPU arithmetic, not precisions
    model = DocumentModel.load(FairseqModelOptions(args.path, spm=args.spm, cpu=device_cpu, dtype="float32"))
    translator = DocumentTranslator(model, options=DecodingOptions(beam=args.beam, batch_size=64))
    t0 = time.perf_counter()
    hyps = translator.translate(sources, ids, progress=False)
    if model.device.type == "cuda":
        torch.cuda.synchronize()
    t_translate = time.perf_counter() - t0
    scorer = PCXMIScorer(FairseqScoringBackend(model), batch_size=64)
    t0 = time.perf_counter()
    records = [r for batch in scorer.score(sources, references, ids, progress=False) for r in batch]
    t_cxmi = time.perf_counter() - t0
    records.sort(key=lambda r: r["line"])
    return {
        "device": str(model.device),
        "hyps": hyps,
        "pcxmi": [r["token_pcxmi"] for r in records],
        "cxmi": float(np.mean([r["sentence_pcxmi"] for r in records])),
        "seconds": {"translate": round(t_translate, 2), "cxmi": round(t_cxmi, 2)},
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    for name in ("--path", "--spm", "--source", "--reference", "--docids"):
        p.add_argument(name, required=True)
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--out")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("CUDA is not available here", file=sys.stderr)
        return 1
    from commandkit.documents import read_docids
    from commandkit.text import read_lines

    sources, references, ids = read_lines(args.source), read_lines(args.reference), read_docids(args.docids)
    gpu = run(False, args, sources, references, ids)
    cpu = run(True, args, sources, references, ids)
    same = sum(a == b for a, b in zip(gpu["hyps"], cpu["hyps"]))
    diff = max(float(np.max(np.abs(np.subtract(a, b)))) if a else 0.0 for a, b in zip(gpu["pcxmi"], cpu["pcxmi"]))
    result = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "sentences": len(sources),
        "identical_translations": same,
        "max_abs_token_pcxmi_diff": diff,
        "cxmi": {"cuda": gpu["cxmi"], "cpu": cpu["cxmi"]},
        "seconds": {"cuda": gpu["seconds"], "cpu": cpu["seconds"]},
    }
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
