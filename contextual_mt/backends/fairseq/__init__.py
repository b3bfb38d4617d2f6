"""fairseq ``document_translation`` and ``cadec_translation`` checkpoints as a backend:
checkpoint loading, the sentencepiece codec, beam search with a context prefix, document
translation, scoring and attribution. Importing it registers its family (``family``)."""

from contextual_mt.backends.fairseq import family  # noqa: F401  (registers the backend)
