"""fairseq as a plugin and a backend, in one folder (the only one importing fairseq's modules):

* the plugin ``fairseq-train``/``fairseq-generate --user-dir contextual_mt`` loads:
  ``checkpoint_file`` (reading a checkpoint, one-line errors), ``data/`` (ContextDataset, the one
  builder of model inputs), ``models/`` and ``tasks/`` (the registered ``contextual_transformer*``,
  ``cadec_*``, ``document_translation``, ``cadec_translation``) and ``generation/`` (the
  fairseq-generate hooks); ``contextual_mt/__init__.py`` imports them once fairseq is imported;
* the backend the commands use: checkpoint loading (``model``), the sentencepiece codec, beam
  search with a context prefix, document translation, scoring and attribution; and the batch
  plan's probes of a training run (``training_probe``). Importing this package registers its
  family (``family``)."""

from contextual_mt.backends.fairseq import family  # noqa: F401  (registers the backend)
