"""Which models a ``muda tag`` run needs, and which of them this machine lacks, found without
loading any: stanza's resources.json and model files are looked up where stanza will look
(``--stanza-dir``), the aligner in its folder or the Hugging Face cache. ``muda tag`` (and the
pipeline's muda-eval stage) call ``check_models`` before anything loads, so that a run with
several models missing fails once, listing them all, instead of once per model; ``muda eval``
checks ``eval_required_models`` the same way."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from commandkit.errors import Code, InputError

DEFAULT_ALIGN_MODEL = "bert-base-multilingual-cased"
# what ModelAnnotators loads: the English side is parsed (with coreference), the target only needs
# morphology (the target rules read UPOS, FEATS and LEMMA)
SOURCE_PROCESSORS = "tokenize,pos,lemma,depparse,coref"
TARGET_PROCESSORS = "tokenize,pos,lemma"
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


@dataclass(frozen=True)
class RequiredModel:
    kind: str  # "stanza" or "aligner"
    name: str  # stanza: the language code; aligner: a Hugging Face name or a folder
    processors: str = ""  # stanza only
    where: str = ""  # the folder it is looked for in
    present: bool = False

    @property
    def label(self) -> str:
        return f"stanza {self.name} ({self.processors})" if self.kind == "stanza" else f"aligner {self.name}"

    @property
    def downloadable(self) -> bool:
        """A folder given as the aligner cannot be downloaded: only hub names can."""
        return self.kind == "stanza" or not _is_path(self.name)


def default_stanza_dir() -> str:
    """Where muda's stanza pipelines look when no --stanza-dir is given."""
    return os.environ.get("STANZA_RESOURCES_DIR", os.path.join(os.path.expanduser("~"), "stanza_resources"))


def _is_path(model: str) -> bool:
    """A model given as a folder (not a hub name): nothing to download it from."""
    return os.path.isabs(model) or model.startswith(".") or os.path.isdir(model)


def required_models(
    tgt_lang: str,
    phenomena: Optional[Sequence[str]] = None,
    *,
    src_conllu: Optional[str] = None,
    tgt_conllu: Optional[str] = None,
    alignments: Optional[str] = None,
    stanza_dir: Optional[str] = None,
    align_model: str = DEFAULT_ALIGN_MODEL,
    lexicon: bool = False,
) -> List[RequiredModel]:
    """Every model a ``muda tag`` of English -> ``tgt_lang`` loads, given what is pre-computed.
    The phenomena are checked but do not shorten the list: every phenomenon reads the aligned pair,
    and the tagger annotates the source, the target and their alignment for any of them."""
    from muda.languages import get_language
    from muda.phenomena import check_phenomena

    code = get_language(tgt_lang).code  # TED variants (pt-br, zh-cn) -> the language stanza knows
    check_phenomena(phenomena)
    if lexicon:  # lookup in an annotated corpus: no model at all
        return []
    folder = stanza_dir or default_stanza_dir()
    needed: List[RequiredModel] = []
    if not src_conllu:
        needed.append(_stanza("en", SOURCE_PROCESSORS, folder))
    if not tgt_conllu:
        needed.append(_stanza(code, TARGET_PROCESSORS, folder))
    if not alignments:
        needed.append(_aligner(align_model))
    return needed


