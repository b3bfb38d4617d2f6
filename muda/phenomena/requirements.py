"""The annotations a phenomenon reads, by name: phenomena declare which they require
(``muda.phenomena.register``), an annotator backend which it provides (``provides``), pre-computed
files supply theirs; the tagger runs the phenomena whose requirements are all met."""
from __future__ import annotations

from typing import FrozenSet, Optional

SOURCE_PARSE = "source parse"  # English UPOS, lemmas and dependencies
COREFERENCE = "coreference"  # English coreference chains
TARGET_MORPHOLOGY = "target morphology"  # target UPOS, FEATS and lemmas
ALIGNMENT = "word alignments"
ALL: FrozenSet[str] = frozenset({SOURCE_PARSE, COREFERENCE, TARGET_MORPHOLOGY, ALIGNMENT})


def precomputed(src_conllu: Optional[str], tgt_conllu: Optional[str], alignments: Optional[str]) -> FrozenSet[str]:
    """What the pre-computed files supply (coreference: the CorefUD Entity values of --src-conllu)."""
    given = set()
    if src_conllu:
        given |= {SOURCE_PARSE, COREFERENCE}
    if tgt_conllu:
        given.add(TARGET_MORPHOLOGY)
    if alignments:
        given.add(ALIGNMENT)
    return frozenset(given)
