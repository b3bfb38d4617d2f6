"""System outputs: plain text (one line per source line, as `contextual-mt translate` writes) or
the raw output of `fairseq-generate` (S-/T-/H-/D-/P- lines in any order, re-ordered by id)."""
from __future__ import annotations

import re
from typing import List, Optional

from muda.errors import InputError
from muda.io import read_lines

_FAIRSEQ = re.compile(r"^([STHDP])-(\d+)\t")


def is_fairseq_output(lines: List[str]) -> bool:
    return any(_FAIRSEQ.match(line) for line in lines[:200])


def parse_fairseq_output(lines: List[str], path: str, expected: Optional[int] = None) -> List[str]:
    """The hypotheses by sample id: the detokenized D- line where present, else H-; the first
    (best) one when fairseq printed several (--nbest)."""
    kinds = {"D": {}, "H": {}}
    for line in lines:
        m = _FAIRSEQ.match(line)
        if not m or m.group(1) not in kinds:
            continue
        fields = line.split("\t")
        if len(fields) < 3:
            fields.append("")  # an empty hypothesis: "H-3\t-1.2\t"
        i = int(m.group(2))
        kinds[m.group(1)].setdefault(i, fields[2])
    best = kinds["D"] or kinds["H"]
    if not best:
        raise InputError(f"{path}: no H- or D- lines: is it fairseq-generate output?")
    n = expected if expected is not None else max(best) + 1
    missing = [i for i in range(n) if i not in best]
    if missing:
        shown = ", ".join(str(i) for i in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise InputError(f"{path}: hypotheses missing for {len(missing)} sample ids ({shown}) of {n}")
    extra = [i for i in best if i >= n]
    if extra:
        raise InputError(f"{path}: sample id {extra[0]} but the reference has only {n} lines")
    return [best[i] for i in range(n)]


def read_hypotheses(path: str, expected: int) -> List[str]:
    lines = read_lines(path)
    if is_fairseq_output(lines):
        return parse_fairseq_output(lines, path, expected)
    if len(lines) != expected:
        raise InputError(f"{path}: has {len(lines)} lines but the reference has {expected}")
    return lines
