"""What ``contextual-mt pipeline table`` gathers and where it writes: ``TableOptions``, validated
when built, and the constants every part of the table shares."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

from commandkit.options import option
from contextual_mt.errors import Code, InputError, check_number

BASELINE = "sentence"  # the sentence-level system every other system is compared with
OUTPUT_FILES = ("table.md", "table.csv", "table.json", "table.png")
NO_TAG = "no tag"  # muda eval's count of untagged words: not a phenomenon
_LANG_CODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


@dataclass
class TableOptions:
    """The languages to gather (``LANGS``), where their results are, where to write the table,
    and the significance level. Validated when built, before any file is read."""

    langs: Sequence[str] = option(nargs="+", required=True, help="target languages, e.g. --langs de fr ja")
    results_dir: str = option(
        default="results", help="where RESULTS/xx/muda/eval.json and RESULTS/xx/scores.json are (default: results)"
    )
    output_dir: Optional[str] = option(
        help="where table.md, table.csv, table.json and table.png go (default: RESULTS_DIR/table, i.e. results/table)"
    )
    # a p-value below this, with a better value, is marked
    alpha: float = option(default=0.05, help="significance level (default: 0.05)")

    def __post_init__(self) -> None:
        self.langs = _language_list(self.langs)
        if not isinstance(self.results_dir, str) or not self.results_dir:
            raise InputError(f"--results-dir: give a directory (got {self.results_dir!r})", code=Code.OPTION_VALUE)
        if self.output_dir is None:
            self.output_dir = os.path.join(self.results_dir, "table")
        if not isinstance(self.output_dir, str) or not self.output_dir:
            raise InputError(f"--output-dir: give a directory (got {self.output_dir!r})", code=Code.OPTION_VALUE)
        check_number("--alpha", self.alpha, minimum=0, maximum=1)
        if self.alpha == 0:
            raise InputError("--alpha must be > 0 (got 0: no difference could be significant)", code=Code.OPTION_VALUE)

    def eval_path(self, lang: str) -> str:
        return os.path.join(self.results_dir, lang, "muda", "eval.json")

    def scores_path(self, lang: str) -> str:
        return os.path.join(self.results_dir, lang, "scores.json")

    @property
    def table_dir(self) -> str:
        """--output-dir (RESULTS_DIR/table when not given: set when built)."""
        return os.path.join(self.results_dir, "table") if self.output_dir is None else self.output_dir

    def output_path(self, name: str) -> str:
        return os.path.join(self.table_dir, name)


def _language_list(langs: Any) -> List[str]:
    """LANGS as a list of codes: a list, or one string of codes separated by spaces or commas
    (``--langs "de fr"`` quoted). Empty lists and repeated codes are errors."""
    if isinstance(langs, str):
        langs = [langs]
    if not isinstance(langs, (list, tuple)) or not all(isinstance(x, str) for x in langs):
        raise InputError(f"--langs: give a list of target language codes (got {langs!r})", code=Code.OPTION_MISSING)
    codes = [code for item in langs for code in re.split(r"[\s,]+", item) if code]
    if not codes:
        raise InputError(
            '--langs: no target language given; list the pairs to gather, e.g. make table LANGS="de fr ja"',
            code=Code.OPTION_MISSING,
        )
    seen = set()
    for code in codes:
        if not _LANG_CODE.match(code):
            raise InputError(
                f"--langs: {code!r} is not a language code (it names the directory RESULTS_DIR/{code})",
                code=Code.OPTION_VALUE,
            )
        if code in seen:
            raise InputError(f"--langs: language {code!r} given twice ({' '.join(codes)})", code=Code.OPTION_VALUE)
        seen.add(code)
    return codes
