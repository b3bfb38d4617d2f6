"""Re-alignment of document-level output to its source sentences.

A system that translates a whole document (or a chunk of it) in one generation merges, splits,
drops and adds sentences. ``docalign`` reads such an output (``formats``), splits it into sentences
(``segmenter``), aligns the segments to the source lines with a banded monotonic dynamic program
(``dp``) whose link score is chrF against a sentence-level translation of each source line
(``chrf``; Bleualign's idea) with a Gale-Church length prior, and turns the links into a
line-aligned hypothesis that every evaluation reads (``links``). ``align`` is the library call.

The package stands on ``commandkit`` only: ``muda`` and ``contextual_mt`` both import it.
"""
