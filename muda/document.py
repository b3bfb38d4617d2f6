"""A document as the tagger sees it: aligned, annotated sentence pairs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from muda.annotation import Sentence
from muda.formats.coref import CorefIndex
from muda.formats.pharaoh import Alignment


@dataclass
class SentencePair:
    src: Sentence
    tgt: Sentence
    alignment: Alignment = field(default_factory=set)
    src_elliptical: bool = False

    def aligned_sources(self, j: int) -> List[int]:
        return sorted(i for i, jj in self.alignment if jj == j)


@dataclass
class Document:
    id: str
    pairs: List[SentencePair]
    coref: Optional[CorefIndex] = None  # source-side coreference
