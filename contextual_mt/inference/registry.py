"""The backend registry: each kind of model specification (an options class: a fairseq
checkpoint's ``FairseqModelOptions``, a Hugging Face model's ``HFModelOptions``) has its ``ModelFamily``
(``inference.interface``), which registers itself here from its backend's folder
(``backends/fairseq``, ``backends/hf``) with ``@register_family(OptionsClass)``, as fairseq's
``register_task`` does. Runners ask ``family(spec)`` to open the model's scorer, translator or
attribution backend, fingerprint it and name it in summaries, and never branch on the kind
themselves. A backend registers when its package is imported, which building its options
object does. Nothing here loads a model until asked to open one."""

from __future__ import annotations

from typing import Callable, Dict, Optional

from contextual_mt.inference.interface import CorpusScorer, ModelFamily, ModelSpec, PairScorer

FAMILIES: Dict[type, ModelFamily] = {}


def register_family(options_class: type) -> Callable[[type], type]:
    """Class decorator: the ``ModelFamily`` of the specifications of ``options_class``."""

    def register(family_class: type) -> type:
        if options_class in FAMILIES:
            raise ValueError(f"a backend is already registered for {options_class.__name__}")
        FAMILIES[options_class] = family_class()
        return family_class

    return register


def family(spec: ModelSpec) -> ModelFamily:
    """The family of a model specification: what opens, fingerprints and names it."""
    for kind in type(spec).__mro__:  # a subclass of an option class is of its family
        if kind in FAMILIES:
            return FAMILIES[kind]
    raise TypeError(f"not a model specification: {type(spec).__name__}")


def model_name(spec: ModelSpec) -> str:
    return spec.path


def open_corpus_scorer(spec: ModelSpec, max_tokens: Optional[int] = None) -> CorpusScorer:
    """The model as a ``CorpusScorer`` (CXMI, P-CXMI; loaded once)."""
    return family(spec).open_corpus_scorer(spec, max_tokens)


def open_pair_scorer(spec: ModelSpec, max_tokens: Optional[int] = None) -> PairScorer:
    """The model as a ``PairScorer`` (contrastive sets, link scores; loaded once)."""
    return family(spec).open_pair_scorer(spec, max_tokens)


def open_attribution(spec: ModelSpec, max_tokens: Optional[int] = None):
    """The ``AttributionBackend`` (``attribution.interface``) of a model (loaded once)."""
    return family(spec).open_attribution(spec, max_tokens)


def model_fingerprint(spec: ModelSpec) -> Dict:
    """What scores depend on in the model, by content, without loading it."""
    return family(spec).fingerprint(spec)


def model_summary(spec: ModelSpec) -> Dict:
    """How a summary names the model."""
    return family(spec).summary(spec)


def model_dtype(spec: ModelSpec) -> str:
    """The dtype the model runs in on this machine."""
    return family(spec).dtype(spec)


def gradient_spec(spec: ModelSpec) -> ModelSpec:
    """The specification attribution runs (and fingerprints): fairseq checkpoints in float32."""
    return family(spec).for_gradients(spec)
