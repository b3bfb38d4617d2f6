"""File formats muda reads and writes: CoNLL-U (with CorefUD coreference), Pharaoh alignments,
the MuDA tags dump, system outputs (plain lines or fairseq-generate output), and Penn Treebank
trees (training data of the ellipsis classifier)."""
