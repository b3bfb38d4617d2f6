"""Tagger thresholds and word classes (all configurable; defaults follow the MuDA paper)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Dict, FrozenSet

from commandkit.errors import Code, InputError, check_number
from commandkit.options import option


@dataclass(frozen=True)
class TaggerSettings:
    """The tagger's thresholds (``muda tag``'s options ``--lexical-min-count`` and
    ``--same-sentence-counts``) and word classes."""

    # lexical cohesion: an aligned pair of lemmatized content words seen this many times before
    lexical_min_count: int = option(
        default=3, help="lexical cohesion: earlier occurrences of the aligned lemma pair (default 3)"
    )
    content_upos: FrozenSet[str] = frozenset({"NOUN", "PROPN", "VERB", "ADJ"})
    # ellipsis: target words that can carry an elided element
    ellipsis_upos: FrozenSet[str] = frozenset({"VERB", "NOUN", "PROPN", "PRON"})
    # formality / verb form: does an earlier word in the same sentence count as "previously"?
    same_sentence_counts: bool = option(
        action="store_true",
        default=False,
        help="formality/verb form: an earlier word of the same sentence counts as previous",
    )
    verb_upos: FrozenSet[str] = field(default_factory=lambda: frozenset({"VERB"}))

    def __post_init__(self) -> None:
        # 0 would tag the first occurrence of every aligned content word: no cohesion at all
        check_number("--lexical-min-count", self.lexical_min_count, minimum=1, integer=True)
        if not isinstance(self.same_sentence_counts, bool):
            raise InputError(
                f"--same-sentence-counts must be true or false (got {self.same_sentence_counts!r})",
                code=Code.OPTION_VALUE,
            )

    def to_json(self) -> Dict[str, Any]:
        """The settings as JSON values (the tags summary records them, so that ``muda eval`` tags
        hypotheses as the reference was tagged)."""
        return {k: sorted(v) if isinstance(v, frozenset) else v for k, v in vars(self).items()}

    @classmethod
    def from_json(cls, data: Dict[str, Any], where: str) -> TaggerSettings:
        """The inverse of ``to_json``; one error naming ``where`` for anything else."""
        known = {f.name for f in fields(cls)}
        if not isinstance(data, dict) or set(data) - known:
            raise InputError(
                f"{where}: 'settings' is not a tagger settings object (known keys: {', '.join(sorted(known))})",
                code=Code.FORMAT,
            )
        try:
            values: Dict[str, Any] = {k: frozenset(v) if isinstance(v, list) else v for k, v in data.items()}
            return cls(**values)
        except (TypeError, InputError) as e:
            raise InputError(f"{where}: bad 'settings' ({e})", code=Code.FORMAT) from None


# `muda eval`'s significance test: paired bootstrap resamples (0: none) and their seed, the defaults
# of both EvalOptions and the command line
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 1
