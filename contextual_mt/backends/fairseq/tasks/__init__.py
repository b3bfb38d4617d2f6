"""fairseq task registrations: document_translation and cadec_translation (imported for
registration)."""

from contextual_mt.backends.fairseq.tasks.cadec_translation import CADecTranslationTask  # noqa: F401
from contextual_mt.backends.fairseq.tasks.document_translation import DocumentTranslationTask  # noqa: F401
