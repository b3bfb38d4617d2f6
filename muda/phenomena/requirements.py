"""The annotations a phenomenon reads, by name: phenomena declare which they require
(``muda.phenomena.register``), an annotator backend which it provides (``provides``), pre-computed
files supply theirs; the tagger runs the phenomena whose requirements are all met."""

from __future__ import annotations

from typing import FrozenSet, Optional

SOURCE_PARSE = "source parse"  # English UPOS, lemmas and dependencies
COREFERENCE = "coreference"  # English coreference chains
TARGET_MORPHOLOGY = "target morphology"  # target UPOS, FEATS and lemmas
ALIGNMENT = "word alignments"
# English sentences marked elliptical: the rules over a UD parse (stanza's, a pre-computed one) or
# a trained classifier; not the rules over spaCy's parse (ClearNLP labels), which find next to none
ELLIPSIS_DETECTION = "ellipsis detection"
ALL: FrozenSet[str] = frozenset({SOURCE_PARSE, COREFERENCE, TARGET_MORPHOLOGY, ALIGNMENT, ELLIPSIS_DETECTION})


def precomputed(src_conllu: Optional[str], tgt_conllu: Optional[str], alignments: Optional[str]) -> FrozenSet[str]:
    """What the pre-computed files supply (coreference: the CorefUD Entity values of --src-conllu;
    ellipsis detection: the rules over its UD parse)."""
    given = set()
    if src_conllu:
        given |= {SOURCE_PARSE, COREFERENCE, ELLIPSIS_DETECTION}
    if tgt_conllu:
        given.add(TARGET_MORPHOLOGY)
    if alignments:
        given.add(ALIGNMENT)
    return frozenset(given)
