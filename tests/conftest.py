"""Shared fixtures of the whole run: a tiny document-level EN->FR corpus, binarized with
fairseq-preprocess, and the synthetic demo corpora."""

import os
from pathlib import Path

import pytest

from contextual_mt.demo.corpus import generate_demo_data
from tests.helpers import preprocess, write_corpus
from tests.run_once import build_once, shared_root
from tests.zoo import Zoo


def pytest_configure(config):
    """Under pytest-xdist, the cores are shared out among the workers (torch and the fairseq
    processes they start would otherwise each use all of them)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        threads = str(max(1, (os.cpu_count() or 1) // workers))
        os.environ.setdefault("OMP_NUM_THREADS", threads)
        os.environ.setdefault("MKL_NUM_THREADS", threads)
        import torch

        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


# the test files that take longest (bench/RESULTS.md, "Test suite"), longest first: pytest-xdist
# (make test: --dist loadfile --no-loadscope-reorder) hands files to the workers in collection
# order, so these start at once and the short files fill the gaps; alone, order changes nothing
LONGEST_FIRST = (
    "tests/recipes/test_slurm_cluster.py",
    "tests/contextual_mt/inference/test_translate.py",
    "tests/contextual_mt/pipeline/test_chain.py",
    "tests/test_bad_input_matrix.py",
    "tests/contextual_mt/test_end_to_end.py",
    "tests/recipes/test_slurm.py",
    "tests/contextual_mt/models/test_cadec.py",
    "tests/contextual_mt/analysis/test_cxmi.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: the rest as collected


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
            generate_demo_data(
                str(made[key]), train_docs=train_docs, valid_docs=valid_docs, test_docs=test_docs, seed=seed
            )
        return made[key]

    return folder


@pytest.fixture(scope="session")
def raw_corpus(tmp_path_factory) -> Path:
    def build(folder: Path) -> Path:
        write_corpus(folder)
        return folder

    return build_once(tmp_path_factory, "raw", build)


@pytest.fixture(scope="session")
def data_bin(tmp_path_factory, raw_corpus) -> Path:
    return build_once(tmp_path_factory, "data-bin", lambda folder: preprocess(raw_corpus, folder))


@pytest.fixture(scope="session")
def zoo(data_bin, tmp_path_factory) -> Zoo:
    """The tiny models the tests share (tests/zoo.py), each trained once per run on first use
    (by whichever xdist worker asks first)."""
    root = shared_root(tmp_path_factory) / "shared-zoo"
    root.mkdir(exist_ok=True)
    return Zoo(data_bin, root)


@pytest.fixture(scope="session")
def dynamic_model(zoo) -> Path:
    """A tiny model with 2 source and 2 target context sentences, trained with dynamic context
    size (so it also works without context): CXMI and contrastive scoring use it."""
    return zoo.checkpoint("dynamic")


# tiny Hugging Face models built offline (random weights, real tokenizers), once per session:
# the HF backend's and the attribution tests'
@pytest.fixture(scope="session")
def marian(tmp_path_factory) -> Path:
    from tests.hf_models import build_marian

    return build_marian(tmp_path_factory.mktemp("hf") / "marian")


@pytest.fixture(scope="session")
def gpt2(tmp_path_factory) -> Path:
    from tests.hf_models import build_gpt2

    return build_gpt2(tmp_path_factory.mktemp("hf") / "gpt2")


@pytest.fixture(scope="session")
def m2m(tmp_path_factory) -> Path:
    from tests.hf_models import build_m2m100

    return build_m2m100(tmp_path_factory.mktemp("hf") / "m2m")


@pytest.fixture(scope="session")
def comet_model(tmp_path_factory) -> Path:
    """A tiny COMET model folder (hparams.yaml, checkpoints/model.ckpt, its encoder) built offline
    with unbabel-comet's own classes (tests/hf_models.py, build_comet)."""
    from tests.hf_models import build_comet

    return build_comet(tmp_path_factory.mktemp("comet") / "tiny-comet")
