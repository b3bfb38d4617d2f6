"""What the batch plan (``pipeline/batch_plan``) measures with fairseq before a training run: the
activations one forward/backward of a preset's model saves, and the training split as fairseq
will batch it. fairseq and torch are imported when a probe runs."""

from __future__ import annotations

import argparse
import os
from typing import Dict, Optional, Tuple

from contextual_mt.errors import Code, InputError


def saved_activations(
    model_config: Dict, dictionary_path: str, task_config: Optional[Dict], rows: int, row: int
) -> Tuple[int, int]:
    """(parameters, bytes autograd saves): the model of ``model_config`` (the Hydra ``model``
    section) built with the data's target dictionary on CPU, one forward/backward of the loss on
    ``rows`` random rows of ``row`` tokens."""
    import torch
    from fairseq.data import Dictionary
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    import contextual_mt  # noqa: F401  (registers the architectures)
    import contextual_mt_compat  # noqa: F401  (fairseq on this torch)

    arch = model_config.get("_name")
    if arch not in ARCH_MODEL_REGISTRY:
        raise InputError(f"model {arch!r}: not a registered fairseq architecture", code=Code.MODEL)
    args = argparse.Namespace(**{k: v for k, v in model_config.items() if k != "_name"})
    for key, value in (task_config or {}).items():
        if key == "multi_encoder":
            setattr(args, key, value)
    ARCH_CONFIG_REGISTRY[arch](args)
    dictionary = Dictionary.load(dictionary_path)
    task = argparse.Namespace(source_dictionary=dictionary, target_dictionary=dictionary)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = ARCH_MODEL_REGISTRY[arch].build_model(args, task)
        model.train()
        low = dictionary.nspecial
        src = torch.randint(low, len(dictionary), (rows, row))
        tgt = torch.randint(low, len(dictionary), (rows, row))
        saved: Dict[int, int] = {}

        def pack(t):
            storage = t.untyped_storage()
            saved[storage.data_ptr()] = storage.nbytes()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = model(src, torch.full((rows,), row), tgt)
            lprobs = model.get_normalized_probs(out, log_probs=True)
            loss = -lprobs.gather(-1, tgt.unsqueeze(-1)).sum()
        del loss, lprobs, out
    return sum(p.numel() for p in model.parameters()), sum(saved.values())


class TrainingSplit:
    """The training split as fairseq will batch it (the context model's rows with their context,
    epoch 1's sampled context sizes): ``batches_at(max_tokens)`` and the ``longest`` row."""

    def __init__(self, task_config: Dict, bin_dir: str, source_lang: str, target_lang: str):
        from fairseq import options, tasks

        import contextual_mt
        import contextual_mt_compat  # noqa: F401  (fairseq on this torch)

        argv = [
            bin_dir,
            "--task",
            "document_translation",
            "--user-dir",
            os.path.dirname(contextual_mt.__file__),
            "--arch",
            "contextual_transformer_tiny",
            "-s",
            source_lang,
            "-t",
            target_lang,
        ]
        for key, value in task_config.items():
            if key in ("_name", "data", "source_lang", "target_lang") or value is None or value is False:
                continue
            argv += [f"--{key.replace('_', '-')}"] + ([] if value is True else [str(value)])
        task = tasks.setup_task(options.parse_args_and_arch(options.get_training_parser(), argv))
        task.load_dataset("train")
        self._dataset = task.dataset("train")
        self._order = self._dataset.ordered_indices()
        self.longest = int(self._dataset.num_tokens_vec(self._order).max()) if len(self._order) else 0
        self._cache: Dict[int, int] = {}

    def batches_at(self, max_tokens: int) -> int:
        if max_tokens not in self._cache:
            self._cache[max_tokens] = len(self._dataset.batch_by_size(self._order, max_tokens=max_tokens))
        return self._cache[max_tokens]
