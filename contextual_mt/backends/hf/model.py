"""Loading a Hugging Face model for scoring and translation: a local folder or a name in the local
cache (never a download), seq2seq MT model or decoder-only LM, with its tokenizer set to the
language pair, on the GPU when there is one. Every failure is one line saying how to fix it."""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set

import torch

from commandkit.errors import first_line
from contextual_mt.backends.hf.options import HFModelOptions
from contextual_mt.backends.hf.templates import PromptTemplate, load_template
from contextual_mt.errors import Code, InputError, given

logger = logging.getLogger(__name__)

HOW_TO_GET = (
    "download it where there is network (`huggingface-cli download NAME --local-dir DIR`, or "
    "`save_pretrained(DIR)`) and give the folder"
)


def resolve_model_folder(path: str) -> str:
    """The folder holding the model's files: ``path`` itself, or its snapshot in the local
    Hugging Face cache. Nothing is downloaded."""
    if os.path.isdir(path):
        if not os.path.isfile(os.path.join(path, "config.json")):
            raise InputError(f"{path}: not a Hugging Face model folder (no config.json); {HOW_TO_GET}", code=Code.MODEL)
        return path
    if os.path.exists(path):
        raise InputError(f"{path}: is a file; --hf-model takes a model folder or a model name", code=Code.MODEL)
    try:
        from huggingface_hub import snapshot_download

        folder = snapshot_download(path, local_files_only=True)
    except Exception:  # not a valid repo id, or not in the cache
        folder = None
    if not folder or not os.path.isfile(os.path.join(folder, "config.json")):
        raise InputError(
            f"{path}: no such model folder, and not in the local Hugging Face cache "
            f"({os.environ.get('HF_HOME', '~/.cache/huggingface')}); {HOW_TO_GET}",
            code=Code.MODEL,
        )
    return folder


def model_files(folder: str) -> List[str]:
    """The files a model is made of (what a fingerprint hashes), sorted."""
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out += [os.path.join(root, f) for f in sorted(files) if not f.startswith(".")]
    return out


def model_kind(config, folder: str) -> str:
    """'seq2seq' or 'causal' from the config; anything else is refused."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
    )

    def names(mapping) -> set:
        out: Set[str] = set()
        for v in mapping.values():
            out.update(v if isinstance(v, (list, tuple)) else [v])
        return out

    seq2seq, causal = names(MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES), names(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    archs = list(getattr(config, "architectures", None) or [])
    if archs:
        if any(a in seq2seq for a in archs):
            return "seq2seq"
        if any(a in causal for a in archs):
            return "causal"
    elif config.model_type in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES and config.is_encoder_decoder:
        return "seq2seq"
    elif config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and not config.is_encoder_decoder:
        return "causal"
    what = archs[0] if archs else f"a '{config.model_type}' model"
    raise InputError(
        f"{folder}: is {what}, not a seq2seq translation model (AutoModelForSeq2SeqLM) or a "
        "decoder-only LM (AutoModelForCausalLM)",
        code=Code.MODEL,
    )


def language_token(tokenizer, code: str) -> Optional[str]:
    """The vocabulary token of a language code: 'fr_XX' (mBART-50), 'fra_Latn' (NLLB), '__fr__'
    (M2M100), '>>fra<<' (multi-target Marian); None when the tokenizer has none of them."""
    mapped = getattr(tokenizer, "lang_code_to_token", None) or {}  # M2M100: 'fr' -> '__fr__'
    unk = tokenizer.unk_token_id
    for token in (mapped.get(code), code, f"__{code}__", f">>{code}<<"):
        if token and token != tokenizer.unk_token and tokenizer.convert_tokens_to_ids(token) not in (None, unk):
            return token
    return None


def language_codes(tokenizer) -> List[str]:
    """The language codes a tokenizer knows, if it has any (for error messages and checks)."""
    codes = getattr(tokenizer, "lang_code_to_id", None) or getattr(tokenizer, "lang_code_to_token", None)
    if codes:
        return sorted(codes)
    marian = getattr(tokenizer, "supported_language_codes", None)
    if marian:
        return sorted(c[2:-2] for c in marian)
    return sorted(
        t for t in getattr(tokenizer, "additional_special_tokens", []) or [] if language_token(tokenizer, t) == t
    )


def config_positions(config) -> Optional[int]:
    """The positions a model's config allows (the fewest of its position limits); None: no limit
    in the config."""
    limits = [
        getattr(config, k)
        for k in ("max_position_embeddings", "n_positions", "max_target_positions")
        if isinstance(getattr(config, k, None), int)
    ]
    return min(limits) if limits else None


def read_config(folder: str):
    """The model's config (config.json only: no weights, no tokenizer); one line when unreadable."""
    try:
        from transformers import AutoConfig
        from transformers import logging as hf_logging
    except ImportError:
        raise InputError("--hf-model needs transformers: pip install 'transformers>=4.40'", code=Code.MODEL) from None
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()  # transformers 5's "Loading weights" bar: not on the terminal
    try:
        return AutoConfig.from_pretrained(folder, local_files_only=True)
    except Exception as e:  # unknown model_type, malformed JSON
        raise InputError(
            f"{folder}/config.json: cannot be read by transformers ({first_line(e)})", code=Code.MODEL
        ) from None


