from contextual_mt.tasks.document_translation import DocumentTranslationTask  # noqa: F401
