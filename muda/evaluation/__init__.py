"""MuDA evaluation: per-tag word precision/recall/F, paired bootstrap significance, MT metrics
(BLEU, COMET), and ``run_eval`` with its table and plot."""
