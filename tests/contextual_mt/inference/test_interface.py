"""The one interface and the shared helpers of inference: every backend implements the
protocols, one context-trimming rule (scalar, list and array forms agree), one waves loop, one
batching rule."""

import inspect

import numpy as np
import pytest

from contextual_mt.backends.fairseq.family import FairseqFamily
from contextual_mt.backends.fairseq.model import FairseqModelOptions
from contextual_mt.backends.fairseq.scoring import CADecScoringBackend, FairseqScoringBackend
from contextual_mt.backends.fairseq.translator import DocumentTranslator
from contextual_mt.backends.hf.family import HFFamily
from contextual_mt.backends.hf.options import HFModelOptions
from contextual_mt.backends.hf.scoring import HFScoringBackend
from contextual_mt.backends.hf.translator import HFDocumentTranslator
from contextual_mt.inference.batching import length_batches
from contextual_mt.inference.context_trim import last_sentences, nearest_context, nearest_fitting, nearest_fitting_sizes
from contextual_mt.inference.interface import CorpusScorer, ModelFamily, ModelSpec, PairScorer, Translator
from contextual_mt.inference.registry import family
from contextual_mt.inference.waves import translate_in_waves, waves


def protocol_methods(protocol) -> set:
    return {name for name, value in vars(protocol).items() if inspect.isfunction(value) and not name.startswith("_")}


@pytest.mark.parametrize("protocol", [CorpusScorer, PairScorer])
@pytest.mark.parametrize("cls", [FairseqScoringBackend, CADecScoringBackend, HFScoringBackend])
def test_every_scoring_backend_implements_the_interface(cls, protocol):
    """Each backend scores both ways: a corpus (CXMI) and free-standing pairs (contrastive);
    each protocol holds only its own way (the corpus scorer no pair method, and back)."""
    methods = protocol_methods(protocol)
    assert ("token_log_probs_both" in methods) == (protocol is CorpusScorer)
    assert ("pair_log_probs" in methods) == (protocol is PairScorer)
    missing = sorted(m for m in methods if not callable(getattr(cls, m, None)))
    assert missing == []
    for m in methods:  # same parameters as declared
        assert list(inspect.signature(getattr(cls, m)).parameters) == list(
            inspect.signature(getattr(protocol, m)).parameters
        ), (cls.__name__, m)
    assert "trained_context" in dir(protocol)  # the sizes as trained (a backend sets it when loaded)


@pytest.mark.parametrize("cls", [DocumentTranslator, HFDocumentTranslator])
def test_every_translator_implements_the_interface(cls):
    assert list(inspect.signature(cls.translate).parameters) == list(inspect.signature(Translator.translate).parameters)


def test_each_model_spec_has_its_family():
    assert isinstance(family(FairseqModelOptions("ckpt.pt")), FairseqFamily)
    assert isinstance(family(HFModelOptions("some/model")), HFFamily)
    for kind in (FairseqFamily, HFFamily):
        assert protocol_methods(ModelFamily) <= {m for m in dir(kind) if callable(getattr(kind, m))}
    assert family(FairseqModelOptions("ckpt.pt", spm="spm.model")).reads_raw_text(
        FairseqModelOptions("ckpt.pt", spm="spm.model")
    )
    assert not family(FairseqModelOptions("ckpt.pt")).reads_raw_text(FairseqModelOptions("ckpt.pt"))
    assert family(HFModelOptions("some/model")).reads_raw_text(HFModelOptions("some/model"))


def test_every_options_class_is_a_model_spec():
    """What the runners read of a model specification (``ModelSpec``, a protocol, not ``Any``) each
    backend's options class has."""
    members = {name for name, value in vars(ModelSpec).items() if isinstance(value, property)}
    assert {"path", "source_context_size", "target_context_size", "dtype", "cpu"} <= members
    for spec in (FairseqModelOptions("ckpt.pt"), HFModelOptions("some/model")):
        assert [m for m in sorted(members) if not hasattr(spec, m)] == [], type(spec).__name__


