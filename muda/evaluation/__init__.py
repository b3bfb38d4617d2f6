"""MuDA evaluation, one module per job: ``words`` (per-tag word precision/recall/F),
``significance`` (paired bootstrap), ``metrics`` (BLEU, COMET), ``run`` (``run_eval`` and its
``EvalOptions``: ``muda eval`` as a library call), ``table`` and ``plot`` (its outputs).

Nothing is imported here, so that importing one module does not load the others."""
