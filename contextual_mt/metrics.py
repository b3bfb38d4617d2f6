"""Scoring translations: sacreBLEU BLEU and chrF, document-level BLEU, and COMET."""
from __future__ import annotations

import json
from typing import Dict, List, Optional, Sequence

from muda.evaluation import metrics as _muda_metrics
from muda.evaluation.metrics import comet_predict
from muda.io import group_by_document, read_docids
from contextual_mt.errors import ContextualMTError, InputError, check_option
from muda.io import atomic_write_text, outputs, read_lines


def join_documents(lines: Sequence[str], docids: Sequence[str]) -> List[str]:
    """Concatenate the sentences of each document (maximal runs of equal ids) with spaces."""
    return [" ".join(line.strip() for line in doc if line.strip()) for doc in group_by_document(lines, docids)]


def sentence_metrics(hyps: Sequence[str], refs: Sequence[str]) -> Dict:
    import sacrebleu

    bleu = sacrebleu.metrics.BLEU()
    chrf = sacrebleu.metrics.CHRF()
    b = bleu.corpus_score(list(hyps), [list(refs)])
    c = chrf.corpus_score(list(hyps), [list(refs)])
    return {
        "bleu": {"score": b.score, "signature": str(bleu.get_signature()), "text": str(b)},
        "chrf": {"score": c.score, "signature": str(chrf.get_signature()), "text": str(c)},
    }


def document_bleu(hyps: Sequence[str], refs: Sequence[str], docids: Sequence[str]) -> Dict:
    """d-BLEU: BLEU over whole documents (sentences concatenated), as in document-level MT."""
    import sacrebleu

    bleu = sacrebleu.metrics.BLEU()
    d = bleu.corpus_score(join_documents(hyps, docids), [join_documents(refs, docids)])
    return {"score": d.score, "signature": str(bleu.get_signature()), "text": str(d)}


def load_comet(model: str):
    """muda's COMET loader (``muda.evaluation.metrics``), failing with contextual_mt's error type."""
    try:
        return _muda_metrics.load_comet(model)
    except InputError as e:
        raise ContextualMTError(str(e)) from None


def comet_score(srcs: Sequence[str], hyps: Sequence[str], refs: Sequence[str], model: str,
                batch_size: int = 16, gpus: Optional[int] = None) -> Dict:
    return comet_predict(load_comet(model), srcs, hyps, refs, model, batch_size, gpus)


def score(hyps: Sequence[str], refs: Sequence[str], docids: Optional[Sequence[str]] = None,
          srcs: Optional[Sequence[str]] = None, comet_model: Optional[str] = None,
          comet_batch_size: int = 16) -> Dict:
    """All metrics for one system. d-BLEU needs ``docids``; COMET needs ``srcs``."""
    check_option("--comet-batch-size", comet_batch_size, minimum=1, integer=True)
    if len(hyps) != len(refs):
        raise ContextualMTError(f"{len(hyps)} hypotheses but {len(refs)} references")
    if not refs:
        raise ContextualMTError("no sentences to score")
    result = sentence_metrics(hyps, refs)
    if docids is not None:
        if len(docids) != len(refs):
            raise ContextualMTError(f"{len(docids)} document ids but {len(refs)} references")
        result["d_bleu"] = document_bleu(hyps, refs, docids)
    if comet_model is not None:
        if srcs is None:
            raise ContextualMTError("COMET needs the source sentences (--source)")
        result["comet"] = comet_score(srcs, hyps, refs, comet_model, comet_batch_size)
    return result


def summary_line(result: Dict) -> str:
    parts = [f"BLEU {result['bleu']['score']:.2f}", f"chrF {result['chrf']['score']:.2f}"]
    if "d_bleu" in result:
        parts.append(f"d-BLEU {result['d_bleu']['score']:.2f}")
    if "comet" in result:
        parts.append(f"COMET {result['comet']['score']:.4f}")
    return " | ".join(parts)


def score_files(hyp: str, ref: str, docids: Optional[str] = None, source: Optional[str] = None,
                comet_model: Optional[str] = None, comet_batch_size: int = 16,
                output: Optional[str] = None) -> Dict:
    """``contextual-mt score``: the metrics of the files; ``output`` is written atomically
    (checked writable first, nothing written on failure)."""
    check_option("--comet-batch-size", comet_batch_size, minimum=1, integer=True)
    with outputs(output):
        return _score_files(hyp, ref, docids, source, comet_model, comet_batch_size, output)


def _score_files(hyp: str, ref: str, docids: Optional[str], source: Optional[str], comet_model: Optional[str],
                 comet_batch_size: int, output: Optional[str]) -> Dict:
    hyps, refs = read_lines(hyp), read_lines(ref)
    for path, lines, what in ((hyp, hyps, "hypothesis"), (ref, refs, "reference")):
        if not lines:  # sacreBLEU has no score for no sentences
            raise ContextualMTError(f"{path}: {what} file is empty")
    if len(hyps) != len(refs):
        raise ContextualMTError(f"{hyp}: has {len(hyps)} lines but {ref} has {len(refs)}")
    ids = None
    if docids is not None:
        ids = read_docids(docids)
        if len(ids) != len(refs):
            raise ContextualMTError(f"{docids}: has {len(ids)} lines but {ref} has {len(refs)}")
    srcs = None
    if source is not None:
        srcs = read_lines(source)
        if len(srcs) != len(refs):
            raise ContextualMTError(f"{source}: has {len(srcs)} lines but {ref} has {len(refs)}")
    result = score(hyps, refs, ids, srcs, comet_model, comet_batch_size)
    result["files"] = {"hyp": hyp, "ref": ref, "docids": docids, "source": source}
    if output:
        atomic_write_text(output, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return result