def eval_required_models(
    tgt_lang: str,
    *,
    tag_reference: bool,
    src_conllu: Optional[str] = None,
    ref_conllu: Optional[str] = None,
    ref_alignments: Optional[str] = None,
    source_from_reference: bool = False,
    hyp_conllu: Optional[Sequence[str]] = None,
    hyp_alignments: Optional[Sequence[str]] = None,
    stanza_dir: Optional[str] = None,
    align_model: str = DEFAULT_ALIGN_MODEL,
    lexicon: bool = False,
) -> List[RequiredModel]:
    """Every model a ``muda eval`` loads: the reference's tagging when its tags are not given
    (``tag_reference``), then every hypothesis's, whose English side is the reference's (the
    CoNLL-U beside its tags: ``source_from_reference`` for given tags that have one) or
    --src-conllu. ``lexicon``: lookup for all of it, no model."""
    common: Dict[str, Any] = {"stanza_dir": stanza_dir, "align_model": align_model, "lexicon": lexicon}
    needed: Dict[str, RequiredModel] = {}
    if tag_reference:
        for m in required_models(
            tgt_lang, src_conllu=src_conllu, tgt_conllu=ref_conllu, alignments=ref_alignments, **common
        ):
            needed.setdefault(m.label, m)
    source_given = src_conllu or ("the reference's" if tag_reference or source_from_reference else None)
    for m in required_models(
        tgt_lang,
        src_conllu=source_given,
        tgt_conllu="given" if hyp_conllu else None,
        alignments="given" if hyp_alignments else None,
        **common,
    ):
        needed.setdefault(m.label, m)
    return list(needed.values())


def missing_models(models: Sequence[RequiredModel]) -> List[RequiredModel]:
    return [m for m in models if not m.present]


# ------------------------------------------------------------------------------------ stanza
def _stanza(lang: str, processors: str, folder: str) -> RequiredModel:
    return RequiredModel("stanza", lang, processors, folder, not stanza_files_missing(lang, processors, folder))


def _resources(folder: str) -> Optional[Dict]:
    path = os.path.join(folder, "resources.json")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):  # absent or broken: stanza could not start from it either
        return None
    return data if isinstance(data, dict) else None


def stanza_files_missing(lang: str, processors: str, folder: str) -> List[str]:
    """The model files (relative to ``folder``) a stanza pipeline of ``lang`` with ``processors``
    would load and that are not there; ["resources.json"] without it; [lang] for a language its
    resources.json does not know. Follows what stanza does: the language's aliases, the default
    package of each processor, mwt with tokenize where the language has one, and each model's
    dependencies (pretrained embeddings, character LMs)."""
    resources = _resources(folder)
    if resources is None:
        return ["resources.json"]
    entry = resources.get(lang)
    seen = set()
    while isinstance(entry, dict) and "alias" in entry and entry["alias"] not in seen:
        seen.add(lang)
        lang = entry["alias"]
        entry = resources.get(lang)
    if not isinstance(entry, dict):
        return [lang]
    defaults = (entry.get("packages") or {}).get("default") or entry.get("default_processors") or {}
    wanted = processors.split(",")
    if "tokenize" in wanted and "mwt" in defaults and "mwt" not in wanted:
        wanted.append("mwt")
    files: List[Tuple[str, str]] = []
    for proc in wanted:
        package = defaults.get(proc)
        if not isinstance(package, str):  # no default model for it: the pipeline cannot be built
            files.append((proc, "default"))
            continue
        files.append((proc, package))
        for dep in ((entry.get(proc) or {}).get(package) or {}).get("dependencies") or []:
            if isinstance(dep, dict) and "model" in dep and "package" in dep:
                files.append((dep["model"], dep["package"]))
    rel = [os.path.join(lang, proc, f"{package}.pt") for proc, package in dict.fromkeys(files)]
    return [r for r in rel if not os.path.isfile(os.path.join(folder, r))]


# ------------------------------------------------------------------------------------ aligner
def _aligner(model: str) -> RequiredModel:
    if os.path.isdir(model):
        return RequiredModel("aligner", model, where=model, present=_has_weights(model))
    if _is_path(model):  # a folder that is not there
        return RequiredModel("aligner", model, where=model, present=False)
    return RequiredModel("aligner", model, where=hf_cache_dir(), present=in_hf_cache(model))


def _has_weights(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "config.json")) and any(
        os.path.isfile(os.path.join(folder, w)) for w in WEIGHT_FILES
    )


