"""Fine POS classes for P-CXMI analysis, as in Table 5 of Fernandes et al. (2023).

A word counts towards its UPOS and towards finer classes built from its features:
pronouns by person and number (PRON.2, PRON.2.Sing, or PRON.Plur when there is no person),
verbs by tense (VERB.Past, VERB.Imp for the imperfect).
"""

from __future__ import annotations

from typing import Dict, List


def pos_classes(upos: str, feats: Dict[str, str]) -> List[str]:
    classes = [upos]
    if upos == "PRON":
        person, number = feats.get("Person"), feats.get("Number")
        if person:
            classes.append(f"PRON.{person}")
            if number:
                classes.append(f"PRON.{person}.{number}")
        elif number:
            classes.append(f"PRON.{number}")
    elif upos == "VERB" and feats.get("Tense"):
        classes.append(f"VERB.{feats['Tense']}")
    return classes
