"""Where each stage of the per-language-pair study reads and writes (``make ... LANG=xx``).

``ROOT/data/xx`` (text, sentencepiece, ``bin/``), ``ROOT/checkpoints/xx/{sentence,context}``,
``ROOT/results/xx`` (translations, scores, P-CXMI, MuDA). Source is always English.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from contextual_mt.errors import Code, InputError
from contextual_mt.stage_record import read_record

SOURCE_LANG = "en"
MODELS = ("sentence", "context")
# system name -> (model, target context): the model's own translations or the references
SYSTEMS = {
    "sentence": ("sentence", "predicted"),
    "context": ("context", "predicted"),
    "context-gold": ("context", "gold"),
}
_LANG = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})?$")


def check_lang(lang: str) -> str:
    """A target language code as TED spells it (``fr``, ``pt-br``, ``zh-cn``)."""
    if not isinstance(lang, str) or not _LANG.match(lang):
        raise InputError(
            f"--lang {lang!r}: expected a language code such as fr, de, pt-br or zh-cn", code=Code.OPTION_VALUE
        )
    if lang == SOURCE_LANG:
        raise InputError("--lang en: the source is English; give the target language", code=Code.OPTION_VALUE)
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
        raise InputError(
            f"{layout.data_summary}: not found; prepare the data first "
            f"('make data LANG={layout.lang} TED=...|IWSLT=...|TEXT=...')",
            code=Code.NOT_FOUND,
        )
    return summary


DEMO = "demo"  # the pair of `make demo` (LANG unset): target fr, under the folder demo/
DEMO_LANG = "fr"
DEMO_ROOT = "demo"


def demo_corpus(root: str = DEMO_ROOT) -> str:
    """The demo corpus (text, annotations, planted tokens): the demo pair's ``TEXT=`` folder."""
    return os.path.join(root, "corpus")


@dataclass(frozen=True)
class EvalPaths:
    """What the evaluation stages (pcxmi, report, muda-eval, attribute, testset) read and write:
    the pair's layout; without LANG, the demo pair's (``make pcxmi``)."""

    pair: str  # the language code, or DEMO
    data: str
    target: str  # the target language's file extension
    checkpoint: str  # the context model
    spm: Optional[str]
    results: str
    translations: Tuple[str, ...]  # the systems compared by muda-eval (the first is the baseline)
    annotations: str  # where the user's annotation files are (the data folder; the demo's corpus)

    def test(self, side: str) -> str:
        return os.path.join(self.data, f"test.{side}")

    @property
    def muda_lang(self) -> str:
        """MuDA's language: pt for pt-br, zh for zh-cn."""
        return self.target.split("-")[0]

    def optional(self, name: str) -> Optional[str]:
        """A file the user may put beside the data (annotations): its path when it is there."""
        path = os.path.join(self.annotations, name)
        return path if os.path.isfile(path) else None


def muda_folder(p: EvalPaths) -> str:
    """muda-eval's outputs."""
    return os.path.join(p.results, "muda")


def reference_tags(p: EvalPaths) -> str:
    """The reference's MuDA tags (muda-eval writes them; the report reads them)."""
    return os.path.join(muda_folder(p), "reference.tags.json")


def testset_folder(results: str) -> str:
    """The pair's test suites (``make testset``; muda-eval evaluates the translations on them)."""
    return os.path.join(results, "testset")


def pair_layout(lang: Optional[str], root: str = ".") -> PairLayout:
    """The pair's folders; ``lang`` None: the demo pair's (``fr`` under ``demo/``, whatever ``root``)."""
    return PairLayout(DEMO_LANG, DEMO_ROOT) if lang is None or lang == DEMO else PairLayout(lang, root)


def eval_paths(lang: Optional[str], root: str = ".") -> EvalPaths:
    """``lang`` None: the demo pair (``fr`` under ``demo/``, whatever ``root``)."""
    demo = lang is None or lang == DEMO
    layout = pair_layout(lang, root)
    return EvalPaths(
        DEMO if demo else layout.lang,
        layout.data,
        layout.lang,
        layout.checkpoint("context"),
        layout.spm if os.path.isfile(layout.spm) else None,
        layout.results,
        tuple(layout.translation(s) for s in SYSTEMS),
        demo_corpus(DEMO_ROOT) if demo else layout.data,
    )


def attribution_output(results: str) -> str:
    """``make attribute``'s records in the pair's results folder (the report reads them too)."""
    return os.path.join(results, "attribution.jsonl")
