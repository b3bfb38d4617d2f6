"""contextual-mt: context-aware (document-level) machine translation as a fairseq plugin.

``fairseq-train --user-dir contextual_mt --task document_translation ...``
Importing the package activates the fairseq compatibility layer and registers the task, the
model architectures and the MuDA scorer (``--scoring muda``) with fairseq; it changes no other
global state (the one-line error handling is installed by the commands, see ``cli.main``).

Layout (one job per folder; imports go down this list, never up):
  symbols, errors   the context symbols; the error type (on muda.errors and muda.io)
  data/             ContextDataset and the one builder of model inputs
  models/, tasks/   fairseq registrations
  generation/       fairseq-generate hooks: prefix search, --score-reference, --scoring muda
  inference/        checkpoint loading, sentencepiece codec, beam search, translation,
                    the scoring backend (token log-probs with and without context)
  analysis/         CXMI / P-CXMI on the backend, and its report
  metrics           ``contextual-mt score``
  demo/             the offline demo
  cli               argparse -> library calls
"""
import contextual_mt_compat

contextual_mt_compat.activate()

from contextual_mt.errors import ContextualMTError  # noqa: E402
from contextual_mt import models, tasks  # noqa: E402,F401
from contextual_mt.generation import muda_scorer  # noqa: E402,F401

__version__ = "0.1.0"
__all__ = ["ContextualMTError", "__version__"]