def _torch_dtype(name: str) -> torch.dtype:
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


@dataclass
class HFModel:
    """A loaded model with what the scoring backend and translation need."""

    options: HFModelOptions
    folder: str
    model: Any  # a transformers model: its heads, encoder and generate are read by name
    tokenizer: Any  # a transformers tokenizer, slow or fast
    kind: str  # seq2seq | causal
    template: Optional[PromptTemplate]  # decoder-only models
    target_language_token: Optional[str]  # forced at the start of the target (mBART-50, NLLB, M2M100)
    marian_prefix: str  # before the source: the target language of Marian (">>fra<< ") or MADLAD ("<2fr> ")

    @property
    def prompt(self) -> PromptTemplate:
        """The prompt template of a decoder-only model."""
        if self.template is None:
            raise InputError(f"{self.folder}: a {self.kind} model has no prompt template", code=Code.MODEL)
        return self.template

    @property
    def seq2seq(self) -> bool:
        return self.kind == "seq2seq"

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def attention(self):
        """The context every forward and ``generate`` of this model runs in. On CUDA, scaled
        dot-product attention without the cuDNN backend: recent torch puts it first on Hopper
        (sm90/sm100) for bfloat16/float16, and it builds an execution graph for every new
        (batch, query length, key length), tens of ms of host time each. Scoring batches and
        every step of generation have new shapes, so half precision would pay a graph build per
        call, float32 (which cuDNN attention does not take) none: the suspected cause of
        bfloat16 being slower than float32 on an H100 (bench/hf_dtype_speed.py measures both
        ways). Flash / memory-efficient kernels have no per-shape cost."""
        if self.device.type != "cuda":
            return contextlib.nullcontext()
        from torch.nn.attention import SDPBackend, sdpa_kernel

        return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])

    def end_token_ids(self) -> List[int]:
        """Every token the model declares as ending an answer: its generation config's and its
        config's EOS (Llama-3 and Qwen list several) and the tokenizer's, the tokenizer's first."""
        out: List[int] = []
        sources = (
            self.tokenizer.eos_token_id,
            getattr(self.model.generation_config, "eos_token_id", None),
            self.model.config.eos_token_id,
        )
        for value in sources:
            for t in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(t, int) and t not in out:
                    out.append(t)
        return out

    @property
    def max_positions(self) -> int:
        configured = config_positions(self.model.config)
        limits = [configured] if configured is not None else []
        n = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(n, int) and n < 1_000_000:
            limits.append(n)
        return min(limits) if limits else 1_000_000

    @classmethod
    def load(cls, options: HFModelOptions) -> HFModel:
        folder = resolve_model_folder(options.path)
        config = read_config(folder)
        from transformers import AutoTokenizer

        kind = model_kind(config, folder)
        cuda = torch.cuda.is_available() and not options.cpu
        if options.dtype == "float16" and not cuda:
            raise InputError("--dtype float16 needs a GPU (on CPU use bfloat16 or float32)", code=Code.OPTION_VALUE)
        if options.device_map and not cuda:
            raise InputError("--device-map auto needs a GPU; none is visible", code=Code.OPTION_VALUE)
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        except Exception as e:
            raise InputError(
                f"{folder}: no usable tokenizer ({first_line(e)}); the folder needs the model's "
                "tokenizer files (save_pretrained of the tokenizer)",
                code=Code.MODEL,
            ) from None
        target_token, marian_prefix, template = None, "", None
        if kind == "seq2seq":
            _check_one_vocabulary(tokenizer, folder)
            target_token, marian_prefix = _set_languages(tokenizer, options, folder)
        else:
            template = _causal_template(options, tokenizer, folder)
        kwargs: Dict = {"local_files_only": True}
        kwargs["dtype" if _has_dtype_kwarg() else "torch_dtype"] = _torch_dtype(options.dtype)
        if options.device_map:
            try:
                import accelerate  # noqa: F401  (device_map needs it)
            except ImportError:
                raise InputError(
                    "--device-map auto needs accelerate: pip install accelerate", code=Code.MODEL
                ) from None
            kwargs["device_map"] = "auto"
        from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

        auto = AutoModelForSeq2SeqLM if kind == "seq2seq" else AutoModelForCausalLM
        try:
            model = auto.from_pretrained(folder, **kwargs)
        except Exception as e:
            raise InputError(f"{folder}: cannot load the model weights ({first_line(e)})", code=Code.MODEL) from None
        if not options.device_map:
            model = model.to("cuda" if cuda else "cpu")  # type: ignore[arg-type]  # transformers' decorated .to
        model.eval()
        return cls(options, folder, model, tokenizer, kind, template, target_token, marian_prefix)


