"""Text <-> dictionary ids: a sentencepiece model checked against the dictionary, or whitespace."""
from __future__ import annotations

import os
from typing import List, Optional, Sequence

from contextual_mt.errors import ContextualMTError
from contextual_mt.symbols import BRK, CONTEXT_SYMBOLS


class SentencePieceCodec:
    """Text <-> dictionary ids through a sentencepiece model (or whitespace, without one)."""

    def __init__(self, dictionary, model_path: Optional[str] = None):
        self.dictionary = dictionary
        self.sp = None
        if model_path is not None:
            import sentencepiece as spm

            if not os.path.exists(model_path):
                raise ContextualMTError(f"{model_path}: sentencepiece model not found")
            try:
                self.sp = spm.SentencePieceProcessor(model_file=model_path)
            except Exception as e:  # sentencepiece raises plain RuntimeError/OSError
                raise ContextualMTError(f"{model_path}: not a sentencepiece model ({e})") from None
            # Data encoded with this model yields only its pieces, so (nearly) every regular
            # dictionary symbol must be one. (The converse fails for BPE: merge intermediates.)
            pieces = {self.sp.id_to_piece(i) for i in range(self.sp.get_piece_size())}
            symbols = [w for w in dictionary.symbols[dictionary.nspecial:]
                       if w not in CONTEXT_SYMBOLS and not w.startswith("madeupword")]
            foreign = [w for w in symbols if w not in pieces]
            if symbols and len(foreign) > 0.1 * len(symbols):
                raise ContextualMTError(
                    f"{model_path}: sentencepiece model does not match the dictionary "
                    f"({len(foreign)} of {len(symbols)} dictionary symbols are not pieces of "
                    f"this model, e.g. {foreign[:3]})"
                )

    def encode(self, line: str) -> List[str]:
        if not line.strip():
            return []
        return self.sp.encode(line, out_type=str) if self.sp is not None else line.split()

    def to_ids(self, pieces: Sequence[str]) -> List[int]:
        return [self.dictionary.index(p) for p in pieces]

    def decode(self, ids: Sequence[int]) -> str:
        d = self.dictionary
        skip = {d.eos(), d.pad(), d.bos(), d.index(BRK)}
        pieces = [d[i] for i in ids if i not in skip]
        return self.sp.decode_pieces(pieces) if self.sp is not None else " ".join(pieces)
