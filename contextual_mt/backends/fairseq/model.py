"""Loading a ``document_translation`` checkpoint: the one loader used by translation, CXMI and
the scoring backend. It checks the task, finds the dictionaries, applies context-size
overrides, warns when the model looks untrained (``model_health``), puts the model on a GPU
when one is present (unless ``cpu``) and casts it to its ``dtype`` (``precision``)."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from commandkit.errors import check_number
from contextual_mt.backends.fairseq.checkpoint_file import label_smoothing, read_checkpoint, validation_loss
from contextual_mt.backends.fairseq.codec import SentencePieceCodec
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.model_health import warn_if_untrained
from contextual_mt.inference.precision import check_dtype, cuda_in_use, resolve_dtype, torch_dtype

if TYPE_CHECKING:  # torch is imported when a model is loaded: the commands start without it
    import torch

logger = logging.getLogger(__name__)


DOCUMENT_TASKS = ("document_translation", "cadec_translation")


def beyond_trained_error(name: str, asked, trained: Dict, why: str) -> InputError:
    """Context sizes larger than those trained, where a command cannot use them (``why``)."""
    return InputError(
        f"{name}: context sizes {asked[0]}/{asked[1]} (source/target) exceed those trained "
        f"({trained['source_context_size']}/{trained['target_context_size']}): {why}",
        code=Code.MODEL,
    )


def load_document_model(
    path: str,
    data: Optional[str] = None,
    source_context_size: Optional[int] = None,
    target_context_size: Optional[int] = None,
    spm: Optional[str] = None,
    beyond_trained: Optional[str] = None,
):
    """Load a ``document_translation`` checkpoint (ensemble of one), its task and the source and
    target codecs (``spm``, checked against the dictionaries before the weights are read); context
    sizes given here replace the trained ones. Sizes larger than those trained are a warning, or,
    given ``beyond_trained`` (why the command cannot use them), the one error line."""
    from fairseq import checkpoint_utils, tasks

    overrides = {
        k: v
        for k, v in (("source_context_size", source_context_size), ("target_context_size", target_context_size))
        if v is not None
    }

    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, not a checkpoint file", code=Code.IS_DIRECTORY)
    state = read_checkpoint(path)
    cfg = state.get("cfg")
    task_name = getattr(getattr(cfg, "task", None), "_name", None) if cfg is not None else None
    if task_name is None and state.get("args") is not None:
        task_name = getattr(state["args"], "task", None)
    if cfg is None or task_name not in DOCUMENT_TASKS:
        raise InputError(
            f"{path}: checkpoint was trained with task '{task_name}', not 'document_translation' "
            "(or 'cadec_translation')",
            code=Code.MODEL,
        )
    candidates = [data] if data else [os.path.dirname(os.path.abspath(path)), cfg.task.data]
    src, tgt = cfg.task.source_lang, cfg.task.target_lang
    if not (src and tgt):  # trained without -s/-t: fairseq inferred them from the data files
        from fairseq.data.data_utils import infer_language_pair

        for directory in [*candidates, cfg.task.data]:
            if directory and os.path.isdir(directory):
                src, tgt = infer_language_pair(directory)
                if src and tgt:
                    break
        if not (src and tgt):
            raise InputError(
                f"{path}: the checkpoint does not record its language pair (trained without "
                "-s/-t); pass --data with the binarized data directory",
                code=Code.OPTION_MISSING,
            )
        cfg.task.source_lang, cfg.task.target_lang = src, tgt
    wanted = [f"dict.{src}.txt", f"dict.{tgt}.txt"] if src and tgt else []

    def has_dicts(directory: Optional[str]) -> bool:
        if not directory or not os.path.isdir(directory):
            return False
        if wanted:
            return all(os.path.exists(os.path.join(directory, w)) for w in wanted)
        return any(f.startswith("dict.") and f.endswith(".txt") for f in os.listdir(directory))

    data_dir = next((c for c in candidates if has_dicts(c)), None)
    if data_dir is None:
        raise InputError(
            f"{path}: dictionaries ({', '.join(wanted) or 'dict.*.txt'}) not found in "
            f"{' or '.join(str(c) for c in candidates if c)}; pass --data DIR",
            code=Code.NOT_FOUND,
        )
    from fairseq.dataclass.utils import overwrite_args_by_name

    trained = {k: cfg.task[k] for k in ("sample_context_size", "source_context_size", "target_context_size")}
    if task_name == "cadec_translation":
        # CADec reads K previous sentences with their translations: one size for both sides
        trained.update(source_context_size=cfg.task.context_size, target_context_size=cfg.task.context_size, cadec=True)
        sizes = {v for v in (source_context_size, target_context_size) if v is not None}
        if len(sizes) > 1:
            raise InputError(
                f"{path}: a CADec model reads as many source as target context sentences; "
                "give --source-context-size and --target-context-size the same value",
                code=Code.OPTIONS_CONFLICT,
            )
        overrides = {"context_size": sizes.pop()} if sizes else {}
    asked = (
        trained["source_context_size"] if source_context_size is None else source_context_size,
        trained["target_context_size"] if target_context_size is None else target_context_size,
    )
    if asked[0] > trained["source_context_size"] or asked[1] > trained["target_context_size"]:
        if beyond_trained is not None:  # refused (attribute): the error alone, no warning above it
            raise beyond_trained_error(path, asked, trained, beyond_trained)
        # every command that loads a model says so (translate, cxmi, contrastive, the pipeline)
        logger.warning(
            "context sizes %d/%d (source/target) exceed those trained (%d/%d)",
            *asked,
            trained["source_context_size"],
            trained["target_context_size"],
        )
    # fairseq applies arg_overrides only when it reads the file itself; this state is preloaded
    overwrite_args_by_name(cfg, {"data": data_dir, **overrides})
    task = tasks.setup_task(cfg.task)  # reads the dictionaries: a wrong --spm fails before the model is built
    codecs = [
        SentencePieceCodec(d, spm, os.path.join(data_dir, f"dict.{lang}.txt"))
        for d, lang in ((task.source_dictionary, src), (task.target_dictionary, tgt))
    ]
    # every command that loads a model says so when it looks untrained (once per load)
    warn_if_untrained(path, validation_loss(state), task.target_dictionary.count, label_smoothing(state))
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task([path], task=task, state=state)
    task.trained_context = trained  # as trained, before any override
    return models, cfg, task, codecs


@dataclass
class FairseqModelOptions:
    """Which checkpoint to load and how: shared by translation, CXMI and the scoring backend."""

    path: str
    spm: Optional[str] = None  # sentencepiece model (default: input is already tokenized)
    data: Optional[str] = None  # directory with dict.*.txt (default: beside the checkpoint, then its data)
    source_context_size: Optional[int] = None  # default: as trained
    target_context_size: Optional[int] = None
    cpu: bool = False  # no GPU even if one is present
    dtype: str = "auto"  # auto: float32 on every device (inference/precision.py says why)

    def __post_init__(self) -> None:
        # None keeps the trained size; a given size must be a sentence count
        check_number("--source-context-size", self.source_context_size, minimum=0, integer=True, optional=True)
        check_number("--target-context-size", self.target_context_size, minimum=0, integer=True, optional=True)
        check_dtype(self.dtype)

    def resolved_dtype(self) -> str:
        """The dtype the model runs in on this machine (``auto`` decided): what records name."""
        return resolve_dtype(self.dtype, self.cpu)


@dataclass
class DocumentModel:
    """A loaded checkpoint with what every consumer needs: the model on its device, the task
    and config, the dictionaries with their codecs, context sizes and position limits."""

    path: str
    models: List[Any]  # fairseq models (untyped): their encoder, decoder and layers are read by name
    cfg: Any  # fairseq's config of the checkpoint
    task: Any  # the fairseq task (its dictionaries, its config)
    device: torch.device
    src_codec: SentencePieceCodec
    tgt_codec: SentencePieceCodec
    dtype: str = "float32"  # of the weights and activations; log-probabilities are float32 whatever it is

    @classmethod
    def load(cls, options: FairseqModelOptions, beyond_trained: Optional[str] = None) -> DocumentModel:
        import torch

        dtype = options.resolved_dtype()  # a refused dtype fails before the weights are read
        models, cfg, task, (src_codec, tgt_codec) = load_document_model(
            options.path,
            options.data,
            options.source_context_size,
            options.target_context_size,
            options.spm,
            beyond_trained,
        )
        device = torch.device("cuda" if cuda_in_use(options.cpu) else "cpu")
        # cast once, here: every consumer (beam search, scoring, CADec's base pass) runs in it
        models = [m.to(device=device, dtype=torch_dtype(dtype)).eval() for m in models]
        return cls(options.path, models, cfg, task, device, src_codec, tgt_codec, dtype)

    @property
    def model(self) -> Any:
        return self.models[0]

    @property
    def src_dict(self):
        return self.task.source_dictionary

    @property
    def tgt_dict(self):
        return self.task.target_dictionary

    @property
    def cadec(self) -> bool:
        """A two-pass CADec model (its first pass is its frozen base model)."""
        return hasattr(self.model, "base") and getattr(self.cfg.task, "_name", None) == "cadec_translation"

    @property
    def multi_encoder(self) -> bool:
        return bool(getattr(self.model, "multi_encoder", False))

    @property
    def source_context_size(self) -> int:
        return self.task.cfg.source_context_size  # the task's own config: what its datasets use

    @property
    def target_context_size(self) -> int:
        return self.task.cfg.target_context_size

    @property
    def trained_context(self) -> Dict:
        """Context options as trained, before any override."""
        return self.task.trained_context

    @property
    def max_source_positions(self) -> int:
        return min(self.cfg.task.max_source_positions, self.model.max_positions()[0])

    @property
    def max_target_positions(self) -> int:
        return min(self.cfg.task.max_target_positions, self.model.max_positions()[1])

    def check_fits(self, lengths: Sequence[int], path: str, side: str = "source") -> None:
        """Every sentence (its length counts </s>) must fit the model's ``side`` positions by
        itself: beyond them the model reads garbage positions, so an over-long line is an
        error naming it, never a silent wrong translation or score. Context is trimmed instead."""
        limit = self.max_source_positions if side == "source" else self.max_target_positions
        for lineno, n in enumerate(lengths, start=1):
            if n > limit:
                raise InputError(
                    f"{path}:{lineno}: {n} subword pieces (with </s>), but the model takes at most "
                    f"{limit} {side} positions; split the line",
                    code=Code.TOO_LONG,
                )
