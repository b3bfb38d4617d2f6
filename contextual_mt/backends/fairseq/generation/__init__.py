"""Hooks into fairseq-generate: beam search that keeps beams apart after a forced context prefix,
reference scoring (--score-reference) and the MuDA scorer (--scoring muda)."""
