"""Contrastive test sets: groups of candidate translations of one source, one candidate correct
in its context; and the registry of the formats they are published in.

A format reads its authors' files into ``Group``s, in the order in which the authors' scorer
reads the scores file (one line per candidate, group after group), and names the rule that
scorer applies:

- ``argmin``: the group is right when the first candidate of lowest loss is the correct one
  (Voita et al. 2019's ``evaluate_consistency.py``);
- ``beats_all``: right when the correct candidate's loss is strictly lower than every other
  (ContraPro's ``evaluate.py``; Bawden et al.'s pairs of correct and incorrect translations).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Protocol, Sequence, Tuple

import numpy as np

from commandkit.errors import json_reason
from commandkit.text import read_lines
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.interface import ContextPair

RULES = ("argmin", "beats_all")
# each rule in a user's words (what the accuracy counts)
RULE_WORDS = {
    "argmin": "a group counts as right when its correct translation has the lowest loss",
    "beats_all": "a group counts as right when its correct translation's loss is lower than every other's",
}


@dataclass
class Group:
    """The candidates of one test instance, in the order their scores are written."""

    candidates: List[ContextPair]
    correct: int  # index of the correct candidate
    categories: Dict[str, str] = field(default_factory=dict)  # e.g. {"antecedent distance": "1"}
    where: str = ""  # "FILE: entry K", what an error about this group names
    block: Optional[str] = None  # groups made from one entry (Bawden's blocks): also scored together


@dataclass
class ContrastiveSet:
    name: str  # e.g. "deixis_test"
    format: str
    groups: List[Group]
    rule: str
    source_lang: str
    target_lang: str
    tokenized: bool  # Moses-tokenized text: detokenized before a sentencepiece model reads it
    scorer: Optional[str]  # the authors' scorer as a command line for this set and scores file; None: none reads it

    @property
    def candidates(self) -> int:
        return sum(len(g.candidates) for g in self.groups)


class SetFormat(Protocol):
    """What a test-set format declares and provides."""

    name: str
    source_lang: str
    target_lang: str
    tokenized: bool
    rule: str

    def scorer(self, path: str, scores: str) -> Optional[str]:
        """The authors' scorer as a command line for the set ``path`` and a scores file; None
        where no published scorer reads this set (the accuracy is then only this project's)."""

    def read(self, path: str, context_files: Sequence[str]) -> List[Group]:
        """The groups of ``path`` (with its companion files, if the format has any); one error
        naming the file and entry for anything malformed."""


FORMATS: Dict[str, SetFormat] = {}


def register_format(cls: type) -> type:
    """Class decorator: make a format available to ``--format``."""
    instance = cls()
    if instance.rule not in RULES:
        raise ValueError(f"format {instance.name}: unknown rule {instance.rule!r}")
    FORMATS[instance.name] = instance
    return cls


def load_json(path: str, kind: type, what: str):
    """A test set's JSON file: UTF-8 errors and syntax errors name the line; the top-level value
    must be a ``kind`` (list or dict), else one line saying what the format expects."""
    text = "\n".join(read_lines(path))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: not JSON ({json_reason(e, line=False)})", code=Code.FORMAT) from None
    if not isinstance(value, kind) or not value:
        raise InputError(f"{path}: not {what}", code=Code.EMPTY if isinstance(value, kind) else Code.FORMAT)
    return value


def files_by_role(files: Sequence[str], roles: Sequence[str], written_by: str) -> Dict[str, str]:
    """``--context-files`` recognised by their endings (``X.context.en`` is the ``context.en``
    role): one file per role, all roles given."""
    found: Dict[str, str] = {}
    for path in files:
        name = os.path.basename(path)
        # the longest matching ending: "x.context.en" is context.en, not en
        role = max((r for r in roles if name.endswith("." + r)), key=len, default=None)
        if role is None:
            raise InputError(
                f"{path}: a context file of this format ends in one of "
                f"{', '.join('.' + r for r in roles)} (as {written_by} names them)",
                code=Code.OPTION_VALUE,
            )
        if role in found:
            raise InputError(f"{path}: a second *.{role} file (first: {found[role]})", code=Code.OPTION_VALUE)
        found[role] = path
    missing = [r for r in roles if r not in found]
    if missing:
        raise InputError(
            f"--context-files: give the {len(roles)} files {written_by} writes; missing *.{', *.'.join(missing)}",
            code=Code.OPTION_MISSING,
        )
    return found


def check_groups(groups: Sequence[Group]) -> None:
    """What every format guarantees: at least two candidates, a correct index within them, and
    a non-empty current sentence on both sides."""
    for g in groups:
        if len(g.candidates) < 2:
            raise InputError(
                f"{g.where}: {len(g.candidates)} candidate(s); a contrastive group needs the "
                "correct translation and at least one contrastive one",
                code=Code.FORMAT,
            )
        if not 0 <= g.correct < len(g.candidates):
            raise InputError(
                f"{g.where}: correct candidate {g.correct} is out of range (0..{len(g.candidates) - 1})",
                code=Code.FORMAT,
            )
        for k, c in enumerate(g.candidates):
            if not c.source.strip() or not c.target.strip():
                side = "source" if not c.source.strip() else "target"
                raise InputError(f"{g.where}: candidate {k} has an empty {side} sentence", code=Code.EMPTY)


def repeated_candidates(group: Group) -> Dict[int, int]:
    """Candidates listed again in their group, string for string (Voita et al.'s ellipsis_infl
    gives one surface form for two grammatical cases): index -> the first listing's index. They
    are legitimate; they score alike and the rule decides among equal scores as the authors' do."""
    first: Dict[ContextPair, int] = {}
    repeats = {}
    for k, c in enumerate(group.candidates):
        j = first.setdefault(c, k)
        if j != k:
            repeats[k] = j
    return repeats


def group_is_right(losses: Sequence[float], correct: int, rule: str) -> bool:
    """The authors' decision for one group (lower loss = better); with ``argmin`` the first of
    equal losses wins (``np.argmin``), so a correct candidate tied with a wrong one listed before it
    is wrong."""
    values = np.asarray(losses, dtype=float)
    if rule == "argmin":
        return int(np.argmin(values)) == correct
    others = np.delete(values, correct)
    return bool((values[correct] < others).all())


def blocks_right(groups: Sequence[Group], right: Sequence[bool]) -> Optional[Dict]:
    """Entries whose groups are all right (Bawden et al.'s "example blocks entirely correct")."""
    blocks: Dict[str, bool] = {}
    for g, ok in zip(groups, right, strict=True):
        if g.block is not None:
            blocks[g.block] = blocks.get(g.block, True) and bool(ok)
    if not blocks:
        return None
    n = sum(blocks.values())
    return {"blocks": len(blocks), "all_right": n, "accuracy": n / len(blocks)}


def accuracy_by(
    groups: Sequence[Group], right: Sequence[bool], order: Optional[Callable[[str, str], Tuple]] = None
) -> Dict[str, Dict[str, Dict]]:
    """Per category name, per value: groups, right, accuracy (a fraction)."""
    table: Dict[str, Dict[str, List[int]]] = {}
    for g, ok in zip(groups, right, strict=True):
        for name, value in g.categories.items():
            counts = table.setdefault(name, {}).setdefault(str(value), [0, 0])
            counts[0] += int(ok)
            counts[1] += 1
    key = order or (lambda name, value: (len(value), value))
    return {
        name: {
            v: {"groups": n, "right": r, "accuracy": r / n}
            for v, (r, n) in sorted(values.items(), key=lambda kv: key(name, kv[0]))
        }
        for name, values in sorted(table.items())
    }
