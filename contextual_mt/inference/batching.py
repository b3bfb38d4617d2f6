"""The one batching rule of every batched scorer and translator (cxmi, contrastive, translate;
fairseq and Hugging Face): items of similar length together, at most ``--batch-size`` items
and at most ``--max-tokens`` padded tokens per batch. Padded tokens are the batch's rows times
its longest row, a row's length being what the model reads for it: the sentence with its
context (the longer of the encoder and decoder sides, where the backend measures both).
An item longer than ``--max-tokens`` is a batch alone; without ``--max-tokens`` only
``--batch-size`` bounds a batch."""

from __future__ import annotations

from typing import Any, Callable, Iterable, List, Optional, Sequence, TypeVar

T = TypeVar("T")

# --max-tokens when not given, declared once: no limit beyond --batch-size, except where a backend needs one
HF_SCORING_MAX_TOKENS = {"cpu": 1024, "gpu": 8192}  # CPU: small batches stay in cache (1024 measured fastest
# on opus-mt size); GPU: fill it
FAIRSEQ_ATTRIBUTION_MAX_TOKENS = 4096  # padded tokens per forward and backward pass of a fairseq checkpoint

MAX_TOKENS_HELP = (
    "padded tokens per batch: rows times the longest row, a row being a sentence with its context "
    f"(default: no limit beyond --batch-size; --hf-model scoring: {HF_SCORING_MAX_TOKENS['cpu']} on "
    f"CPU, {HF_SCORING_MAX_TOKENS['gpu']} on GPU)"
)


def hf_scoring_max_tokens(max_tokens: Optional[int], device_type: str) -> int:
    """--max-tokens of a Hugging Face scoring backend: as given, else its device's default."""
    return max_tokens or HF_SCORING_MAX_TOKENS["cpu" if device_type == "cpu" else "gpu"]


def check_batching(batch_size: int, max_tokens: Optional[int]) -> None:
    """--batch-size and --max-tokens, the one check of every batched command's options (before
    any model loads)."""
    from commandkit.errors import check_number

    check_number("--batch-size", batch_size, minimum=1, integer=True)
    check_number("--max-tokens", max_tokens, minimum=1, integer=True, optional=True)


def length_batches(
    todo: Sequence[int],
    length: Callable[[int], int],
    batch_size: int,
    max_tokens: Optional[int] = None,
    key: Optional[Callable[[int], Any]] = None,  # a sort key: comparable
    order: Optional[Callable[[int], Any]] = None,
) -> List[List[int]]:
    """``todo`` sorted by length (then ``key``, then index; or by ``order``), cut into batches
    of at most ``batch_size`` items and ``max_tokens`` padded tokens (a longer item is a batch
    alone)."""
    if order is None:
        order = (lambda i: (length(i), key(i), i)) if key else (lambda i: (length(i), i))
    out: List[List[int]] = []
    current: List[int] = []
    longest = 0
    for i in sorted(todo, key=order):
        n = length(i)
        if current and (
            len(current) >= batch_size or (max_tokens and max(longest, n) * (len(current) + 1) > max_tokens)
        ):
            out.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, n)
    if current:
        out.append(current)
    return out


def filled(slots: Sequence[Optional[T]], which: Optional[Iterable[int]] = None) -> List[T]:
    """The values of ``slots`` (those at ``which``: all by default), each filled by now: by its
    batch, or as a sentence's context before the sentence is decoded."""
    out: List[T] = []
    for k in range(len(slots)) if which is None else which:
        value = slots[k]
        if value is None:
            raise ValueError(f"item {k} was not computed")
        out.append(value)
    return out
