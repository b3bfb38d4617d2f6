"""Test suites for any language pair from MuDA tags: contrastive groups (``build``) and the
generative evaluation of a system's translations (``evaluate``)."""
