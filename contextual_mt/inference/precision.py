"""``--dtype`` of a fairseq checkpoint at inference: the floating-point type its weights are cast
to once, at load (fairseq's own ``--fp16`` at generation is ``model.half()``). Log-softmax is
taken in float32 (fairseq's ``get_normalized_probs`` does, whatever the logits' type), so beam
scores, P-CXMI and contrastive losses are float32 numbers computed from half-precision logits.

``auto`` is float32 on every device. On an H200 a transformer-small checkpoint translated and
scored at 0.47-0.89x float32's speed in float16 and 0.45-0.76x in bfloat16 (bench/RESULTS.md,
"GPU figures in one run"), and on a CPU without half-precision arithmetic at 0.2-0.4x: half
precision is there when asked for (a larger model or batch may gain from it; not measured).
Both give the float32 translations and P-CXMI within a few hundredths of a nat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from commandkit.errors import shown
from contextual_mt.errors import Code, ContextualMTError

if TYPE_CHECKING:
    import torch

DTYPES = ("auto", "float32", "bfloat16", "float16")
HALF = ("bfloat16", "float16")


def check_dtype(value: object, flag: str = "--dtype") -> str:
    """The value itself, or one line naming the choices (without importing torch)."""
    if value not in DTYPES:
        raise ContextualMTError(
            f"{shown(flag)} must be one of {', '.join(DTYPES)} (got {value!r})", code=Code.OPTION_VALUE
        )
    return value


def cuda_in_use(cpu: bool) -> bool:
    """Whether the model goes on a GPU: the loader's own rule (``checkpoint.DocumentModel.load``)."""
    import torch

    return not cpu and torch.cuda.is_available()


def resolve_dtype(requested: str, cpu: bool = False, flag: str = "--dtype") -> str:
    """The dtype a model is run in: ``requested``, ``auto`` being float32. bfloat16 on a GPU
    without it (compute capability < 8.0) is refused."""
    check_dtype(requested, flag)
    if requested in ("float32", "auto"):
        return "float32"  # auto: measured faster than float16 on a GPU too (module docstring)
    import torch

    cuda = cuda_in_use(cpu)
    major = torch.cuda.get_device_capability()[0] if cuda else 0  # 0: not asked (no CUDA)
    if requested == "bfloat16" and cuda and major < 8:
        raise ContextualMTError(
            f"{flag} bfloat16: this GPU ({torch.cuda.get_device_name()}, compute capability "
            f"{major}.x) has no bfloat16; give float16 or float32"
        )
    return requested


def torch_dtype(name: str) -> torch.dtype:
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def check_finite_scores(scores: torch.Tensor, dtype: str, what: str) -> None:
    """A half-precision model whose activations overflow gives NaN log-probabilities: say so in
    one line rather than write NaN scores or pick tokens at random."""
    import torch

    if dtype != "float32" and bool(torch.isnan(scores).any()):
        raise ContextualMTError(
            f"{what}: the model in {dtype} gave NaN log-probabilities (its activations overflow "
            f"{dtype}'s range); run it with {shown('--dtype')} float32"
        )
