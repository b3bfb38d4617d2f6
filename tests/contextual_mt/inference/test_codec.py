"""The sentencepiece codec: the model and the dictionary must belong together, both ways."""

import pytest
from fairseq.data import Dictionary

from contextual_mt.backends.fairseq.codec import SentencePieceCodec, model_pieces
from contextual_mt.errors import InputError

LINES = ["the cat sees the dog", "a dog sees a cat", "le chat voit le chien", "un chien voit un chat"]


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory):
    import sentencepiece as spm

    prefix = tmp_path_factory.mktemp("codec") / "spm"
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(LINES * 10),
        model_prefix=str(prefix),
        vocab_size=40,
        model_type="bpe",
        hard_vocab_limit=False,
        minloglevel=2,
    )
    path = f"{prefix}.model"
    return path, model_pieces(spm.SentencePieceProcessor(model_file=path))


def dictionary_of(symbols):
    d = Dictionary()
    for symbol in symbols:
        d.add_symbol(symbol)
    return d


def test_every_piece_and_only_pieces_is_accepted(spm_model):
    path, pieces = spm_model
    # beyond the pieces: the context symbols, fairseq's fillers, and the surface form that
    # sentencepiece writes for characters it does not know (a dictionary built from text has it)
    d = dictionary_of([*pieces, "<brk>", "<mask>", "madeupword0000", "漢字"])
    codec = SentencePieceCodec(d, path, "dict.en.txt")
    assert codec.to_ids(codec.encode("the cat")) and d.unk() not in codec.to_ids(codec.encode("the cat"))


def test_pieces_missing_from_the_dictionary_are_refused(spm_model):
    path, pieces = spm_model
    with pytest.raises(InputError) as e:
        SentencePieceCodec(dictionary_of(pieces[:-5]), path, "data/dict.en.txt")
    msg = str(e.value)
    assert "\n" not in msg and path in msg and "data/dict.en.txt" in msg
    assert f"5 of its {len(pieces)} pieces are not in the dictionary" in msg and repr(pieces[-5]) in msg


def test_dictionary_symbols_that_are_not_pieces_are_refused(spm_model):
    path, pieces = spm_model
    with pytest.raises(InputError) as e:
        SentencePieceCodec(dictionary_of([*pieces, "▁zebra"]), path, "dict.fr.txt")
    msg = str(e.value)
    assert "dict.fr.txt" in msg and "1 of the" in msg and "not pieces of the model" in msg and "'▁zebra'" in msg
    assert "pieces are not in the dictionary" not in msg


def test_without_a_model_the_text_is_whitespace_tokens():
    codec = SentencePieceCodec(dictionary_of(["a", "b"]))
    assert codec.encode("a b c") == ["a", "b", "c"] and codec.decode(codec.to_ids(["a", "b"])) == "a b"
