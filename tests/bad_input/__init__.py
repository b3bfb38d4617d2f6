"""The cases of the bad-input matrix (tests/test_bad_input_matrix.py), one module per command
(the cases that cross commands in ``rules`` and ``late``); ``core``: what a case is made of. Each
module adds its cases to ``CASES`` when imported, in the order of ``MODULES``."""

import importlib

from tests.bad_input.core import CASES, Case, Ctx, write_big_input

MODULES = (
    "translate",
    "score",
    "cxmi",
    "attribute",
    "contrastive",
    "merge",
    "report",
    "add_symbols",
    "muda_tag",
    "muda_eval",
    "fairseq",
    "rules",
    "download",
    "late",
    "testset",
    "align",
    "counterfactual",
)
for _module in MODULES:
    importlib.import_module(f"tests.bad_input.{_module}")

from tests.bad_input.contrastive import voita_set  # noqa: E402  (after its module, in order)

__all__ = ["CASES", "Case", "Ctx", "voita_set", "write_big_input"]
