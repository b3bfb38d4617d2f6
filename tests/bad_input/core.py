"""What the cases of the bad-input matrix (tests/test_bad_input_matrix.py) are made of; the cases
themselves are in this package's modules, one per command (``tests/bad_input/__init__.py``).

A case is an id (``<command>-<what is wrong>``) and a ``build(c)`` that fills a ``Ctx``: the
command line (``c.argv``), the fragments the error line must hold (``c.expect``: a string, a
tuple of alternatives, or a ``Kind`` of error: its code, or its words where the code cannot be
seen), the exit status, the outputs that must not exist, and the files whose
content must not change. Each case writes its bad inputs under ``c.inp`` and its outputs go
under ``c.out``; both must be exactly as before when the command has failed.

Expected behaviour comes from the project's rule (README "Errors"), not from today's code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Sequence, Tuple, Union

from commandkit.errors import Code


@dataclass(frozen=True)
class Kind:
    """A kind of error, as the case expects it: one of ``codes`` (``commandkit.errors.Code``),
    checked on the error the command's boundary reported when it runs in this process (its
    wording may change); one of ``words`` on its line when it runs as another process (fairseq's
    commands), whose error is seen only as that line."""

    codes: Tuple[Code, ...]
    words: Tuple[str, ...]

    def also(self, *words: str, codes: Tuple[Code, ...] = ()) -> Kind:
        """This kind, said also by these words (or codes)."""
        return Kind(self.codes + codes, self.words + words)


Fragment = Union[str, Tuple[str, ...], Kind]

NOT_FOUND = Kind((Code.NOT_FOUND,), ("not found", "no such", "does not exist", "missing", "not exist"))
DIRECTORY = Kind((Code.IS_DIRECTORY, Code.CANNOT_WRITE), ("directory",))  # a folder where a file is read or written
UTF8 = Kind((Code.NOT_UTF8,), ("utf-8", "utf8"))
LINES = Kind((Code.LINE_COUNT,), ("lines", "line count", "sentences"))
EMPTY = Kind((Code.EMPTY, Code.LINE_COUNT), ("empty", "lines", "no records", "no sentences", "nothing", "0 "))
MUST = Kind(
    (Code.OPTION_VALUE,),
    ("must", "invalid", "out of range", ">=", "<=", "at least", "positive", "not allowed", "between", "need"),
)
DIRECTORY_OR_FILE = Kind((Code.CANNOT_WRITE,), ("directory", "is a file", "not a dir"))
MODEL_MISSING = Kind((Code.MODEL,), (*NOT_FOUND.words, "download", "get it"))  # a model to download
FORMAT = Kind((Code.FORMAT,), ("not json", "not a", "expected", "malformed", "bad", "not valid"))
MISMATCH = Kind((Code.MISMATCH,), ("differ", "not the same", "another", "other", "not of"))
MODEL = Kind((Code.MODEL,), ("checkpoint", "model"))  # a model of another kind, or unusable
CONFLICT = Kind((Code.OPTIONS_CONFLICT,), ("with", "not both", "only", "goes"))
TOO_LONG = Kind((Code.TOO_LONG,), ("positions", "longer", "too long"))
IS_INPUT = Kind((Code.OUTPUT_IS_INPUT,), ("input", "same file", "replace", "both"))
NOT_GIVEN = Kind((Code.OPTION_MISSING,), ("not given", "needs", "give", "without"))


def at_line(name: str, n: int) -> Tuple[str, ...]:
    return (f"{name}:{n}", f"line {n}", f"sentence {n}")


@dataclass
class Case:
    id: str
    build: Callable[[Ctx], None]
    status: int = 1


class Ctx:
    """One case's world: its directories, command line and expectations."""

    def __init__(self, case: Case, w, root: Path):
        self.case, self.w = case, w
        self.status = case.status
        self.inp, self.out = root / "in", root / "out"
        self.inp.mkdir()
        self.out.mkdir()
        self.command = ""
        self.argv: List[str] = []
        self.expect: List[Fragment] = []
        self.absent: List[str] = []
        self.unchanged: List[str] = []
        self.allow_new: List[str] = []
        self.wait_for = ""

    # ------------------------------------------------------------------ paths
    def o(self, name: str) -> str:
        return str(self.out / name)

    def write(self, name: str, content: Union[str, bytes]) -> str:
        p = self.inp / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
        return str(p)

    def write_lines(self, name: str, lines: Sequence[str]) -> str:
        return self.write(name, "".join(line + "\n" for line in lines))

    def missing(self, name: str) -> str:
        return str(self.inp / name)

    def mkdir(self, name: str) -> str:
        p = self.inp / name
        p.mkdir(parents=True)
        return str(p)

    def latin1(self, name: str, original: str, line: int = 2) -> str:
        """``original`` with a Latin-1 (not UTF-8) word added to line ``line``."""
        lines = Path(original).read_bytes().split(b"\n")
        lines[line - 1] = lines[line - 1] + " caf\xe9".encode("latin-1")
        return self.write(name, b"\n".join(lines))

    def existing_dir_output(self, name: str = "odir") -> str:
        p = self.out / name
        p.mkdir()
        return str(p)

    def under_file(self, name: str) -> str:
        """An output path below an existing FILE ``out/afile``."""
        (self.out / "afile").write_text("I am a file\n")
        return str(self.out / "afile" / name)

    # ------------------------------------------------------------------ argv
    def set(self, flag: str, *values: str) -> None:
        """Give ``flag`` these values (added when absent; all its old values replaced)."""
        values = [str(v) for v in values]
        if flag in self.argv:
            k = self.argv.index(flag)
            end = k + 1
            while end < len(self.argv) and not self.argv[end].startswith("--"):
                end += 1
            self.argv[k + 1 : end] = values
        else:
            self.argv += [flag, *values]

    def drop(self, flag: str) -> None:
        k = self.argv.index(flag)
        end = k + 1
        while end < len(self.argv) and not self.argv[end].startswith("--"):
            end += 1
        del self.argv[k:end]

    def value(self, flag: str) -> str:
        return self.argv[self.argv.index(flag) + 1]


