"""fairseq task registrations: document_translation (imported for registration)."""
from contextual_mt.tasks.document_translation import DocumentTranslationTask  # noqa: F401
