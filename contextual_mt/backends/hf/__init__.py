"""Hugging Face models (seq2seq MT models and decoder-only LMs) as a backend (``--hf-model``):
loading, prompt templates and input layout, scoring, translation and attribution. Importing it
registers its family (``family``)."""

from contextual_mt.backends.hf import family  # noqa: F401  (registers the backend)
