"""Analyses of how a model uses context: CXMI / P-CXMI and the P-CXMI report (tables, plot, viewer)."""
