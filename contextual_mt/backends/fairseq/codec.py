"""Text <-> dictionary ids: a sentencepiece model checked against the dictionary, or whitespace."""

from __future__ import annotations

import os
from typing import List, Optional, Sequence

from contextual_mt.errors import Code, InputError
from contextual_mt.symbols import BRK, CONTEXT_SYMBOLS, FILLER


def model_pieces(sp) -> List[str]:
    """The pieces ``sp`` can put into encoded text, in id order (not its control, unknown or
    unused ones): what a dictionary of text encoded with it must hold."""
    return [
        sp.id_to_piece(i)
        for i in range(sp.get_piece_size())
        if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i))
    ]


def unknown_characters(sp, symbol: str) -> bool:
    """Whether ``symbol`` is what ``sp`` writes for a run of characters it does not know (their
    surface form: a dictionary built from encoded text may hold it, e.g. rare CJK characters)."""
    unk = sp.unk_id()
    return all(sp.piece_to_id(ch) == unk for ch in symbol)


def check_vocabulary(sp, model_path: str, dictionary, dictionary_path: str) -> None:
    """The sentencepiece model and the dictionary belong together, both ways: every piece of the
    model has an id (else it silently becomes <unk>), and every dictionary symbol is a piece
    (beyond fairseq's special symbols and fillers, the context symbols and unknown characters)."""
    pieces = model_pieces(sp)
    known = set(pieces)
    missing = [p for p in pieces if p not in dictionary.indices]
    symbols = dictionary.symbols[dictionary.nspecial :]
    foreign = [
        w
        for w in symbols
        if w not in known and w not in CONTEXT_SYMBOLS and not w.startswith(FILLER) and not unknown_characters(sp, w)
    ]
    if not (missing or foreign):
        return
    found = []
    if missing:
        found.append(
            f"{len(missing)} of its {len(pieces)} pieces are not in the dictionary (e.g. "
            f"{', '.join(map(repr, missing[:4]))})"
        )
    if foreign:
        found.append(
            f"{len(foreign)} of the {len(symbols)} dictionary symbols are not pieces of the model (e.g. "
            f"{', '.join(map(repr, foreign[:4]))})"
        )
    fix = (
        "give the sentencepiece model the data was encoded with"
        if foreign
        else "they would become <unk>: binarize with a dictionary of every piece (the data stage does; or "
        "fairseq-preprocess --srcdict) and train again, or give the model the data was encoded with"
    )
    raise InputError(
        f"{model_path}: sentencepiece model does not match the dictionary {dictionary_path}: {'; '.join(found)}; {fix}",
        code=Code.MISMATCH,
    )


class SentencePieceCodec:
    """Text <-> dictionary ids through a sentencepiece model (or whitespace, without one)."""

    def __init__(self, dictionary, model_path: Optional[str] = None, dictionary_path: str = "the dictionary"):
        self.dictionary = dictionary
        self.sp = None
        if model_path is not None:
            import sentencepiece as spm

            if not os.path.exists(model_path):
                raise InputError(f"{model_path}: sentencepiece model not found", code=Code.NOT_FOUND)
            try:
                self.sp = spm.SentencePieceProcessor(model_file=model_path)
            except Exception as e:  # sentencepiece raises plain RuntimeError/OSError
                raise InputError(f"{model_path}: not a sentencepiece model ({e})", code=Code.MODEL) from None
            check_vocabulary(self.sp, model_path, dictionary, dictionary_path)

    def encode(self, line: str) -> List[str]:
        if not line.strip():
            return []
        return self.sp.encode(line, out_type=str) if self.sp is not None else line.split()

    def to_ids(self, pieces: Sequence[str]) -> List[int]:
        return [self.dictionary.index(p) for p in pieces]

    def unknown_kind(self) -> str:
        """What a piece mapped to <unk> is, in the user's words. With a sentencepiece model checked
        against the dictionary (every piece has an id) it is never one of the model's pieces: it is
        a run of characters the model does not know (absent from the text it was trained on),
        which sentencepiece passes through as it is; without one, a word the dictionary lacks."""
        if self.sp is not None:
            return "characters the sentencepiece model never saw in training"
        return "words missing from the dictionary"

    def unknown_pieces(self, pieces: Sequence[str]) -> List[str]:
        """The pieces of an encoded line that map to <unk>."""
        unk = self.dictionary.unk()
        return [p for p in pieces if self.dictionary.index(p) == unk]

    def decode(self, ids: Sequence[int]) -> str:
        d = self.dictionary
        skip = {d.eos(), d.pad(), d.bos(), d.index(BRK)}
        pieces = [d[i] for i in ids if i not in skip]
        return self.sp.decode_pieces(pieces) if self.sp is not None else " ".join(pieces)


def unknown_warning(codec: SentencePieceCodec, count: str, first: str, examples: Sequence[str]) -> str:
    """The one warning line for input mapped to <unk>: how many lines or pairs (``count``, e.g.
    "3 lines"), what the unknown input is (``unknown_kind``) with a few examples, and where the
    first one is (``first``, e.g. "first at line 2")."""
    shown = ", ".join(repr(e.replace("\u2581", " ").strip() or e) for e in list(dict.fromkeys(examples))[:3])
    return f"{count} contain {codec.unknown_kind()}: {shown} (mapped to <unk>), {first}"
