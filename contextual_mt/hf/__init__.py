"""Hugging Face models (seq2seq MT models and decoder-only LMs) as scoring and translation
backends: ``--hf-model`` of ``contextual-mt cxmi``, ``contrastive`` and ``translate``."""
