"""The HF backend tests' chat-template GPT-2 and two-document corpus (the tiny models themselves are
session fixtures of tests/conftest.py, shared with the attribution tests)."""

from pathlib import Path

import pytest

from tests.hf_models import CHAT, EN, FR, build_gpt2


@pytest.fixture(scope="session")
def gpt2_chat(tmp_path_factory) -> Path:
    return build_gpt2(tmp_path_factory.mktemp("hf") / "gpt2chat", chat_template=CHAT)


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Path:
    """Two documents of the EN/FR sentences (the second starts at line 7)."""
    d = tmp_path_factory.mktemp("hfcorpus")
    (d / "src.en").write_text("\n".join(EN) + "\n")
    (d / "ref.fr").write_text("\n".join(FR) + "\n")
    (d / "docids").write_text("\n".join(["a"] * 6 + ["b"] * 6) + "\n")
    return d


@pytest.fixture(scope="session")
def hf_zoo(tmp_path_factory):
    """``hf_zoo(name)``: the folder of the zoo's tiny model of family ``name`` (tests/hf_models.py,
    ZOO, or OUTSIDE: the families outside the zoo), built on first use, once per test session."""
    from tests.hf_models import OUTSIDE, ZOO

    root = tmp_path_factory.mktemp("zoo")
    built: dict = {}

    def get(name: str) -> Path:
        if name not in built:
            from transformers.utils import logging

            logging.disable_progress_bar()  # save_pretrained's bar (transformers 5), not the command's output
            try:
                built[name] = (ZOO[name] if name in ZOO else OUTSIDE[name]).build(root / name)
            finally:
                logging.enable_progress_bar()
        return built[name]

    return get
