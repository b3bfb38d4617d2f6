"""Decoding options shared by the fairseq and the Hugging Face translators."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from contextual_mt.errors import ContextualMTError, check_option
from contextual_mt.inference.batching import check_batching

MAX_BEAM = 1000
DECODINGS = ("auto", "parallel", "sequential")
# translate --unit: a generation per sentence (the default), or per document / chunk (inference.document_unit)
UNITS = ("sentence", "document")


@dataclass
class DecodingOptions:
    beam: int = 5
    lenpen: float = 1.0
    max_len_a: float = 0.0  # max length = a * source length + b, for the current sentence
    max_len_b: int = 200
    batch_size: int = 32  # documents decoded together
    max_tokens: Optional[int] = None  # or: source tokens (with context) per batch
    incremental: bool = True  # False: recompute the decoder at every step (benchmarking only)
    free_batching: bool = True  # False: waves even where no sentence waits for another (benchmarking only)
    # predicted target context: "sequential" decodes in waves (the t-th sentence of every document
    # at once); "parallel" in rounds of up to ``window`` sentences per document, re-translating
    # those whose context changed (inference.waves.translate_in_rounds: the same output); "auto":
    # parallel on a GPU, sequential on CPU (bench/RESULTS.md, "Parallel predicted-context decoding")
    decoding: str = "auto"
    window: int = 8

    def __post_init__(self) -> None:
        # fairseq would fail deep inside the search (beam 0) or silently change the output
        # (a NaN length penalty); say which option is wrong before any model is loaded
        # wider than MAX_BEAM is a typo: the search would ask for terabytes before failing
        check_option("--beam", self.beam, minimum=1, maximum=MAX_BEAM, integer=True)
        check_option("--lenpen", self.lenpen)
        check_option("--max-len-a", self.max_len_a, minimum=0)
        check_option("--max-len-b", self.max_len_b, minimum=1, integer=True)
        check_batching(self.batch_size, self.max_tokens)
        if self.decoding not in DECODINGS:
            raise ContextualMTError(f"--decoding {self.decoding}: expected one of {', '.join(DECODINGS)}")
        check_option("--parallel-window", self.window, minimum=1, integer=True)

    def parallel(self, device_type: str) -> bool:
        """Whether predicted-context decoding goes in rounds on this device."""
        return self.decoding == "parallel" or (self.decoding == "auto" and device_type == "cuda")
