"""ContraPro (Müller et al. 2018): EN-DE pronoun translation, from OpenSubtitles.

``contrapro.json``: a list of objects with ``document id``, ``segment id``, ``src segment``,
``ref segment``, ``src pronoun``, ``ref pronoun``, ``ante distance`` (sentences between pronoun
and antecedent), ``intrasegmental`` and ``errors``, a list of objects whose ``contrastive`` is a
wrong translation. The authors' ``json2text_and_context.pl --context N`` writes, for the
reference and then each error of each entry, one line to ``*.text.{en,de}`` and N lines (the
previous segments of the document, oldest first) to ``*.context.{en,de}``; ``evaluate.py`` reads
one score per line in that order and counts an entry right only when the reference's score is
strictly lower than every error's. It reports accuracy by antecedent distance (0, 1, 2, 3, >3),
by ``src pronoun:ref pronoun`` and by ``intrasegmental``; so does the summary here. Without
``--context-files`` the segments of the JSON are scored without context.

Near a document's start the script writes an empty line, or its placeholder ``null`` (line 0),
for a context sentence that does not exist: both are dropped here.
"""

from __future__ import annotations

import os
from typing import List, Optional, Sequence, Tuple

from commandkit.text import read_lines
from contextual_mt.contrastive.sets import Group, files_by_role, load_json, register_format
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.interface import ContextPair


def roles_of(context_files: Sequence[str]) -> Tuple[str, str, str, str]:
    """The four roles, for the target language the files are named with (German in the
    published set; any language in sets made by ``contextual-mt testset build``)."""
    langs = {os.path.basename(p).rsplit(".", 1)[-1] for p in context_files} - {"en"}
    lang = langs.pop() if len(langs) == 1 else "de"
    return "text.en", f"text.{lang}", "context.en", f"context.{lang}"


def distance_bucket(value) -> str:
    """The authors' antecedent-distance bins: 0, 1, 2, 3 and >3 sentences."""
    d = int(value)
    return str(d) if d <= 3 else ">3"


def _context(lines: Sequence[str]) -> tuple:
    """Context lines without the script's stand-ins for sentences before the document's start."""
    return tuple(s for s in lines if s.strip() and s.strip() != "null")


@register_format
class ContraProFormat:
    name = "contrapro"
    source_lang, target_lang = "en", "de"
    tokenized = False
    rule = "beats_all"

    def scorer(self, path: str, scores: str) -> str:
        return f"python evaluate.py --reference {path} --scores {scores}"

    def read(self, path: str, context_files: Sequence[str]) -> List[Group]:
        data = load_json(path, list, "a ContraPro test set (expected a non-empty JSON list of entries)")
        entries = []
        for n, entry in enumerate(data):
            where = f"{path}: entry {n}"
            if not isinstance(entry, dict):
                raise InputError(f"{where}: not an object", code=Code.FORMAT)
            needed = (
                ("ante distance", "errors")
                if context_files
                else ("src segment", "ref segment", "ante distance", "errors")
            )
            for key in needed:
                if key not in entry:
                    raise InputError(f"{where}: no '{key}'", code=Code.FORMAT)
            errors = entry["errors"]
            if not isinstance(errors, list) or not all(
                isinstance(e, dict) and isinstance(e.get("contrastive"), str) for e in errors
            ):
                raise InputError(
                    f"{where}: 'errors' must be a list of objects with a 'contrastive' string", code=Code.FORMAT
                )
            if not errors:
                raise InputError(f"{where}: empty group ('errors' has no contrastive translation)", code=Code.EMPTY)
            try:
                bucket = distance_bucket(entry["ante distance"])
            except (TypeError, ValueError):
                raise InputError(
                    f"{where}: 'ante distance' {entry['ante distance']!r} is not a number", code=Code.FORMAT
                ) from None
            entries.append((where, entry, bucket))
        texts, per = self._texts(context_files, sum(1 + len(e["errors"]) for _, e, _ in entries))
        _, text_tgt, _, context_tgt = roles_of(context_files)
        groups, line = [], 0
        for where, entry, bucket in entries:
            targets = [entry["ref segment"]] + [e["contrastive"] for e in entry["errors"]]
            pairs = []
            for target in targets:
                if texts is None:
                    pairs.append(ContextPair(entry["src segment"], target))
                else:
                    ctx = slice(line * per, (line + 1) * per)
                    pairs.append(
                        ContextPair(
                            texts["text.en"][line],
                            texts[text_tgt][line],
                            _context(texts["context.en"][ctx]),
                            _context(texts[context_tgt][ctx]),
                        )
                    )
                line += 1
            categories = {"antecedent distance": bucket}
            # ContraPro's own entries; `testset build` writes no source word ('src pronoun' null: no "none:il")
            if entry.get("src pronoun") is not None and entry.get("ref pronoun") is not None:
                categories["pronoun"] = f"{str(entry['src pronoun']).lower()}:{str(entry['ref pronoun']).lower()}"
            if "intrasegmental" in entry:
                categories["intrasegmental"] = str(entry["intrasegmental"])
            if "phenomenon" in entry:  # sets made by `contextual-mt testset build`
                categories["phenomenon"] = str(entry["phenomenon"])
            groups.append(Group(pairs, 0, categories, where))
        return groups

    @staticmethod
    def _texts(context_files: Sequence[str], candidates: int):
        """The four files' lines, checked against the JSON: one text line per candidate and the
        same number N of context lines for each."""
        if not context_files:
            return None, 0
        roles = roles_of(context_files)
        files = files_by_role(context_files, roles, "json2text_and_context.pl")
        texts = {role: read_lines(p) for role, p in files.items()}
        for role in roles[:2]:
            if len(texts[role]) != candidates:
                raise InputError(
                    f"{files[role]}: has {len(texts[role])} lines, but the test set has "
                    f"{candidates} candidates (the reference and each error of every entry)",
                    code=Code.LINE_COUNT,
                )
        per: Optional[int] = None
        for role in roles[2:]:
            n = len(texts[role])
            if n % candidates:
                raise InputError(
                    f"{files[role]}: has {n} lines, not a multiple of the {candidates} "
                    "candidates (json2text_and_context.pl writes N lines per candidate)",
                    code=Code.LINE_COUNT,
                )
            if per is not None and n // candidates != per:
                raise InputError(
                    f"{files[role]}: {n // candidates} context lines per candidate, "
                    f"but {files['context.en']} has {per}",
                    code=Code.LINE_COUNT,
                )
            per = n // candidates
        return texts, per
