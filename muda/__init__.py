"""MuDA: tagging and evaluation of discourse phenomena (lexical cohesion, formality, pronouns,
verb form, ellipsis) in English->X translation (Fernandes et al., 2023).

``muda tag`` (``tagger``: annotate, tag, write) and ``muda eval`` (``evaluation/``: per-tag word
f-measure, BLEU, COMET, paired bootstrap); ``phenomena/`` holds one tagger per phenomenon,
``annotators/`` the models and look-ups that annotate the text, ``formats/`` the files read and
written, ``languages/`` the per-language word lists. It stands on ``commandkit`` (errors, the
console, text reading, outputs, document ids) and never imports the document-MT package, which
builds on it."""
