"""CUDA = CPU: the same checkpoint run on the GPU and on the CPU (float32 on both) gives the same
translations (beam search with predicted target context, decoded in parallel rounds on the GPU
and in waves on the CPU by ``--decoding auto``) and the same P-CXMI. Marked ``gpu``: skipped,
with the reason, where CUDA is absent (``pytest -m gpu`` runs these alone). Formerly
bench/gpu_check.py after bench/gpu_demo_check.sh trained a demo model; this builds what it needs
itself: the tests' tiny corpus and the zoo's dynamic-context model."""

import numpy as np
import pytest
import torch

from contextual_mt.analysis.pcxmi_scorer import PCXMIScorer
from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
from contextual_mt.backends.fairseq.scoring import scoring_backend
from contextual_mt.backends.fairseq.translator import DocumentTranslator
from contextual_mt.inference.decoding import DecodingOptions

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available: the CUDA = CPU check needs a GPU"),
]

# the largest |token P-CXMI (CUDA) - token P-CXMI (CPU)| allowed, in nats (bench/RESULTS.md, "CUDA
# check of the inference layer": 3.0e-6 on the demo model)
TOLERANCE = 1e-4


def outputs(checkpoint, data_bin, raw_corpus, cpu: bool):
    """Translations and per-line token P-CXMI of the tiny corpus's valid and test splits."""
    src, ref, ids = [], [], []
    for split in ("valid", "test"):
        src += (raw_corpus / f"{split}.en").read_text().splitlines()
        ref += (raw_corpus / f"{split}.fr").read_text().splitlines()
        ids += (raw_corpus / f"{split}.docids").read_text().splitlines()
    model = DocumentModel.load(FairseqModelOptions(str(checkpoint), data=str(data_bin), cpu=cpu, dtype="float32"))
    assert model.device.type == ("cpu" if cpu else "cuda")
    hyps = DocumentTranslator(model, options=DecodingOptions(beam=4, batch_size=64)).translate(src, ids, progress=False)
    scorer = PCXMIScorer(scoring_backend(model), batch_size=64)
    records = sorted(
        (r for batch in scorer.score(src, ref, ids, progress=False) for r in batch), key=lambda r: r["line"]
    )
    return list(hyps), [r["token_pcxmi"] for r in records]


def test_cuda_and_cpu_give_the_same_translations_and_pcxmi(zoo, data_bin, raw_corpus):
    checkpoint = zoo.checkpoint("dynamic")  # target context 2, dynamic size: predicted context decoded
    gpu_hyps, gpu_pcxmi = outputs(checkpoint, data_bin, raw_corpus, cpu=False)
    cpu_hyps, cpu_pcxmi = outputs(checkpoint, data_bin, raw_corpus, cpu=True)
    assert len(gpu_hyps) == len(cpu_hyps) > 0
    differ = [i for i, (a, b) in enumerate(zip(gpu_hyps, cpu_hyps, strict=True)) if a != b]
    assert not differ, f"{len(differ)} of {len(cpu_hyps)} translations differ, first line {differ[0] + 1}"
    assert [len(a) for a in gpu_pcxmi] == [len(b) for b in cpu_pcxmi]
    largest = max(float(np.max(np.abs(np.subtract(a, b)))) for a, b in zip(gpu_pcxmi, cpu_pcxmi, strict=True) if a)
    assert largest < TOLERANCE
