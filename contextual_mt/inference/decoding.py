"""Decoding options shared by the fairseq and the Hugging Face translators."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Tuple

from commandkit.errors import check_number, shown
from commandkit.options import option
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.batching import MAX_TOKENS_HELP, check_batching

MAX_BEAM = 1000
DECODINGS = ("auto", "parallel", "sequential")
# translate --unit: a generation per sentence (the default), or per document / chunk (inference.document_unit)
UNITS = ("sentence", "document")
# --batch-size / --max-tokens when not given. On a GPU, parallel rounds need wide batches: on an
# H200 a transformer-small's predicted-context decoding ran at 1.03x the waves with 64 sentences
# per batch and 2.17x with 512 (window 32; bench/RESULTS.md, "GPU figures in one run"); the
# token cap keeps long sentences with context from filling the GPU
BATCH_SIZE = 32
GPU_BATCH_SIZE = 512
GPU_MAX_TOKENS = 16384


DECODING_HELP = (
    "with predicted target context: 'sequential' (waves: the t-th sentence of every document at once), "
    "'parallel' (rounds of up to --parallel-window sentences per document, re-translating those whose "
    "context changed; the same output), 'auto' (parallel on a GPU, sequential on CPU)"
)


def beam_option(help: Optional[str] = None) -> Any:
    """``--beam``: DecodingOptions' field, and the same option where a command shows only it."""
    return option(default=5, help=help)


def lenpen_option() -> Any:
    return option(default=1.0)


@dataclass
class DecodingOptions:
    """How translations are decoded (``contextual-mt translate``'s decoding options)."""

    beam: int = beam_option()
    lenpen: float = lenpen_option()
    max_len_a: float = option(default=0.0)  # max length = a * source length + b, for the current sentence
    max_len_b: int = option(default=200)
    batch_size: Optional[int] = option(
        help="sentences decoded together (default: 32; a fairseq checkpoint on a GPU: 512, at most "
        "16,384 tokens with context, unless --max-tokens is given)",
    )  # None: see batching()
    max_tokens: Optional[int] = option(help=MAX_TOKENS_HELP)  # or: source tokens (with context) per batch
    incremental: bool = True  # False: recompute the decoder at every step (benchmarking only)
    free_batching: bool = True  # False: waves even where no sentence waits for another (benchmarking only)
    # predicted target context: "sequential" decodes in waves (the t-th sentence of every document
    # at once); "parallel" in rounds of up to ``window`` sentences per document, re-translating
    # those whose context changed (inference.waves.translate_in_rounds: the same output); "auto":
    # parallel on a GPU, sequential on CPU (bench/RESULTS.md, "Parallel predicted-context decoding")
    decoding: str = option(default="auto", help=DECODING_HELP)
    # measured on a GPU against 2 and 8 (bench/RESULTS.md, "GPU figures in one run")
    window: int = option(
        "--parallel-window",
        dest="parallel_window",
        default=32,
        help="sentences per document a parallel round may translate",
    )

    def __post_init__(self) -> None:
        # fairseq would fail deep inside the search (beam 0) or silently change the output
        # (a NaN length penalty); say which option is wrong before any model is loaded
        # wider than MAX_BEAM is a typo: the search would ask for terabytes before failing
        check_number("--beam", self.beam, minimum=1, maximum=MAX_BEAM, integer=True)
        check_number("--lenpen", self.lenpen)
        check_number("--max-len-a", self.max_len_a, minimum=0)
        check_number("--max-len-b", self.max_len_b, minimum=1, integer=True)
        check_batching(BATCH_SIZE if self.batch_size is None else self.batch_size, self.max_tokens)
        if self.decoding not in DECODINGS:
            raise InputError(
                f"{shown('--decoding')} {self.decoding}: expected one of {', '.join(DECODINGS)}",
                code=Code.OPTION_VALUE,
            )
        check_number("--parallel-window", self.window, minimum=1, integer=True)

    def batching(self, wide: bool) -> Tuple[int, Optional[int]]:
        """(sentences, tokens) per batch: as given; by default 32 sentences, or with ``wide`` (a
        fairseq model on a GPU) 512 sentences of at most 16,384 tokens with their context. The
        Hugging Face translator never asks for wide batches: a large model's beams at 512
        sentences would not fit, and that was not measured."""
        if self.batch_size is not None:
            return self.batch_size, self.max_tokens
        if wide:
            return GPU_BATCH_SIZE, self.max_tokens or GPU_MAX_TOKENS
        return BATCH_SIZE, self.max_tokens

    def parallel(self, device_type: str) -> bool:
        """Whether predicted-context decoding goes in rounds on this device."""
        return self.decoding == "parallel" or (self.decoding == "auto" and device_type == "cuda")
