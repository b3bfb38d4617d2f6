"""Shared fixtures: a tiny document-level EN->FR corpus, binarized with fairseq-preprocess."""
from pathlib import Path

import pytest

from tests.helpers import preprocess, train, write_corpus


@pytest.fixture(scope="session")
def raw_corpus(tmp_path_factory) -> Path:
    raw = tmp_path_factory.mktemp("raw")
    write_corpus(raw)
    return raw


@pytest.fixture(scope="session")
def data_bin(tmp_path_factory, raw_corpus) -> Path:
    return preprocess(raw_corpus, tmp_path_factory.mktemp("data-bin"))


@pytest.fixture(scope="session")
def dynamic_model(data_bin, tmp_path_factory) -> Path:
    """A tiny model with 2 source and 2 target context sentences, trained with dynamic context
    size (so it also works without context): CXMI and contrastive scoring use it."""
    save = tmp_path_factory.mktemp("dynamic_ckpt")
    train(data_bin, save, "-s", "en", "-t", "fr", "--source-context-size", "2", "--target-context-size", "2",
          "--sample-context-size", "--seed", "2", epochs=3)
    return save / "checkpoint_last.pt"
