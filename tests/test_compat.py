"""One test per fix in contextual_mt_compat."""

import argparse
import dataclasses
import subprocess
import sys
import sysconfig
import types
from pathlib import Path

import numpy as np
import pytest
import torch

import contextual_mt_compat


def _make_class(module: str):
    @dataclasses.dataclass
    class Inner:
        x: int = 1

    ns = {"__module__": module, "__annotations__": {"inner": Inner}, "inner": Inner()}
    return types.new_class("Outer", (), {}, lambda d: d.update(ns))


def test_dataclass_instance_default_allowed_for_fairseq_only():
    contextual_mt_compat.activate()
    outer = dataclasses.dataclass(_make_class("fairseq.dataclass.example"))
    assert outer().inner.x == 1
    assert dataclasses.fields(outer)[0].default.x == 1  # hydra_init reads Field.default
    with pytest.raises(ValueError, match="mutable default"):
        dataclasses.dataclass(_make_class("someone_else"))  # the fix is targeted


def test_fairseq_console_scripts_start():
    # The start-up hook must be active before fairseq is imported by its own scripts.
    pth = Path(sysconfig.get_paths()["purelib"]) / contextual_mt_compat.PTH_NAME
    assert pth.read_text() == contextual_mt_compat.PTH_LINE
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "fairseq-train"), "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "--user-dir" in proc.stdout


def test_fairseq_checkpoint_with_namespace_loads(tmp_path):
    import fairseq  # noqa: F401  (the fix is applied when fairseq is imported)

    path = tmp_path / "ckpt.pt"
    torch.save({"args": argparse.Namespace(arch="transformer"), "model": {}}, path)
    # torch.load as called from inside fairseq (a full checkpoint round trip through
    # fairseq-train and fairseq-generate is in test_end_to_end.py)
    scope = {"__name__": "fairseq.checkpoint_utils", "torch": torch, "path": path}
    exec("state = torch.load(path, map_location='cpu')", scope)
    assert scope["state"]["args"].arch == "transformer"
    # Other callers keep PyTorch's safe default.
    with pytest.raises(Exception, match="weights_only"):
        torch.load(path)


def test_encoder_fastpath_disabled_and_eval_forward_with_padding():
    from fairseq.data import Dictionary
    from fairseq.models.transformer import TransformerConfig, TransformerEncoderBase

    d = Dictionary()
    for i in range(20):
        d.add_symbol(str(i))
    cfg = TransformerConfig()
    cfg.encoder.embed_dim, cfg.encoder.ffn_embed_dim, cfg.encoder.layers = 16, 32, 2
    cfg.encoder.attention_heads = 2
    emb = torch.nn.Embedding(len(d), 16, padding_idx=d.pad())
    enc = TransformerEncoderBase(cfg, d, emb).eval()
    assert all(layer.can_use_fastpath is False for layer in enc.layers)
    tokens = torch.tensor([[d.pad(), 5, 6, d.eos()], [7, 8, 9, d.eos()]])
    with torch.no_grad():
        out = enc(tokens, src_lengths=torch.tensor([3, 4]))
    assert out["encoder_out"][0].shape == (4, 2, 16)
    assert torch.isfinite(out["encoder_out"][0][1:]).all()


def test_numpy_aliases_restored_for_fairseq_code_paths():
    from fairseq.data.data_utils import compute_mask_indices

    assert np.float is float and np.int is int
    np.random.seed(0)
    # no_overlap=True is the branch that calls np.fromiter(..., np.int)
    mask = compute_mask_indices((2, 40), None, 0.3, 4, no_overlap=True, min_space=1)
    assert mask.shape == (2, 40) and mask.any()


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


REGISTERED = (
    "from fairseq.tasks import TASK_REGISTRY; from fairseq.models import ARCH_MODEL_REGISTRY; "
    "from fairseq.registry import REGISTRIES; "
    "print('document_translation' in TASK_REGISTRY, 'cadec_translation' in TASK_REGISTRY, "
    "'contextual_transformer' in ARCH_MODEL_REGISTRY, 'muda' in REGISTRIES['scoring']['registry'])"
)


@pytest.mark.parametrize(
    "first",
    [
        "import fairseq; import contextual_mt",  # fairseq-train --user-dir contextual_mt
        "import contextual_mt; import fairseq",  # the package, then a command that loads a model
        # fairseq first imported by a module the registrations import themselves, halfway through it
        "from contextual_mt.backends.fairseq.data.context_dataset import ContextDataset",
        "from contextual_mt.backends.fairseq.models.contextual_transformer import ContextualTransformerModel",
    ],
)
def test_plugins_registered_whenever_fairseq_is_imported(first):
    proc = _python(f"{first}; {REGISTERED}")
    assert proc.returncode == 0 and proc.stdout.split() == ["True"] * 4, proc.stderr[-2000:]


def test_fairseq_import_noise_dropped_and_its_other_logs_kept():
    proc = _python("import logging, fairseq.tasks; logging.getLogger('fairseq.tasks.text_to_speech').warning('kept')")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "tensorboardX" not in proc.stderr and "kept" in proc.stderr
