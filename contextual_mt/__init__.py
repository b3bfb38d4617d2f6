"""contextual-mt: context-aware (document-level) machine translation as a fairseq plugin.

``fairseq-train --user-dir contextual_mt --task document_translation ...``
Importing the package activates the fairseq compatibility layer and registers the task,
model architectures, the reference scorer and the MuDA scorer (--scoring muda) with fairseq.
"""
import contextual_mt_compat

contextual_mt_compat.activate()

from contextual_mt.errors import ContextualMTError, install_excepthook  # noqa: E402

install_excepthook()

from contextual_mt import models, muda_scorer, tasks  # noqa: E402,F401

__version__ = "0.1.0"
__all__ = ["ContextualMTError", "__version__"]
