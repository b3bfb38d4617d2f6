"""The offline demo: a synthetic EN-FR corpus with planted phenomena (``corpus``), the pipeline
that trains and compares two models on it (``pipeline``), and accuracy on the planted tokens
(``planted``). ``python -m contextual_mt.demo`` runs ``contextual-mt demo``."""