def hf_cache_dir() -> str:
    """The Hugging Face hub cache transformers reads (HF_HUB_CACHE, HF_HOME, or the default)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return os.path.join(home, "hub")


def in_hf_cache(name: str, cache_dir: Optional[str] = None) -> bool:
    """Whether a hub model's config and weights are in the cache (a snapshot holding both), read
    from the cache's folders: nothing is loaded and the network is not asked."""
    snapshots = os.path.join(cache_dir or hf_cache_dir(), "models--" + name.replace("/", "--"), "snapshots")
    try:
        revisions = os.listdir(snapshots)
    except OSError:
        return False
    return any(_has_weights(os.path.join(snapshots, r)) for r in revisions)


# ------------------------------------------------------------------------------------ the error
def download_command(
    missing: Sequence[RequiredModel],
    tgt_lang: str,
    stanza_dir: Optional[str] = None,
    align_model: str = DEFAULT_ALIGN_MODEL,
) -> str:
    """The one ``muda download`` command line that gets the ``missing`` models (and no other)."""
    kinds = {_part(m) for m in missing}
    parts = ["muda download", f"--tgt-lang {tgt_lang}"]
    parts += [f"--no-{part}" for part in ("source", "target", "aligner") if part not in kinds]
    if stanza_dir and kinds & {"source", "target"}:
        parts.append(f"--stanza-dir {stanza_dir}")
    if align_model != DEFAULT_ALIGN_MODEL and "aligner" in kinds:
        parts.append(f"--align-model {align_model}")
    return " ".join(parts)


def _part(m: RequiredModel) -> str:
    """Which part of the annotation a model makes: source, target or aligner."""
    return "aligner" if m.kind == "aligner" else "source" if m.name == "en" else "target"


PRECOMPUTED_FLAGS = {"source": "--src-conllu FILE", "target": "--tgt-conllu FILE", "aligner": "--alignments FILE"}


def missing_message(
    command: str,
    missing: Sequence[RequiredModel],
    tgt_lang: str,
    stanza_dir: Optional[str] = None,
    align_model: str = DEFAULT_ALIGN_MODEL,
    precomputed_hint: Optional[str] = None,
) -> str:
    """One line: every missing model, the one command that gets them, the pre-computed way."""
    listed = ", ".join(
        m.label
        + (
            f" in {m.where}"
            if m.kind == "stanza"
            else ""
            if m.downloadable
            else " (folder not found or without config.json and weights)"
        )
        for m in missing
    )
    hint = precomputed_hint or " ".join(
        PRECOMPUTED_FLAGS[p] for p in PRECOMPUTED_FLAGS if p in {_part(m) for m in missing}
    )
    get = [m for m in missing if m.downloadable]
    how = (
        (
            f"get {'them all' if len(get) > 1 else 'it'} with "
            f"'{download_command(get, tgt_lang, stanza_dir, align_model)}'"
            " (needs network)"
        )
        if get
        else "give an existing --align-model folder"
    )
    return (
        f"{command} needs models not on this machine: {listed}; {how}, or give pre-computed annotations "
        f"instead ({hint}; docs/explanations/muda.md, 'MuDA models')"
    )


def check_models(
    command: str,
    models: Sequence[RequiredModel],
    tgt_lang: str,
    stanza_dir: Optional[str] = None,
    align_model: str = DEFAULT_ALIGN_MODEL,
    precomputed_hint: Optional[str] = None,
) -> None:
    """One InputError listing every missing model of ``models`` (nothing when all are here)."""
    missing = missing_models(models)
    if missing:
        raise InputError(
            missing_message(command, missing, tgt_lang, stanza_dir, align_model, precomputed_hint), code=Code.MODEL
        )


__all__ = [
    "DEFAULT_ALIGN_MODEL",
    "PRECOMPUTED_FLAGS",
    "SOURCE_PROCESSORS",
    "TARGET_PROCESSORS",
    "RequiredModel",
    "check_models",
    "default_stanza_dir",
    "download_command",
    "eval_required_models",
    "in_hf_cache",
    "missing_message",
    "missing_models",
    "required_models",
    "stanza_files_missing",
]
