"""The whole study on one language pair through make, run once per test run and shared by the
tests that inspect its outputs (test_chain.py) and by the stale-state tests, which work on copies
of it (test_pipeline_bad_input.py): a synthetic TED-format corpus -> make data -> make train
PRESET=tiny (both models) -> make translate -> make score -> make pcxmi -> make muda-eval ->
make table -> make contrastive, on CPU."""

import pytest

from tests.contextual_mt.pipeline.chain import build_make_chain
from tests.run_once import build_once


@pytest.fixture(scope="session")
def make_chain(tmp_path_factory):
    """The make chain, once per run (chain.py): tests read it, or work on a copy of it."""
    return build_once(tmp_path_factory, "study", build_make_chain)
