"""The offline demo: a synthetic EN-FR corpus with planted phenomena (``corpus``), the demo that
runs the study's data and train stages on it with the demo preset and compares the two models
(``pipeline``), and accuracy on the planted tokens (``planted``). ``python -m contextual_mt.demo``
runs ``contextual-mt demo``."""