def test_nearest_fitting_drops_the_furthest_of_the_longer_side_first():
    tried = []

    def attempt(n_src, n_tgt):
        tried.append((n_src, n_tgt))
        return n_src + n_tgt <= 2, (n_src, n_tgt)

    assert nearest_fitting(3, 2, attempt, lambda v: ValueError(v)) == (1, 1)
    assert tried == [(3, 2), (2, 2), (1, 2), (1, 1)]  # a tie drops a source sentence
    with pytest.raises(ValueError):
        nearest_fitting(1, 1, lambda a, b: (False, (a, b)), lambda v: ValueError(v))
    assert nearest_fitting(1, 0, lambda a, b: (False, a)) == 0  # no error asked for: the value without context


def test_last_sentences_is_the_nearest_k_or_all():
    assert [last_sentences([1, 2], k) for k in range(4)] == [[], [2], [1, 2], [1, 2]]
    assert last_sentences(("a", "b", "c", "d"), 3) == ["b", "c", "d"] and last_sentences([], 3) == []


def test_nearest_context_keeps_the_nearest_sentences_that_fit():
    previous = [[1, 1, 1], [2, 2], [3]]
    assert nearest_context(previous, 3, 9, room=100) == [1, 1, 1, 9, 2, 2, 9, 3, 9]
    assert nearest_context(previous, 2, 9, room=100) == [2, 2, 9, 3, 9]
    assert nearest_context(previous, 3, 9, room=5) == [2, 2, 9, 3, 9]
    assert nearest_context(previous, 3, 9, room=4) == [3, 9]
    assert nearest_context(previous, 3, 9, room=-1) == []
    assert nearest_context(previous, 0, 9, room=100) == []
    assert nearest_context([], 3, 9, room=100) == []


def test_array_form_agrees_with_the_list_form():
    rng = np.random.default_rng(0)
    for _ in range(50):
        lengths = rng.integers(1, 6, size=6).tolist()
        previous = [[7] * (n - 1) for n in lengths[:-1]]  # a sentence of n tokens with its <brk>
        own, k, limit = lengths[-1], int(rng.integers(0, 6)), int(rng.integers(1, 20))
        ids = nearest_context(previous, k, 0, limit - own)
        kept = ids.count(0)
        window = previous[max(0, len(previous) - k) :] if k else []
        cost = np.cumsum([0] + [len(s) + 1 for s in reversed(window)])
        array = nearest_fitting_sizes(np.array([len(window)]), lambda a, own=own, cost=cost: own + cost[a], limit)
        assert int(array[0]) == kept


def test_waves_take_the_t_th_sentence_of_every_document():
    docs = [[0, 1, 2], [3], [4, 5]]
    assert waves(docs) == [[(0, []), (3, []), (4, [])], [(1, [0]), (5, [4])], [(2, [0, 1])]]
    assert waves(docs, sequential=False) == [[(0, []), (1, [0]), (2, [0, 1]), (3, []), (4, []), (5, [4])]]
    assert waves([]) == []


def test_translate_in_waves_gives_each_wave_the_translations_before_it():
    docs = [[0, 1, 2], [3, 4]]
    seen = []

    def decode_wave(wave, predicted):
        seen.append([predicted[j] for _, prev in wave for j in prev])
        yield [(i, f"t{i}") for i, _ in wave]

    out = translate_in_waves(docs, 5, decode_wave, progress=False)
    assert out == ["t0", "t1", "t2", "t3", "t4"]
    assert seen == [[], ["t0", "t3"], ["t0", "t1"]]


def test_one_batching_rule():
    length = {0: 5, 1: 1, 2: 3, 3: 3, 4: 9}.__getitem__
    assert length_batches(range(5), length, batch_size=2) == [[1, 2], [3, 0], [4]]
    # padded tokens: rows times the longest row; a longer row is a batch alone
    assert length_batches(range(5), length, batch_size=10, max_tokens=6) == [[1, 2], [3], [0], [4]]
    assert length_batches(range(5), length, batch_size=2, order=lambda i: -i) == [[4, 3], [2, 1], [0]]
