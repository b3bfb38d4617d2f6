"""Shared fixtures of the whole run: a tiny document-level EN->FR corpus, binarized with
fairseq-preprocess, and the synthetic demo corpora."""
from pathlib import Path

import pytest

from contextual_mt.demo.corpus import generate_demo_data
from tests.helpers import preprocess, write_corpus
from tests.zoo import Zoo


@pytest.fixture(scope="session")
def demo_corpus(tmp_path_factory):
    """``demo_corpus(train_docs=, valid_docs=, test_docs=, seed=)``: the folder of that synthetic
    demo corpus (text, CoNLL-U annotations, alignments, planted words), made once per run and
    shared, so tests must not write into it. tests/muda gets its demo data from here: the
    generator belongs to contextual_mt, which tests/muda does not import."""
    made = {}

    def folder(*, train_docs: int, valid_docs: int, test_docs: int, seed: int) -> Path:
        key = (train_docs, valid_docs, test_docs, seed)
        if key not in made:
            made[key] = tmp_path_factory.mktemp("demo-corpus-{}-{}-{}-seed{}".format(*key))
            generate_demo_data(str(made[key]), train_docs=train_docs, valid_docs=valid_docs, test_docs=test_docs,
                               seed=seed)
        return made[key]

    return folder


@pytest.fixture(scope="session")
def raw_corpus(tmp_path_factory) -> Path:
    raw = tmp_path_factory.mktemp("raw")
    write_corpus(raw)
    return raw


@pytest.fixture(scope="session")
def data_bin(tmp_path_factory, raw_corpus) -> Path:
    return preprocess(raw_corpus, tmp_path_factory.mktemp("data-bin"))


@pytest.fixture(scope="session")
def zoo(data_bin, tmp_path_factory) -> Zoo:
    """The tiny models the tests share (tests/zoo.py), each trained once per run on first use."""
    return Zoo(data_bin, tmp_path_factory.mktemp("zoo"))


@pytest.fixture(scope="session")
def dynamic_model(zoo) -> Path:
    """A tiny model with 2 source and 2 target context sentences, trained with dynamic context
    size (so it also works without context): CXMI and contrastive scoring use it."""
    return zoo.checkpoint("dynamic")
