"""Benchmarks of contextual-mt and MuDA, each runnable from the repository root as
``python -m bench.NAME`` (``--help`` says what it measures); all report through
``bench.harness``. Studies and one-off experiments are in ``bench.studies``; their figures and
everything measured are in bench/RESULTS.md."""
