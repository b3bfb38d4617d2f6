"""Shared fixtures: a tiny document-level EN->FR corpus, binarized with fairseq-preprocess."""
from pathlib import Path

import pytest

from tests.helpers import preprocess, write_corpus


@pytest.fixture(scope="session")
def raw_corpus(tmp_path_factory) -> Path:
    raw = tmp_path_factory.mktemp("raw")
    write_corpus(raw)
    return raw


@pytest.fixture(scope="session")
def data_bin(tmp_path_factory, raw_corpus) -> Path:
    return preprocess(raw_corpus, tmp_path_factory.mktemp("data-bin"))
