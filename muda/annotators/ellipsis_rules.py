"""English ellipsis detection over a UD dependency parse (the default detector).

VP ellipsis: an auxiliary or modal that heads its clause, because the verb it would support is
missing ("I don't.", "We all did.", "So can I.", "Yes, it is."), or an infinitival "to" with no
verb ("I want to."). NP ellipsis: a numeral, determiner or adjective that fills a nominal
argument slot with no noun ("I took two.", "She bought the red.", "Take some.").
The paper's BERT classifier (``muda train-ellipsis``) can replace this with ``--ellipsis-model``.
"""

from __future__ import annotations

from typing import Dict, List, Sequence

from muda.annotation import Sentence, Word

VP_AUX = {"do", "be", "have", "can", "could", "will", "would", "shall", "should", "may", "might", "must"}
CLAUSE_HEAD = {"root", "conj", "ccomp", "advcl", "parataxis", "xcomp", "acl:relcl", "acl"}
NOMINAL_ARGS = {"nsubj", "nsubj:pass", "obj", "iobj", "obl"}
NP_HEADS = {"NUM", "DET", "ADJ"}
_NOT_NP_ELLIPSIS = {"this", "that", "these", "those", "all", "both", "each", "either", "neither"}


def is_elliptical(sentence: Sentence) -> bool:
    words = sentence.words
    if not words:
        return False
    children: Dict[int, List[Word]] = {w.id: [] for w in words}
    for w in words:
        if w.head in children:
            children[w.head].append(w)
    for w in words:
        if w.upos == "AUX" and w.lemma.lower() in VP_AUX and w.deprel in CLAUSE_HEAD:
            # a promoted auxiliary with a subject of its own, and no predicate below it
            deps = children[w.id]
            if any(d.deprel.startswith("nsubj") or d.deprel == "expl" for d in deps) and not any(
                d.upos in {"VERB", "ADJ", "NOUN", "PROPN", "PRON", "NUM", "ADP", "ADV"}
                and d.deprel in {"xcomp", "obj", "ccomp", "obl", "advmod:pred"}
                for d in deps
            ):
                return True
        if (
            w.upos == "PART"
            and w.lemma.lower() == "to"
            and not children[w.id]
            and w.deprel in {"xcomp", "ccomp", "obj", "advcl"}
        ):
            return True
        if (
            w.upos in NP_HEADS
            and w.deprel in NOMINAL_ARGS
            and w.lemma.lower() not in _NOT_NP_ELLIPSIS
            and not any(d.upos in {"NOUN", "PROPN", "PRON"} for d in children[w.id])
        ):
            return True
    return False


def detect(sentences: Sequence[Sentence]) -> List[bool]:
    return [is_elliptical(s) for s in sentences]
