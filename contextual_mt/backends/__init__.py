"""The model backends, each in one folder holding everything of it (loading, codec, scoring,
translation, attribution) and registering its ``ModelFamily`` with ``inference.registry``:
``fairseq/`` (``document_translation`` checkpoints, multi-encoder and CADec included) and
``hf/`` (Hugging Face seq2seq MT models and decoder-only LMs). What every backend shares (the
interface, batching, the decoding driver, decoding options, precision) sits below, in
``inference/``."""