def _has_dtype_kwarg() -> bool:
    import transformers

    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    return (major, minor) >= (4, 56)  # torch_dtype was renamed dtype


def _check_one_vocabulary(tokenizer, folder: str) -> None:
    """The backend encodes target text (references, the target context) with the tokenizer, as
    ``text_target``: that needs one vocabulary, whose ids map back to the same tokens. A
    tokenizer with separate source and target vocabularies (FSMT's) encodes every text with the
    source one, so a target would be scored as the wrong tokens: refused."""
    vocab = tokenizer.get_vocab()
    tokens = list(vocab)
    back = tokenizer.convert_ids_to_tokens([vocab[t] for t in tokens])
    # (a token sharing its id with another maps back to that one: the same id, not a difference)
    differ = sum(vocab.get(b) != vocab[a] for a, b in zip(tokens, back, strict=True))
    if differ:
        raise InputError(
            f"{folder}: its tokenizer ({type(tokenizer).__name__}) has separate source and target "
            f"vocabularies ({differ} of {len(tokens)} token ids name another token in the target's), and "
            "encodes target text with the source one: references and target context cannot be scored",
            code=Code.MODEL,
        )


def _set_languages(tokenizer, options: HFModelOptions, folder: str):
    """Point the tokenizer at the language pair; return the forced target language token (if
    the model has one) and Marian's target-language prefix of the source."""
    marian_codes = getattr(tokenizer, "supported_language_codes", None)
    if type(tokenizer).__name__.startswith("Marian"):
        if options.src_lang:
            logger.warning("--src-lang %s: Marian models read any source language; ignored", options.src_lang)
        if marian_codes and not options.tgt_lang:
            raise InputError(
                f"{folder}: this Marian model translates into several languages: give --tgt-lang "
                f"(one of {', '.join(language_codes(tokenizer)[:12])})",
                code=Code.OPTION_MISSING,
            )
        if options.tgt_lang:
            token = f">>{options.tgt_lang}<<"
            if not marian_codes or token not in marian_codes:
                known = ", ".join(language_codes(tokenizer)[:12]) or "none: it has one target language"
                raise InputError(
                    f"{folder}: the tokenizer has no target language token {token} (its codes: {known})",
                    code=Code.OPTION_VALUE,
                )
            return None, token + " "
        return None, ""
    has_codes = hasattr(tokenizer, "src_lang")
    target_codes = _target_prefix_codes(tokenizer)
    if not has_codes and target_codes:  # MADLAD-400 (T5): "<2fr> " before the source names the target
        if options.src_lang:
            raise InputError(
                f"--src-lang {options.src_lang}: {folder} reads any source language (its tokenizer names the "
                "target only, with a <2xx> token); leave --src-lang out",
                code=Code.OPTION_VALUE,
            )
        if not options.tgt_lang:
            raise InputError(
                f"{folder}: this model translates into several languages: give --tgt-lang (one of "
                f"{', '.join(target_codes[:12])})",
                code=Code.OPTION_MISSING,
            )
        if options.tgt_lang not in target_codes:
            raise InputError(
                f"--tgt-lang {options.tgt_lang}: the tokenizer of {folder} has no target token <2{options.tgt_lang}> "
                f"(it has e.g. {', '.join(target_codes[:8])})",
                code=Code.OPTION_VALUE,
            )
        return None, f"<2{options.tgt_lang}> "
    if not has_codes:
        for flag, value in (("--src-lang", options.src_lang), ("--tgt-lang", options.tgt_lang)):
            if value:
                raise InputError(
                    f"{flag} {value}: the tokenizer of {folder} has no language codes (leave the option out)",
                    code=Code.OPTION_VALUE,
                )
        return None, ""
    for flag, value in (("--src-lang", options.src_lang), ("--tgt-lang", options.tgt_lang)):
        if not value:
            raise InputError(
                f"{folder}: a multilingual model; give {flag} (a language code of its tokenizer, "
                f"e.g. {', '.join(language_codes(tokenizer)[:6])})",
                code=Code.OPTION_MISSING,
            )
        if language_token(tokenizer, value) is None:
            raise InputError(
                f"{flag} {value}: not a language code of the tokenizer of {folder} (it has e.g. "
                f"{', '.join(language_codes(tokenizer)[:8])})",
                code=Code.OPTION_VALUE,
            )
    tokenizer.src_lang = options.src_lang
    tokenizer.tgt_lang = options.tgt_lang
    return language_token(tokenizer, given(options.tgt_lang, "--tgt-lang")), ""


