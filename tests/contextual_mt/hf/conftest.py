"""Tiny Hugging Face models built offline (random weights, real tokenizers), once per session."""
from pathlib import Path

import pytest

from tests.hf_models import CHAT, EN, FR, build_gpt2, build_m2m100, build_marian


@pytest.fixture(scope="session")
def marian(tmp_path_factory) -> Path:
    return build_marian(tmp_path_factory.mktemp("hf") / "marian")


@pytest.fixture(scope="session")
def gpt2(tmp_path_factory) -> Path:
    return build_gpt2(tmp_path_factory.mktemp("hf") / "gpt2")


@pytest.fixture(scope="session")
def gpt2_chat(tmp_path_factory) -> Path:
    return build_gpt2(tmp_path_factory.mktemp("hf") / "gpt2chat", chat_template=CHAT)


@pytest.fixture(scope="session")
def m2m(tmp_path_factory) -> Path:
    return build_m2m100(tmp_path_factory.mktemp("hf") / "m2m")


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Path:
    """Two documents of the EN/FR sentences (the second starts at line 7)."""
    d = tmp_path_factory.mktemp("hfcorpus")
    (d / "src.en").write_text("\n".join(EN) + "\n")
    (d / "ref.fr").write_text("\n".join(FR) + "\n")
    (d / "docids").write_text("\n".join(["a"] * 6 + ["b"] * 6) + "\n")
    return d
