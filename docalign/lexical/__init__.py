"""A lexical translation table for aligning without a reference (``--pivot none``, SEGALE's mode):
IBM Model 1 learned from the pair's training data (``model1``), and the source lines glossed word
by word with it (``gloss``): a pivot in the output's language, which chrF compares with the
output's sentences as it compares a reference (hunalign's dictionary-gloss idea)."""
