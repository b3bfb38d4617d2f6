"""Where each stage of the per-language-pair study reads and writes (``make ... LANG=xx``).

``ROOT/data/xx`` (text, sentencepiece, ``bin/``), ``ROOT/checkpoints/xx/{sentence,context}``,
``ROOT/results/xx`` (translations, scores, P-CXMI, MuDA). Source is always English.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict

from contextual_mt.errors import ContextualMTError
from contextual_mt.stage_record import read_record

SOURCE_LANG = "en"
MODELS = ("sentence", "context")
# system name -> (model, target context): the model's own translations or the references
SYSTEMS = {"sentence": ("sentence", "predicted"), "context": ("context", "predicted"),
           "context-gold": ("context", "gold")}
_LANG = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})?$")


def check_lang(lang: str) -> str:
    """A target language code as TED spells it (``fr``, ``pt-br``, ``zh-cn``)."""
    if not isinstance(lang, str) or not _LANG.match(lang):
        raise ContextualMTError(f"--lang {lang!r}: expected a language code such as fr, de, pt-br or zh-cn")
    if lang == SOURCE_LANG:
        raise ContextualMTError("--lang en: the source is English; give the target language")
    return lang


@dataclass(frozen=True)
class PairLayout:
    lang: str
    root: str = "."

    def __post_init__(self) -> None:
        check_lang(self.lang)

    @property
    def data(self) -> str:
        return os.path.join(self.root, "data", self.lang)

    @property
    def bin(self) -> str:
        return os.path.join(self.data, "bin")

    @property
    def spm(self) -> str:
        return os.path.join(self.data, "spm.model")

    @property
    def data_summary(self) -> str:
        return os.path.join(self.data, "summary.json")

    def text(self, split: str, side: str) -> str:
        """``side``: 'en', the target language, or 'docids'."""
        return os.path.join(self.data, f"{split}.{side}")

    def checkpoints(self, model: str) -> str:
        return os.path.join(self.root, "checkpoints", self.lang, model)

    def checkpoint(self, model: str) -> str:
        return os.path.join(self.checkpoints(model), "checkpoint_best.pt")

    @property
    def results(self) -> str:
        return os.path.join(self.root, "results", self.lang)

    def translation(self, system: str) -> str:
        return os.path.join(self.results, f"{system}.test.{self.lang}")

    @property
    def scores(self) -> str:
        return os.path.join(self.results, "scores.json")


def require_data(layout: PairLayout) -> Dict:
    """The data stage's summary; a missing one says which command makes it."""
    summary = read_record(layout.data_summary)
    if summary is None or not os.path.exists(os.path.join(layout.bin, f"dict.{layout.lang}.txt")):
        raise ContextualMTError(f"{layout.data_summary}: not found; prepare the data first "
                                f"('make data LANG={layout.lang} TED=...|IWSLT=...|TEXT=...')")
    return summary
