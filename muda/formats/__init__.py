"""File formats muda reads and writes: CoNLL-U (with CorefUD coreference), Pharaoh alignments,
the MuDA tags dump, and system outputs (plain lines or fairseq-generate output)."""
