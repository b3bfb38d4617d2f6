"""MuDA: tagging and evaluation of discourse phenomena (lexical cohesion, formality, pronouns,
verb form, ellipsis) in English->X translation (Fernandes et al., 2023).

``muda tag`` (``tagger``: annotate, tag, write) and ``muda eval`` (``evaluation/``: per-tag word
f-measure, BLEU, COMET, paired bootstrap); ``phenomena/`` holds one tagger per phenomenon,
``annotators/`` the models and look-ups that annotate the text, ``formats/`` the files read and
written, ``languages/`` the per-language word lists. ``errors`` and ``io`` are the base layer of
both packages; muda stands alone: the document-MT package builds on it, never the reverse."""
