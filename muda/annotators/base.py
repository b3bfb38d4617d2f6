"""What an annotator is: the ``Annotator`` protocol, the four steps that turn raw text into what
the tagger needs, for whatever the user did not pre-compute. ``tag_files`` calls only these.

An annotator that cannot do a step raises one ``InputError`` naming the pre-computed file (or
option) that supplies it, instead of failing somewhere inside the tagger.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Protocol, Sequence, Tuple, runtime_checkable

from muda.annotation import Sentence
from muda.formats.coref import Mention
from muda.formats.pharaoh import Alignment

# document id -> coreference mentions of the source; None: coreference is in the CoNLL-U (CorefUD)
SourceMentions = Optional[Dict[str, List[Mention]]]


@runtime_checkable
class Annotator(Protocol):
    @property
    def has_ellipsis_model(self) -> bool:
        """True when ``ellipsis`` runs a trained classifier; otherwise the tagger uses the
        rule-based detector over the English parse (an attribute or a property)."""
        ...

    def source(self, lines: Sequence[str], docids: Sequence[str]) -> Tuple[List[Sentence], SourceMentions]:
        """The English source: morphology, dependencies and coreference, one sentence per line."""
        ...

    def target(self, lines: Sequence[str], lang: str) -> List[Sentence]:
        """The target side (reference or hypothesis): morphology, one sentence per line."""
        ...

    def align(self, src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]]) -> List[Alignment]:
        """Word alignments between the token forms of each sentence pair."""
        ...

    def ellipsis(self, sentences: Sequence[Sentence], lines: Sequence[str]) -> List[bool]:
        """Whether each English source sentence is elliptical."""
        ...