def _target_prefix_codes(tokenizer) -> List[str]:
    """The target languages of a tokenizer with MADLAD-400's <2xx> tokens (xx the code), sorted."""
    codes = []
    for token in tokenizer.get_vocab():
        if token.startswith("<2") and token.endswith(">") and len(token) > 3 and "<" not in token[2:-1]:
            codes.append(token[2:-1])
    return sorted(codes)


def _causal_template(options: HFModelOptions, tokenizer, folder: str) -> PromptTemplate:
    if options.prompt_template is None:
        if getattr(tokenizer, "chat_template", None):
            return load_template("chat", options.src_lang, options.tgt_lang)
        if not (options.src_lang and options.tgt_lang):
            raise InputError(
                f"{folder}: a decoder-only LM without a chat template: give --src-lang and "
                "--tgt-lang (language names, for the 'plain' prompt) or --prompt-template FILE",
                code=Code.OPTION_MISSING,
            )
        return load_template("plain", options.src_lang, options.tgt_lang)
    template = load_template(options.prompt_template, options.src_lang, options.tgt_lang)
    if template.chat and not getattr(tokenizer, "chat_template", None):
        raise InputError(
            f"--prompt-template chat: the tokenizer of {folder} has no chat template; give "
            "--prompt-template plain or a template file",
            code=Code.MODEL,
        )
    if tokenizer.eos_token_id is None and template.end == "eos":
        raise InputError(
            f"{options.prompt_template}: ends the target with 'eos', but the tokenizer of {folder} "
            'has no end token; set "end" to a string such as "\\n"',
            code=Code.MODEL,
        )
    return template
