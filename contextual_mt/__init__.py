"""contextual-mt: context-aware (document-level) machine translation as a fairseq plugin.

``fairseq-train --user-dir contextual_mt --task document_translation ...``
Importing the package activates the fairseq compatibility layer and registers the task, the
model architectures and the MuDA scorer (``--scoring muda``) with fairseq: at once when fairseq is
already imported (``--user-dir``), else as soon as it is, so that the package and its commands start
without torch and fairseq. It changes no other global state (the one-line error handling is
installed by the commands, see ``cli.main``).

Layout, one job per folder, from the base up (no module imports one that imports it back:
tests/test_architecture.py):
  symbols, errors   the context symbols and add-symbols; the error type (on commandkit.errors)
  data/             ContextDataset, the one builder of model inputs, the one context-trimming rule
  models/, tasks/   fairseq registrations: the contextual transformer, CADec, their tasks
  generation/       fairseq-generate hooks: prefix search, --score-reference, --scoring muda
  stage_record      a stage's fingerprint, done-record, .partial resume rule and --overwrite refusal
  inference/        the model interface (scoring and translation backends, model families),
                    checkpoint loading, sentencepiece codec, batching (one --max-tokens rule),
                    beam search, the waves loop, fairseq document translation and scoring
  hf/               Hugging Face models (--hf-model) as scoring and translation backends
  analysis/         CXMI / P-CXMI on a scoring backend, and its report (tables, plot, viewer)
  contrastive/      contrastive test sets in their authors' formats, scored on a backend
  metrics           ``contextual-mt score``: BLEU, chrF, d-BLEU, COMET
  pipeline/         the study per language pair: ``contextual-mt pipeline STAGE``, ``make all``;
                    the stages and presets declared once
  hydra_configs/    the presets' Hydra configs (package data)
  demo/             the offline demo (synthetic corpus with planted phenomena) and the CADec demo
  cli               argparse -> options object -> library call (pipeline_cli: the pipeline's
                    stages); no other module parses arguments
The other top-level modules each hold one idea that several folders share (the symbols, the
error type, the stage record, the checkpoint reader).
"""
import contextual_mt_compat

from contextual_mt.errors import ContextualMTError

contextual_mt_compat.register_plugins(
    "contextual_mt", ("contextual_mt.models", "contextual_mt.tasks", "contextual_mt.generation.muda_scorer"))

__version__ = "0.1.0"
__all__ = ["ContextualMTError", "__version__"]
