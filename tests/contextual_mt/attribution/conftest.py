"""The tiny Hugging Face models and the two-document corpus of the HF backend tests."""
from pathlib import Path

import pytest

from tests.hf_models import build_gpt2, build_m2m100, build_marian


@pytest.fixture(scope="session")
def marian(tmp_path_factory) -> Path:
    return build_marian(tmp_path_factory.mktemp("hf") / "marian")


@pytest.fixture(scope="session")
def gpt2(tmp_path_factory) -> Path:
    return build_gpt2(tmp_path_factory.mktemp("hf") / "gpt2")


@pytest.fixture(scope="session")
def m2m(tmp_path_factory) -> Path:
    return build_m2m100(tmp_path_factory.mktemp("hf") / "m2m")