def lines_of(path: str) -> List[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def write_big_input(raw, directory: Path, reps: int = 5):
    """The tiny training split repeated: large enough to interrupt cxmi in the middle."""
    src, ref, ids = ((Path(raw) / f"train.{x}").read_text().splitlines() for x in ("en", "fr", "docids"))
    paths = []
    for ext, lines in (
        ("en", src * reps),
        ("fr", ref * reps),
        ("docids", [f"r{k}-{d}" for k in range(reps) for d in ids]),
    ):
        paths.append(directory / f"big.{ext}")
        paths[-1].write_text("".join(line + "\n" for line in lines))
    return paths


CASES: List[Case] = []


def add(cid: str, base: Callable[[Ctx], None], mutate: Callable[[Ctx], Sequence[Fragment]], status: int = 1):
    def build(c: Ctx) -> None:
        base(c)
        c.expect = list(mutate(c))

    CASES.append(Case(cid, build, status))


def slug(flag: str) -> str:
    return flag.strip("-").replace("-", "_")


def bad_file(c: Ctx, flag: str, original: str, kind: str, ext: str = ".txt") -> List[Fragment]:
    """Replace the file given with ``flag`` by a missing file, a directory, an empty file or a
    Latin-1 copy of ``original``; the fragments the error must hold."""
    name = f"{kind}_{slug(flag)}{ext}"
    if kind == "missing":
        c.set(flag, c.missing(name))
        return [(name, flag), NOT_FOUND]
    if kind == "dir":
        c.set(flag, c.mkdir(name))
        return [(name, flag), DIRECTORY]
    if kind == "empty":
        c.set(flag, c.write(name, ""))
        return [(name, flag), EMPTY]
    if kind == "latin1":
        c.set(flag, c.latin1(name, original, 2))
        return [(name, flag), UTF8, at_line(name, 2)]
    raise ValueError(kind)


def file_cases(
    prefix: str,
    base,
    flag: str,
    original: Callable[[object], str],
    kinds=("missing", "dir", "empty", "latin1"),
    ext: str = ".txt",
):
    for kind in kinds:
        add(
            f"{prefix}-{slug(flag).replace('_', '-')}-{kind}",
            base,
            lambda c, kind=kind: bad_file(c, flag, original(c.w), kind, ext),
        )


def edited(c: Ctx, flag: str, name: str, edit: Callable[[List[str]], List[str]], start: str | None = None) -> str:
    """``flag``'s current file (or ``start``), copied to ``name`` with its lines edited; set as
    the value of ``flag``."""
    path = c.write_lines(name, edit(lines_of(start or c.value(flag))))
    c.set(flag, path)
    return name


def do(action: Callable[[Ctx], object], *fragments: Fragment):
    """A mutation: ``action(c)``; the error must hold ``fragments``."""

    def mutate(c: Ctx) -> List[Fragment]:
        action(c)
        return list(fragments)

    return mutate


def opt(flag: str, value, *fragments: Fragment):
    """A mutation: give ``flag`` the value ``value`` (or ``value(c)``); the error must hold
    ``fragments``."""
    return do(lambda c: c.set(flag, value(c) if callable(value) else value), *fragments)


def option_cases(prefix: str, base, values: Sequence[Tuple[str, str]]):
    """Values of the right type but out of range: exit 1 and an error naming the option."""
    for flag, value in values:
        word = {"-": "neg", "n": "nan", "i": "inf"}.get(value[0], value.replace("/", "of").replace(".", "_"))
        add(f"{prefix}-{slug(flag).replace('_', '-')}-{word}", base, opt(flag, value, flag, MUST))


def output_cases(prefix: str, base, flag: str, name: str, directory_output: bool = False):
    """An output that is an existing directory, and one below an existing file."""
    if not directory_output:
        add(
            f"{prefix}-{slug(flag).replace('_', '-')}-is-a-directory",
            base,
            opt(flag, lambda c: c.existing_dir_output(), "odir", DIRECTORY),
        )
    else:  # a directory output that is an existing file

        def is_file(c):
            (c.out / "afile").write_text("I am a file\n")
            c.set(flag, c.o("afile"))
            return ["afile", DIRECTORY_OR_FILE]

        add(f"{prefix}-{slug(flag).replace('_', '-')}-is-a-file", base, is_file)
    add(
        f"{prefix}-{slug(flag).replace('_', '-')}-under-a-file",
        base,
        opt(flag, lambda c: c.under_file(name), "afile", DIRECTORY_OR_FILE),
    )


def drop_last(lines):
    return lines[:-1]


def add_line(lines):
    return [*lines, lines[-1]]


def blank_line(k):
    def edit(lines):
        lines = list(lines)
        lines[k - 1] = ""
        return lines

    return edit


def overlong_line(k, word):
    def edit(lines):
        lines = list(lines)
        lines[k - 1] = " ".join([word] * 3000)
        return lines

    return edit


def documents_jsonl(c: Ctx, name: str = "docs.jsonl", edit=None, ids=None, texts=None) -> str:
    """The references (or ``texts``, with their docids ``ids``) joined per document as a JSONL
    document-level output (``edit`` changes the records)."""
    ids, ref = lines_of(ids or c.w.ids), lines_of(texts or c.w.ref)
    records: List[dict] = []
    for doc_id, text in zip(ids, ref, strict=True):
        if records and records[-1]["doc"] == doc_id:
            records[-1]["text"] += " " + text
        else:
            records.append({"doc": doc_id, "text": text})
    if edit:
        records = edit(records)
    return c.write_lines(name, [json.dumps(r, ensure_ascii=False) for r in records])


def renamed_second(records):
    records[1]["doc"] = "no-such-document"
    return records
