"""Voita et al. (2019): the EN-RU deixis, lexical cohesion and ellipsis sets.

A JSON list of ``{"src": ..., "dst": [candidates], "true_ind": k, "ctx_dist": d}``; ``src`` and
every candidate hold the context sentences and the current one joined by ``_eos`` (3 + 1 in
the published sets), Moses-tokenized. The authors' ``scripts/evaluate_consistency.py`` reads one
loss per line for every candidate in order, and predicts the argmin of each group. A set's
file name (``deixis_test``, ``lex_cohesion_dev``, ...) is its phenomenon; an entry's own
``phenomenon`` key (the demo's planted set) takes precedence; an entry's ``edit`` (the
counterfactual suites of ``testset build --counterfactual``) is a category too.
"""

from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Sequence, Tuple

from contextual_mt.contrastive.sets import Group, load_json, register_format
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.interface import ContextPair

# the sets of the authors' release (consistency_testsets/scoring_data), the only ones their scorer reads
PUBLISHED = ("deixis_dev", "deixis_test", "lex_cohesion_dev", "lex_cohesion_test", "ellipsis_infl", "ellipsis_vp")
EOS = re.compile(r"\s*(?<!\S)_eos(?!\S)\s*")


def split_eos(text: str) -> Tuple[Tuple[str, ...], str]:
    """``"c1 _eos c2 _eos current"`` as ``(("c1", "c2"), "current")``."""
    parts = [p.strip() for p in EOS.split(text.strip())]
    return tuple(parts[:-1]), parts[-1]


def phenomenon_of(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    return re.sub(r"[_-](test|dev|valid)$", "", stem)


@register_format
class VoitaFormat:
    name = "voita"
    source_lang, target_lang = "en", "ru"
    tokenized = True
    rule = "argmin"

    def scorer(self, path: str, scores: str) -> Optional[str]:
        # it reads REPO/consistency_testsets/scoring_data/NAME.json itself: the published sets only
        name = os.path.splitext(os.path.basename(path))[0]
        if name not in PUBLISHED:
            return None
        return f"python scripts/evaluate_consistency.py --repo-dir REPO --test {name} --scores {scores}"

    def read(self, path: str, context_files: Sequence[str]) -> List[Group]:
        if context_files:
            raise InputError(
                "--context-files: the voita format keeps its context inside the JSON (_eos)", code=Code.OPTIONS_CONFLICT
            )
        data = load_json(path, list, "a Voita et al. test set (expected a non-empty JSON list of entries)")
        default_phenomenon = phenomenon_of(path)
        groups = []
        for n, entry in enumerate(data):
            where = f"{path}: entry {n}"
            if not isinstance(entry, dict) or not isinstance(entry.get("src"), str):
                raise InputError(f"{where}: needs 'src', a string", code=Code.FORMAT)
            dst = entry.get("dst")
            if not isinstance(dst, list) or not all(isinstance(d, str) for d in dst):
                raise InputError(f"{where}: 'dst' must be a list of candidate strings", code=Code.FORMAT)
            if not dst:
                raise InputError(f"{where}: empty group ('dst' has no candidates)", code=Code.EMPTY)
            if "true_ind" not in entry:
                raise InputError(f"{where}: no 'true_ind' (the index of the correct candidate)", code=Code.FORMAT)
            true_ind = entry["true_ind"]
            if isinstance(true_ind, bool) or not isinstance(true_ind, int):
                raise InputError(
                    f"{where}: true_ind {true_ind!r} is not a whole number "
                    "(the 0-based index of the correct candidate)",
                    code=Code.FORMAT,
                )
            if not 0 <= true_ind < len(dst):
                raise InputError(
                    f"{where}: true_ind {true_ind!r} is out of range for {len(dst)} candidates", code=Code.FORMAT
                )
            src_context, source = split_eos(entry["src"])
            candidates = []
            for d in dst:
                tgt_context, target = split_eos(d)
                candidates.append(ContextPair(source, target, src_context, tgt_context))
            categories: Dict[str, str] = {"phenomenon": str(entry.get("phenomenon", default_phenomenon))}
            if "ctx_dist" in entry:
                categories["context distance"] = str(entry["ctx_dist"])
            if "edit" in entry:  # a counterfactual suite's (testset build --counterfactual)
                categories["edit"] = str(entry["edit"])
            groups.append(Group(candidates, true_ind, categories, where))
        return groups
