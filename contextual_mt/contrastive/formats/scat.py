"""SCAT (Yin et al. 2021, EN-FR): OpenSubtitles sentences whose French translation has an
ambiguous pronoun, marked ``<p>...</p>``, with the context words human translators pointed at
marked ``<hon>...<hoff>``. The files (``highlighted.{train,valid,test}.{en,fr}`` and
``highlighted.SPLIT.context.{en,fr}``, one line per example, the context sentences of an
example on one line) hold only the reference translation, and the release has no scorer.

The contrastive group made here, as in the paper's pronoun evaluation: the reference against
the reference with every marked third-person pronoun given the other gender (il/elle,
ils/elles, capitalisation kept); the markup is removed from both. Marks that do not cover a
whole pronoun word (the release has some inside words, e.g. ``ca<p>il</p>lou``) are unwrapped
and left alone; an example with no pronoun to swap is left out (the summary's ``groups`` is the number
kept; ``where`` of each group names its line). The context line is given to the model as one context segment.

``--input`` is the French file; the English and context files are found beside it
(``X.fr`` -> ``X.en``, ``X.context.en``, ``X.context.fr``) or given with ``--context-files``.
"""

from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Sequence

from commandkit.text import read_lines
from contextual_mt.contrastive.sets import Group, files_by_role, register_format
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.interface import ContextPair

OTHER_GENDER = {"il": "elle", "elle": "il", "ils": "elles", "elles": "ils"}
PRONOUN = re.compile(r"<p>(.*?)</p>")
MARKUP = re.compile(r"</?p>|<hon>|<hoff>")
ROLES = ("context.en", "context.fr", "en")


def clean(text: str) -> str:
    """The sentence without SCAT's markup, spaces normalised."""
    return " ".join(MARKUP.sub("", text).split())


def swap_marked_pronouns(text: str) -> str:
    """The sentence with every marked whole-word pronoun of the other gender, markup removed;
    unchanged text (after cleaning) when there is none."""

    def swap(m: re.Match) -> str:
        word, start, end = m.group(1), m.start(), m.end()
        before = text[start - 1] if start > 0 else " "
        after = text[end] if end < len(text) else " "
        whole = not before.isalpha() and not after.isalpha()
        other = OTHER_GENDER.get(word.lower())
        if not whole or other is None:
            return word
        return other.capitalize() if word[:1].isupper() else other

    return clean(PRONOUN.sub(swap, text))


def _companions(path: str, context_files: Sequence[str]) -> Dict[str, str]:
    if context_files:
        return files_by_role(context_files, ROLES, "the SCAT release")
    if not path.endswith(".fr"):
        raise InputError(f"{path}: --input for scat is the French file (highlighted.SPLIT.fr)", code=Code.OPTION_VALUE)
    stem = path[: -len(".fr")]
    found = {role: f"{stem}.{role}" for role in ROLES}
    for f in found.values():
        if not os.path.isfile(f):
            raise InputError(f"{f}: not found beside {path}; give the files with --context-files", code=Code.NOT_FOUND)
    return found


@register_format
class ScatFormat:
    name = "scat"
    source_lang, target_lang = "en", "fr"
    tokenized = False
    rule = "beats_all"

    def scorer(self, path: str, scores: str) -> Optional[str]:
        return None  # none published: the accuracy is the reference beating its pronoun-swapped variant

    def read(self, path: str, context_files: Sequence[str]) -> List[Group]:
        files = _companions(path, context_files)
        fr = read_lines(path)
        texts = {role: read_lines(f) for role, f in files.items()}
        for role, lines in texts.items():
            if len(lines) != len(fr):
                raise InputError(
                    f"{files[role]}: has {len(lines)} lines but {path} has {len(fr)}", code=Code.LINE_COUNT
                )
        groups = []
        for n, (target, source) in enumerate(zip(fr, texts["en"], strict=True)):
            reference, contrastive = clean(target), swap_marked_pronouns(target)
            if contrastive == reference:
                continue  # nothing to swap
            ctx_en, ctx_fr = clean(texts["context.en"][n]), clean(texts["context.fr"][n])
            pronouns = sorted(
                {m.group(1).lower() for m in PRONOUN.finditer(target) if m.group(1).lower() in OTHER_GENDER}
            )
            src_ctx, tgt_ctx = ((ctx_en,) if ctx_en else ()), ((ctx_fr,) if ctx_fr else ())
            pairs = [ContextPair(clean(source), t, src_ctx, tgt_ctx) for t in (reference, contrastive)]
            groups.append(Group(pairs, 0, {"pronoun": "+".join(pronouns) or "?"}, f"{path}:{n + 1}"))
        return groups
