"""System outputs: plain text (one line per source line, as `contextual-mt translate` writes),
the raw output of `fairseq-generate` (S-/T-/H-/D-/P- lines in any order, re-ordered by id), or a
document-level output (JSONL records ``{"doc", "text"}`` or one document per line, as a system
that translates whole documents writes it), re-aligned to the source lines by ``docalign``.

fairseq-generate output is recognised first (by its S-/H- lines); otherwise ``docalign.formats``
tells a line-aligned output from a document-level one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

from commandkit.errors import Code, InputError
from commandkit.text import read_lines
from docalign.align import Alignment, AlignOptions, align_outputs, nonempty_documents
from docalign.formats import AUTO, LINES, SystemOutput, read_system_output

_FAIRSEQ = re.compile(r"^([STHDP])-(\d+)\t")
_ANY_ID = re.compile(r"^[A-Z]-(\d+)\t")  # any per-sample line (also A-, W-, E-, I-...)


@dataclass(frozen=True)
class Hypotheses:
    """A system's hypotheses, one per reference line, and the line of the file each came from
    (fairseq output is re-ordered: messages must name the line the user can find); for a
    document-level output, its re-alignment (``texts`` are its hypotheses, line n is source line n)."""

    texts: List[str]
    line_numbers: List[int]
    alignment: Optional[Alignment] = None


def is_fairseq_output(lines: List[str]) -> bool:
    return any(_FAIRSEQ.match(line) for line in lines[:200])


def _blocks(lines: List[str]) -> List[Tuple[int, List[Tuple[int, str, str]]]]:
    """The per-sample blocks of fairseq output: (sample id, [(line number, kind, text), ...]).
    A block is a run of lines of one sample id; an S- line always starts a new one."""
    blocks: List[Tuple[int, List[Tuple[int, str, str]]]] = []
    previous: Optional[int] = None
    for lineno, line in enumerate(lines, start=1):
        m = _ANY_ID.match(line)
        if not m:
            continue
        i = int(m.group(1))
        if i != previous or line.startswith("S-"):
            blocks.append((i, []))
        previous = i
        kind = line[0]
        if kind in "HD":
            fields = line.split("\t")
            blocks[-1][1].append((lineno, kind, fields[2] if len(fields) > 2 else ""))  # "H-3\t-1.2\t": empty
    return blocks


def _best(lines: List[str], path: str) -> Dict[str, Dict[int, Tuple[str, int]]]:
    """kind (D, H) -> sample id -> (best hypothesis, its line).

    The rule: fairseq prints one block per sample (S-, T-, then for each of the ``--nbest``
    hypotheses H-, D-, P- lines), so within a block the first H- (D-) line is the best and the
    next ones are the n-best alternatives. The same id in another block means another run was
    appended (or the file was re-ordered line by line): its best hypothesis must be the same text
    (the same run twice is harmless), or the file holds two different outputs for one sentence,
    an error naming the line of the second. Limits: without S- lines, a second run whose first
    sample repeats the last sample of the first run cannot be told from an n-best list (it is read
    as one); an n-best file re-ordered line by line has lost which line was best, so its
    alternatives are reported as conflicts."""
    best: Dict[str, Dict[int, Tuple[str, int]]] = {"D": {}, "H": {}}
    for i, entries in _blocks(lines):
        for kind in "DH":
            first = next(((n, text) for n, k, text in entries if k == kind), None)
            if first is None:
                continue
            lineno, text = first
            known = best[kind].get(i)
            if known is None:
                best[kind][i] = (text, lineno)
            elif known[0] != text:
                raise InputError(
                    f"{path}:{lineno}: sample id {i} again, with another hypothesis than at line "
                    f"{known[1]} ({text[:40]!r} vs {known[0][:40]!r}): two different fairseq-generate "
                    "outputs in one file? Give each its own file",
                    code=Code.FORMAT,
                )
    return best


def parse_fairseq(lines: List[str], path: str, expected: Optional[int] = None) -> Hypotheses:
    """The hypotheses by sample id: the detokenized D- line where present, else H-; the first
    (best) one of each sample's n-best list (see ``_best`` for the rule)."""
    kinds = _best(lines, path)
    best = kinds["D"] or kinds["H"]
    if not best:
        raise InputError(f"{path}: no H- or D- lines: is it fairseq-generate output?", code=Code.FORMAT)
    n = expected if expected is not None else max(best) + 1
    missing = [i for i in range(n) if i not in best]
    if missing:
        shown = ", ".join(str(i) for i in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise InputError(f"{path}: hypotheses missing for {len(missing)} sample ids ({shown}) of {n}", code=Code.FORMAT)
    extra = sorted(i for i in best if i >= n)
    if extra:
        raise InputError(
            f"{path}:{best[extra[0]][1]}: sample id {extra[0]} but the reference has only {n} lines", code=Code.FORMAT
        )
    return Hypotheses([best[i][0] for i in range(n)], [best[i][1] for i in range(n)])


def parse_fairseq_output(lines: List[str], path: str, expected: Optional[int] = None) -> List[str]:
    """The hypotheses of fairseq-generate output, in sample id order."""
    return parse_fairseq(lines, path, expected).texts


def load_hypotheses(path: str, expected: int) -> Hypotheses:
    """A system output file (plain lines or fairseq-generate output) with the line of each hypothesis."""
    lines = read_lines(path)
    if is_fairseq_output(lines):
        return parse_fairseq(lines, path, expected)
    if len(lines) != expected:
        raise InputError(f"{path}: has {len(lines)} lines but the reference has {expected}", code=Code.LINE_COUNT)
    return Hypotheses(lines, list(range(1, expected + 1)))


def read_hypotheses(path: str, expected: int) -> List[str]:
    return load_hypotheses(path, expected).texts


def read_system_output_file(
    path: str, pivots: Sequence[str], ids: Sequence[str], docids_path: str, hyp_format: str = AUTO
) -> Union[Hypotheses, SystemOutput]:
    """The output at ``path`` read and checked: its hypotheses (fairseq-generate output or one line
    per source line), or its documents (``docalign.formats``), to be aligned to ``pivots`` (a
    sentence-level translation of each source line: a document whose pivot has text may not be
    empty)."""
    lines = read_lines(path)
    if is_fairseq_output(lines):
        return parse_fairseq(lines, path, len(ids))
    output = read_system_output(path, ids, docids_path, nonempty_documents(pivots, ids), hyp_format)
    if output.format == LINES:
        assert output.lines is not None
        return Hypotheses(output.lines, list(range(1, len(ids) + 1)))
    return output


def load_system_outputs(
    paths: Sequence[str], pivots: Sequence[str], ids: Sequence[str], docids_path: str, options: AlignOptions
) -> List[Hypotheses]:
    """The hypotheses of every output of ``paths``: each file is read and checked first, then the
    document-level ones are re-aligned to the source lines (``docalign``: a merged segment is cut
    between its two lines by its rule) with one segmenter, loaded only if one of them needs it."""
    read = [read_system_output_file(p, pivots, ids, docids_path, options.hyp_format) for p in paths]
    documents = [r for r in read if isinstance(r, SystemOutput)]
    aligned = iter(align_outputs(documents, pivots, ids, options))
    out = []
    for r in read:
        if isinstance(r, SystemOutput):
            alignment = next(aligned)
            assert alignment is not None
            r = Hypotheses(alignment.hypotheses, list(range(1, len(ids) + 1)), alignment)
        out.append(r)
    return out
