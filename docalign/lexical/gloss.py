"""The source lines glossed word by word with the lexical table: each word replaced by its most
probable translation (all of them where several are equally probable), each target word written
once per line; a word the table does not know, such as a name or a number, kept as it is. The gloss
is a pivot in the output's language: chrF against it scores a link as against a reference
(``--pivot none``). Ties kept: where the corpus always shows words together (a fixed phrase),
Model 1 cannot tell which translates which and gives each the same t(f | e); the phrase's words
are then all written once.

The aligner's weights for this pivot (``WEIGHTS``) and ``RATIO`` were chosen on the demo's
validation split, perturbed (bench/no_reference.py's documents): with every translation at least
half as likely as the best the gloss linked 0.956-0.973 of the lines, with the best alone 0.989.
With the word-edit link cost (docalign.dp), a gloss shares fewer words and less chrF with the
right sentence than a reference does: with the reference pivot's weights it linked 0.968 of the
validation lines; with chrF under 0.05 for an unrelated link (a gloss's chrF to the right line is
low), 2.0 per word of an omission or an addition and chrF's share per word at 2.0 (word edits
against a gloss count many substitutions that are not errors), 0.982, and 0.962 with 30% of the
words replaced (the reference pivot: 0.931). A merge's cut, by word edits against the pivots, keeps
a preference for the output's own sentence end (``sentence_end``): tried on three WMT24 systems
(GPT-4, ONLINE-B, TSU-HITs) at 0 (a tie-break, the reference pivot's), 1, 2, 3 and 100 word edits,
1 had the most exact lines or within 0.005 of them on each and BLEU through it closest to the true
lines'."""

from __future__ import annotations

from typing import Dict, List, Sequence

from docalign.lexical.model1 import WORDS, Table

MIN_PROBABILITY = 0.05  # translations less likely than this are left out (a function word's spread)
RATIO = 1.0  # and those less likely than the word's best (ties are kept)
# the aligner's weights (docalign.dp.Weights) that differ when the pivot is the gloss
# sentence_end: a merge is cut at the output's own sentence end rather than where the word edits
# against the glosses are one fewer (the least they can differ by; against a gloss, chance: a
# function word it happens to hold), not where they are two fewer (bench/RESULTS.md, WMT24)
WEIGHTS = {"unrelated": 0.05, "unlinked": 2.0, "similarity": 2.0, "sentence_end": 1.0}


def gloss(line: str, table: Table) -> str:
    """``line`` glossed (its first word capitalized as the line's is: chrF tells case apart)."""
    out: Dict[str, None] = {}  # ordered, each word once
    for word in WORDS.findall(line):
        best = table.translations.get(word.lower())
        if best is None:
            out.setdefault(word)  # unknown: a name, a number, a word the corpus does not have
            continue
        for target, p in best:
            if p >= MIN_PROBABILITY and p >= RATIO * best[0][1]:
                out.setdefault(word if target == word.lower() else target)  # a name keeps its capital
    text = " ".join(out)
    return text[:1].upper() + text[1:] if line.lstrip()[:1].isupper() else text


def gloss_lines(lines: Sequence[str], table: Table) -> List[str]:
    """The pivots of ``--pivot none``: each source line's gloss (an empty line stays empty)."""
    return [gloss(line, table) if line.strip() else "" for line in lines]
