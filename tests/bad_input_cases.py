"""The cases of the bad-input matrix (tests/test_bad_input_matrix.py).

A case is an id (``<command>-<what is wrong>``) and a ``build(c)`` that fills a ``Ctx``: the
command line (``c.argv``), the fragments the error line must hold (``c.expect``: a string, or a
tuple of alternatives), the exit status, the outputs that must not exist, and the files whose
content must not change. Each case writes its bad inputs under ``c.inp`` and its outputs go
under ``c.out``; both must be exactly as before when the command has failed.

Expected behaviour comes from the project's rule (README "Errors"), not from today's code.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Sequence, Tuple, Union

from tests.helpers import USER_DIR

Fragment = Union[str, Tuple[str, ...]]

# key words (any of them)
NOT_FOUND = ("not found", "no such", "does not exist", "missing", "not exist")
DIRECTORY = ("directory",)
UTF8 = ("utf-8", "utf8")
LINES = ("lines", "line count", "sentences")
EMPTY = ("empty", "lines", "no records", "no sentences", "nothing", "0 ")
MUST = ("must", "invalid", "out of range", ">=", "<=", "at least", "positive", "not allowed", "between", "need")
DIRECTORY_OR_FILE = ("directory", "is a file", "not a dir")


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


# ============================================================================ contextual-mt translate
def translate_command(c: Ctx) -> None:
    translate_command_with(c, c.w.ckpt)


def translate_command_with(c: Ctx, checkpoint: str) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = [
        "translate",
        "--path",
        checkpoint,
        "--source",
        w.src,
        "--docids",
        w.ids,
        "--output",
        c.o("hyp.fr"),
        "--cpu",
        "--quiet",
        "--beam",
        "2",
    ]
    c.absent = [c.o("hyp.fr")]


file_cases("translate", translate_command, "--source", lambda w: w.src, ext=".en")
file_cases("translate", translate_command, "--docids", lambda w: w.ids, ext=".docids")
file_cases(
    "translate",
    translate_command,
    "--gold-target-context",
    lambda w: w.ref,
    kinds=("missing", "dir", "latin1"),
    ext=".fr",
)
add(
    "translate-docids-blank-line",
    translate_command,
    lambda c: [edited(c, "--docids", "blank.docids", blank_line(3)), at_line("blank.docids", 3)],
)
add(
    "translate-docids-fewer-lines",
    translate_command,
    lambda c: [edited(c, "--docids", "short.docids", drop_last), LINES],
)
add("translate-docids-more-lines", translate_command, lambda c: [edited(c, "--docids", "long.docids", add_line), LINES])
add(
    "translate-gold-target-context-fewer-lines",
    translate_command,
    lambda c: [edited(c, "--gold-target-context", "short.fr", drop_last, start=c.w.ref), LINES],
)
add(
    "translate-source-overlong-line",
    translate_command,
    lambda c: [edited(c, "--source", "long_line.en", overlong_line(3, "cat")), at_line("long_line.en", 3)],
)
add(
    "translate-path-missing",
    translate_command,
    opt("--path", lambda c: c.missing("nothere.pt"), ("nothere.pt", "--path"), NOT_FOUND),
)
add(
    "translate-path-directory",
    translate_command,
    opt("--path", lambda c: c.mkdir("ckdir.pt"), ("ckdir.pt", "--path"), DIRECTORY),
)
add(
    "translate-path-text-file",
    translate_command,
    opt("--path", lambda c: c.write("notackpt.pt", "hello\n"), ("notackpt.pt", "--path"), "checkpoint"),
)
add(
    "translate-path-empty-file",
    translate_command,
    opt("--path", lambda c: c.write("emptyckpt.pt", ""), ("emptyckpt.pt", "--path"), ("checkpoint", "empty")),
)
add(
    "translate-path-stock-translation-checkpoint",
    translate_command,
    opt("--path", lambda c: c.w.ckpt_stock, ("stock_translation.pt", "--path"), ("document_translation", "task")),
)
add(
    "translate-spm-not-a-model",
    translate_command,
    opt("--spm", lambda c: c.write("fake.model", "not a model\n"), ("fake.model", "--spm"), "sentencepiece"),
)
add(
    "translate-spm-missing",
    translate_command,
    opt("--spm", lambda c: c.missing("nothere.model"), ("nothere.model", "--spm"), NOT_FOUND),
)
add(
    "translate-spm-other-dictionary",
    translate_command,
    opt("--spm", lambda c: c.w.other_spm, ("other_spm.model", "--spm"), ("dictionary", "match")),
)
add(
    "translate-data-missing",
    translate_command,
    opt("--data", lambda c: c.missing("nodata"), ("nodata", "--data"), NOT_FOUND),
)
add(
    "translate-data-without-dictionaries",
    translate_command,
    opt("--data", lambda c: c.mkdir("nodicts"), "dict", NOT_FOUND),
)
option_cases(
    "translate",
    translate_command,
    [
        ("--beam", "0"),
        ("--beam", "-1"),
        ("--lenpen", "nan"),
        ("--lenpen", "inf"),
        ("--max-len-a", "nan"),
        ("--max-len-a", "inf"),
        ("--max-len-a", "-1"),
        ("--max-len-b", "-1"),
        ("--batch-size", "0"),
        ("--batch-size", "-2"),
        ("--max-tokens", "0"),
        ("--max-tokens", "-5"),
        ("--source-context-size", "-1"),
        ("--target-context-size", "-1"),
    ],
)
output_cases("translate", translate_command, "--output", "hyp.fr")

# --unit document (a document, or chunk of whole sentences, in one generation): --hf-model only
add(
    "translate-unit-document-with-path",
    translate_command,
    opt("--unit", "document", "--unit document", "--hf-model", "trained on sentences"),
)
add(
    "translate-unit-unknown",
    translate_command,
    opt("--unit", "paragraph", "--unit paragraph", "sentence, document"),
)
add(
    "translate-max-source-tokens-without-unit-document",
    translate_command,
    opt("--max-source-tokens", "50", "--max-source-tokens", "--unit document"),
)
add(
    "translate-overwrite-without-unit-document",
    translate_command,
    do(lambda c: c.argv.append("--overwrite"), "--overwrite", "--unit document"),
)


def translate_documents_command(c: Ctx) -> None:
    """translate --unit document with the tiny Hugging Face Marian."""
    translate_command(c)
    c.set("--hf-model", c.w.marian)
    c.drop("--path")
    c.set("--unit", "document")
    c.set("--max-len-b", "6")
    c.set("--output", c.o("docs.jsonl"))
    c.absent = [c.o("docs.jsonl"), c.o("docs.jsonl.partial")]


add(
    "translate-unit-document-sentence-over-budget",
    translate_documents_command,
    lambda c: [
        edited(c, "--source", "long_line.en", overlong_line(3, "cat"), start=c.w.src),
        at_line("long_line.en", 3),
        "--max-source-tokens",
    ],
)
add(
    "translate-unit-document-sentence-over-max-source-tokens",
    translate_documents_command,
    opt("--max-source-tokens", "2", at_line("test.en", 1), "more than --max-source-tokens (2)"),
)
add(
    "translate-unit-document-decoding-parallel",
    translate_documents_command,
    opt("--decoding", "parallel", "--decoding parallel", "--unit sentence"),
)
add(
    "translate-unit-document-no-room-for-a-source",
    translate_documents_command,
    opt("--max-len-b", "200", "--max-len-b 200", "positions"),
)
option_cases("translate", translate_documents_command, [("--max-source-tokens", "0")])


def translate_untrained_command(c: Ctx) -> None:
    """translate with a checkpoint that is not there: an option that is wrong fails before it is looked for."""
    translate_command_with(c, c.missing("model.pt"))


# past torch's C int (it raised ValueError "Overflow when unpacking long"), and past any machine
option_cases("translate", translate_untrained_command, [("--threads", "99999999999"), ("--threads", "3000000000")])


# ============================================================================ contextual-mt score
def score_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = ["score", "--hyp", w.hyp, "--ref", w.ref, "--docids", w.ids, "--output", c.o("scores.json")]
    c.absent = [c.o("scores.json")]


file_cases("score", score_command, "--hyp", lambda w: w.hyp, ext=".fr")
file_cases("score", score_command, "--ref", lambda w: w.ref, kinds=("missing", "dir", "latin1"), ext=".fr")
file_cases("score", score_command, "--docids", lambda w: w.ids, ext=".docids")
file_cases("score", score_command, "--source", lambda w: w.src, kinds=("missing", "latin1"), ext=".en")


def score_both_empty(c):
    c.drop("--docids")
    c.set("--hyp", c.write("empty_hyp.fr", ""))
    c.set("--ref", c.write("empty_ref.fr", ""))
    return [("empty_hyp.fr", "empty_ref.fr"), ("empty", "no lines", "0 lines", "nothing")]


add("score-hyp-and-ref-empty", score_command, score_both_empty)
option_cases("score", score_command, [("--doc-comet-context", "0")])
add("score-hyp-fewer-lines", score_command, lambda c: [edited(c, "--hyp", "short.fr", drop_last), LINES])
add("score-hyp-more-lines", score_command, lambda c: [edited(c, "--hyp", "long.fr", add_line), LINES])
add("score-docids-fewer-lines", score_command, lambda c: [edited(c, "--docids", "short.docids", drop_last), LINES])
add(
    "score-docids-blank-line",
    score_command,
    lambda c: [edited(c, "--docids", "blank.docids", blank_line(2)), at_line("blank.docids", 2)],
)
add(
    "score-source-fewer-lines",
    score_command,
    lambda c: [edited(c, "--source", "short.en", drop_last, start=c.w.src), LINES],
)
add("score-comet-model-without-source", score_command, opt("--comet-model", "Unbabel/wmt22-comet-da", "--source"))


def with_comet(model="Unbabel/wmt22-comet-da"):
    def action(c):
        c.set("--comet-model", model(c) if callable(model) else model)
        c.set("--source", c.w.src)

    return action


add(
    "score-comet-batch-size-0",
    score_command,
    do(lambda c: (with_comet()(c), c.set("--comet-batch-size", "0")), "--comet-batch-size", MUST),
)
add(
    "score-comet-batch-size-neg",
    score_command,
    do(lambda c: (with_comet()(c), c.set("--comet-batch-size", "-4")), "--comet-batch-size", MUST),
)
# a local COMET model that is not there fails before unbabel-comet is imported or the network tried
add(
    "score-comet-model-missing-path",
    score_command,
    do(with_comet(lambda c: c.missing("nothere.ckpt")), "nothere.ckpt", NOT_FOUND),
)
add(
    "score-comet-model-missing-folder",
    score_command,
    do(with_comet(lambda c: c.missing("models/nothere")), "nothere", NOT_FOUND),
)
add(
    "score-comet-model-folder-without-checkpoint",
    score_command,
    do(with_comet(lambda c: c.mkdir("empty_model")), "empty_model", "checkpoints/model.ckpt"),
)


def corrupt_comet_model(c: Ctx) -> str:
    """A COMET model folder whose checkpoint is not one (torch's error runs over several lines)."""
    c.write("bad_model/hparams.yaml", "class_identifier: regression_metric\n")
    c.write("bad_model/checkpoints/model.ckpt", b"PK\x03\x04 not a checkpoint" * 8)
    return str(c.inp / "bad_model")


add(
    "score-comet-model-corrupt-checkpoint",
    score_command,
    do(with_comet(corrupt_comet_model), "model.ckpt", ("cannot load", "checkpoint")),
)


def truncated_comet_model(c: Ctx) -> str:
    """A COMET model folder whose checkpoint, a real torch archive, was cut short (a download or
    copy interrupted): torch says "[Errno 22] Invalid argument", which tells a user nothing."""
    import io

    import torch

    buffer = io.BytesIO()
    torch.save({"state_dict": {"w": torch.arange(4096.0)}, "hyper_parameters": {}}, buffer)
    c.write("cut_model/hparams.yaml", "class_identifier: regression_metric\n")
    c.write("cut_model/checkpoints/model.ckpt", buffer.getvalue()[: len(buffer.getvalue()) // 2])
    return str(c.inp / "cut_model")


add(
    "score-comet-model-checkpoint-cut-short",
    score_command,
    do(with_comet(truncated_comet_model), "model.ckpt", "damaged", "fetch the model again"),
)
output_cases("score", score_command, "--output", "scores.json")


# ---- a document-level --hyp (contextual_mt.system_outputs, docalign): checked before any model loads
def document_output(c: Ctx, name: str, lines_path: str, ids_path: str, jsonl: bool = True) -> str:
    """``lines_path`` joined per document of ``ids_path``: JSONL records, or one document per line."""
    from commandkit.documents import document_spans

    lines, ids = lines_of(lines_path), lines_of(ids_path)
    texts = [(ids[a], " ".join(lines[a:b])) for a, b in document_spans(ids)]
    rows = [json.dumps({"doc": d, "text": t}, ensure_ascii=False) if jsonl else t for d, t in texts]
    return c.write_lines(name, rows)


def documents_hyp(c: Ctx, name: str = "docs.jsonl", jsonl: bool = True) -> str:
    """--hyp: a document-level output of the command's own line-aligned --hyp."""
    flag = "--hyp"
    c.set(flag, document_output(c, name, c.value(flag), c.value("--docids"), jsonl))
    return name


add(
    "score-hyp-documents-without-docids",
    score_command,
    lambda c: [documents_hyp(c), c.drop("--docids"), "--docids"][::2],
)
add(
    "score-hyp-document-per-line-without-docids",
    score_command,
    lambda c: [documents_hyp(c, "docs.fr", jsonl=False), c.drop("--docids"), "--docids"][::2],
)


def unknown_document(c: Ctx) -> List[Fragment]:
    name = documents_hyp(c)
    path = Path(c.value("--hyp"))
    rows = path.read_text(encoding="utf-8").splitlines()
    rows[1] = json.dumps({"doc": "no such doc", "text": "Bonjour."})
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return [f"{name}:2", "no such doc", "not in"]


add("score-hyp-documents-unknown-document", score_command, unknown_document)
add(
    "score-comet-model-missing-checked-before-a-document-hyp-is-aligned",
    score_command,  # the hyp is wrong too: the option is the first thing checked
    lambda c: [
        documents_hyp(c, "docs.fr", jsonl=False),
        edited(c, "--hyp", "docs.fr", drop_last, start=c.value("--hyp")),
        with_comet(lambda c: c.missing("nothere.ckpt"))(c),
        "nothere.ckpt",
        NOT_FOUND,
    ][3:],
)


def json_objects(c: Ctx, flag: str, name: str) -> str:
    """``flag``'s line-aligned file as JSON objects, one per line, without "doc" (an API's
    records): a document-level output with bad records, never lines of text to score."""
    rows = [{"id": k, "translation": t} for k, t in enumerate(lines_of(c.value(flag)))]
    c.set(flag, c.write_lines(name, [json.dumps(r, ensure_ascii=False) for r in rows]))
    return name


add(
    "score-hyp-json-objects-without-doc",
    score_command,
    lambda c: [json_objects(c, "--hyp", "objects.jsonl"), at_line("objects.jsonl", 1), '"doc"'][1:],
)
add(
    "score-hyp-json-objects-without-doc-or-docids",
    score_command,
    lambda c: [json_objects(c, "--hyp", "objects.jsonl"), c.drop("--docids"), "objects.jsonl", "--docids"][2:],
)
add(
    "score-pivot-fewer-lines",
    score_command,
    lambda c: [documents_hyp(c), edited(c, "--pivot", "short_pivot.fr", drop_last, start=c.w.ref), "--pivot", LINES][
        1:
    ],
)
option_cases("score", score_command, [("--band", "0"), ("--band", "-3")])


def first_record_cut_off(c: Ctx, flag: str = "--hyp", name: str = "cut.jsonl") -> str:
    """``flag``'s file as JSONL document records, the first cut off at its start (a copy that lost
    its first bytes): JSONL all the same, never one document per line (issue 50)."""
    from commandkit.documents import document_spans

    lines, ids = lines_of(c.value(flag)), lines_of(c.value("--docids"))
    rows = [
        json.dumps({"doc": ids[a], "text": " ".join(lines[a:b])}, ensure_ascii=False) for a, b in document_spans(ids)
    ]
    rows[0] = rows[0][len('{"doc": ') :]
    c.set(flag, c.write_lines(name, rows))
    return name


def cut_to_the_documents(c: Ctx, flag: str = "--hyp", name: str = "short.fr") -> str:
    """``flag``'s line-aligned file cut to as many lines as there are documents (issue 50: scored
    as one document per line, BLEU 0.24 and exit 0)."""
    from commandkit.documents import document_spans

    count = len(document_spans(lines_of(c.value("--docids"))))
    return edited(c, flag, name, lambda lines: lines[:count])


def control_character(c: Ctx, flag: str = "--hyp", name: str = "nul.jsonl") -> str:
    """The second JSONL record's text with a NUL written as a JSON escape (\\u0000)."""
    from commandkit.documents import document_spans

    lines, ids = lines_of(c.value(flag)), lines_of(c.value("--docids"))
    rows = [{"doc": ids[a], "text": " ".join(lines[a:b])} for a, b in document_spans(ids)]
    rows[1]["text"] = "\u0000" + rows[1]["text"]
    c.set(flag, c.write_lines(name, [json.dumps(r) for r in rows]))
    return name


add(
    "score-hyp-jsonl-first-record-cut-off",
    score_command,
    lambda c: [first_record_cut_off(c), at_line("cut.jsonl", 1), "JSON record"][1:],
)
add(
    "score-hyp-line-aligned-cut-to-the-number-of-documents",
    score_command,
    lambda c: [cut_to_the_documents(c), "short.fr", "lines but", "one document per line", "--hyp-format"][1:],
)
add(
    "score-hyp-jsonl-text-with-a-nul-escape",
    score_command,
    lambda c: [control_character(c), at_line("nul.jsonl", 2), "control character"][1:],
)
add("score-hyp-format-unknown", score_command, opt("--hyp-format", "xml", "--hyp-format xml", "expected one of"))
add(
    "score-hyp-format-lines-of-a-truncated-file",
    score_command,
    lambda c: [cut_to_the_documents(c), c.set("--hyp-format", "lines"), "short.fr", "lines but"][2:],
)
add(
    "score-hyp-format-lines-of-jsonl-records",
    score_command,
    lambda c: [documents_hyp(c), c.set("--hyp-format", "lines"), at_line("docs.jsonl", 1), "JSON record"][2:],
)
add(
    "score-hyp-format-documents-without-docids",
    score_command,
    lambda c: [c.drop("--docids"), c.set("--hyp-format", "documents"), "--hyp-format documents", "--docids"][2:],
)
add(
    "score-segmenter-not-installed",
    score_command,
    lambda c: [documents_hyp(c), c.set("--segmenter", "xx_nothere_sm"), "xx_nothere_sm", "spacy download"][2:],
)
add(
    "score-alignment-output-of-a-line-aligned-hyp",
    score_command,
    opt("--alignment-output", lambda c: c.o("align.jsonl"), "--alignment-output", "line-aligned"),
)
output_cases("score", score_command, "--alignment-output", "align.jsonl")


# ============================================================================ contextual-mt cxmi
def cxmi_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = [
        "cxmi",
        "--path",
        w.ckpt,
        "--source",
        w.src,
        "--reference",
        w.ref,
        "--docids",
        w.ids,
        "--output",
        c.o("p.jsonl"),
        "--cpu",
        "--quiet",
    ]
    c.absent = [c.o("p.jsonl"), c.o("p.summary.json"), c.o("p.jsonl.partial")]


file_cases("cxmi", cxmi_command, "--source", lambda w: w.src, kinds=("missing", "dir", "latin1"), ext=".en")
file_cases("cxmi", cxmi_command, "--reference", lambda w: w.ref, ext=".fr")
file_cases("cxmi", cxmi_command, "--docids", lambda w: w.ids, kinds=("missing", "empty", "latin1"), ext=".docids")
add("cxmi-reference-fewer-lines", cxmi_command, lambda c: [edited(c, "--reference", "short.fr", drop_last), LINES])
add("cxmi-reference-more-lines", cxmi_command, lambda c: [edited(c, "--reference", "long.fr", add_line), LINES])
add("cxmi-docids-fewer-lines", cxmi_command, lambda c: [edited(c, "--docids", "short.docids", drop_last), LINES])
add(
    "cxmi-docids-blank-line",
    cxmi_command,
    lambda c: [edited(c, "--docids", "blank.docids", blank_line(2)), at_line("blank.docids", 2)],
)
add(
    "cxmi-reference-blank-line",
    cxmi_command,
    lambda c: [edited(c, "--reference", "blank.fr", blank_line(3)), at_line("blank.fr", 3)],
)
add(
    "cxmi-source-blank-line",
    cxmi_command,
    lambda c: [edited(c, "--source", "blank.en", blank_line(3)), at_line("blank.en", 3), "empty source"],
)
add(
    "cxmi-source-overlong-line",
    cxmi_command,
    lambda c: [edited(c, "--source", "long_line.en", overlong_line(2, "cat")), at_line("long_line.en", 2)],
)
add(
    "cxmi-path-missing",
    cxmi_command,
    opt("--path", lambda c: c.missing("nothere.pt"), ("nothere.pt", "--path"), NOT_FOUND),
)
add(
    "cxmi-path-text-file",
    cxmi_command,
    opt("--path", lambda c: c.write("notackpt.pt", "hello\n"), ("notackpt.pt", "--path"), "checkpoint"),
)
add(
    "cxmi-path-stock-translation-checkpoint",
    cxmi_command,
    opt("--path", lambda c: c.w.ckpt_stock, ("stock_translation.pt", "--path"), ("document_translation", "task")),
)
add(
    "cxmi-path-sentence-level-checkpoint",
    cxmi_command,
    opt("--path", lambda c: c.w.ckpt_sent, ("sentence_level.pt", "--path"), "context"),
)
add(
    "cxmi-spm-not-a-model",
    cxmi_command,
    opt("--spm", lambda c: c.write("fake.model", "not a model\n"), ("fake.model", "--spm"), "sentencepiece"),
)
add(
    "cxmi-spm-other-dictionary",
    cxmi_command,
    opt("--spm", lambda c: c.w.other_spm, ("other_spm.model", "--spm"), ("dictionary", "match")),
)
add("cxmi-data-without-dictionaries", cxmi_command, opt("--data", lambda c: c.mkdir("nodicts"), "dict", NOT_FOUND))
option_cases(
    "cxmi",
    cxmi_command,
    [("--batch-size", "0"), ("--batch-size", "-1"), ("--source-context-size", "-1"), ("--target-context-size", "-1")],
)
for shard, word in (
    ("3/2", "3of2"),
    ("2/2", "2of2"),
    ("x", "x"),
    ("1/0", "1of0"),
    ("1/2/3", "three-parts"),
    ("", "empty"),
):
    add(f"cxmi-shard-{word}", cxmi_command, opt("--shard", shard, "--shard", (*MUST, "i/n")))
add("cxmi-shard-negative", cxmi_command, do(lambda c: c.argv.append("--shard=-1/2"), "--shard", (*MUST, "i/n")))


def single_document(c):
    c.set("--docids", c.write_lines("one_doc.docids", ["d1"] * len(lines_of(c.w.src))))
    c.argv.append("--random-context")
    return ["--random-context", "document"]


add("cxmi-random-context-single-document", cxmi_command, single_document)


def resume_from(c, records):
    partial = c.o("p.jsonl.partial")
    Path(partial).write_text("".join(json.dumps(r) + "\n" for r in records))
    c.unchanged = [partial]
    c.absent = [c.o("p.jsonl"), c.o("p.summary.json")]
    return ["--overwrite"]


add(
    "cxmi-resume-partial-of-finished-run-in-other-log-base",
    cxmi_command,
    lambda c: resume_from(c, [json.loads(x) for x in lines_of(c.w.pcxmi_bits)][:3]),
)


def resume_genuine(c, partial_key, lines=None):
    """OUTPUT.partial of an interrupted run on the large input (fixture ``mx_partials``); this
    run scores the large input (``lines`` None) or its first ``lines`` lines."""
    w = c.w
    for flag, key, ext in (
        ("--source", "big_src", "en"),
        ("--reference", "big_ref", "fr"),
        ("--docids", "big_ids", "docids"),
    ):
        path = getattr(w, key)
        if lines is not None:
            path = c.write_lines(f"prefix.{ext}", lines_of(path)[:lines])
        c.set(flag, path)
    partial = c.o("p.jsonl.partial")
    shutil.copy(getattr(w, partial_key), partial)
    c.unchanged = [partial]
    c.absent = [c.o("p.jsonl"), c.o("p.summary.json")]
    return ["--overwrite"]


add("cxmi-resume-interrupted-partial-of-other-log-base", cxmi_command, lambda c: resume_genuine(c, "partial_bits"))


def prefix_lines(c):
    """The first two documents of the large input."""
    ids = lines_of(c.w.big_ids)
    second = next(i for i, d in enumerate(ids) if d != ids[0])
    return next(i for i in range(second, len(ids)) if ids[i] != ids[second])


add(
    "cxmi-resume-interrupted-partial-of-larger-input",
    cxmi_command,
    lambda c: resume_genuine(c, "partial_nats", lines=prefix_lines(c)),
)


def preexisting(c, name, directory=True):
    """A secondary output path that already exists as a directory (or a file): it must stay."""
    p = c.out / name
    p.mkdir() if directory else p.write_text("a file\n")
    c.absent = [a for a in c.absent if a != str(p)]


add(
    "cxmi-summary-path-is-a-directory",
    cxmi_command,
    do(lambda c: preexisting(c, "p.summary.json"), "p.summary.json", DIRECTORY),
)
output_cases("cxmi", cxmi_command, "--output", "p.jsonl")


# ============================================================================ contextual-mt attribute
def attribute_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = [
        "attribute",
        "--path",
        w.ckpt,
        "--source",
        w.src,
        "--reference",
        w.ref,
        "--docids",
        w.ids,
        "--output",
        c.o("a.jsonl"),
        "--cpu",
        "--quiet",
    ]
    c.absent = [c.o("a.jsonl"), c.o("a.summary.json"), c.o("a.jsonl.partial")]


file_cases("attribute", attribute_command, "--source", lambda w: w.src, kinds=("missing", "dir", "latin1"), ext=".en")
file_cases("attribute", attribute_command, "--reference", lambda w: w.ref, ext=".fr")
file_cases("attribute", attribute_command, "--docids", lambda w: w.ids, kinds=("missing", "empty"), ext=".docids")
add(
    "attribute-reference-fewer-lines",
    attribute_command,
    lambda c: [edited(c, "--reference", "short.fr", drop_last), LINES],
)
add(
    "attribute-reference-blank-line",
    attribute_command,
    lambda c: [edited(c, "--reference", "blank.fr", blank_line(3)), at_line("blank.fr", 3)],
)
# a blank source was scored (and attributed) as the translation of nothing: refused as cxmi's is
add(
    "attribute-source-blank-line",
    attribute_command,
    lambda c: [edited(c, "--source", "blank.en", blank_line(3)), at_line("blank.en", 3), "empty source"],
)


def translate_blank_source(c):
    c.drop("--reference")
    c.argv.append("--translate")
    return [edited(c, "--source", "blank.en", blank_line(3)), at_line("blank.en", 3), "empty source"]


add("attribute-translate-source-blank-line", attribute_command, translate_blank_source)
add(
    "attribute-path-missing",
    attribute_command,
    opt("--path", lambda c: c.missing("nothere.pt"), ("nothere.pt", "--path"), NOT_FOUND),
)
add(
    "attribute-path-sentence-level-checkpoint",
    attribute_command,
    opt("--path", lambda c: c.w.ckpt_sent, ("sentence_level.pt", "--path"), "context"),
)
add(
    "attribute-context-larger-than-trained",
    attribute_command,
    opt("--target-context-size", "9", "exceed those trained"),
)
add(
    "attribute-reference-and-hypotheses",
    attribute_command,
    do(lambda c: c.set("--hypotheses", c.w.ref), ("not allowed with", "exactly one")),
    status=2,
)
add("attribute-beam-without-translate", attribute_command, opt("--beam", "3", "--beam", "--translate"))
option_cases(
    "attribute",
    attribute_command,
    [("--batch-size", "0"), ("--cue-top-k", "0"), ("--cti-top-k", "-1"), ("--cti-std", "nan"), ("--max-tokens", "0")],
)
for shard, word in (("3/2", "3of2"), ("x", "x")):
    add(f"attribute-shard-{word}", attribute_command, opt("--shard", shard, "--shard", (*MUST, "i/n")))
output_cases("attribute", attribute_command, "--output", "a.jsonl")


def cxmi_interrupted(c):
    """Ctrl-C while scoring a large input: one line, exit 130, no output (the .partial may stay
    for resuming)."""
    src, ref, ids = write_big_input(c.w.raw, c.inp)
    c.set("--source", str(src))
    c.set("--reference", str(ref))
    c.set("--docids", str(ids))
    c.argv += ["--batch-size", "1"]
    c.command = "interrupt"
    c.wait_for = c.o("p.jsonl.partial")
    c.allow_new = ["p.jsonl.partial"]
    c.absent = [c.o("p.jsonl"), c.o("p.summary.json")]
    return ["interrupt"]


add("cxmi-interrupted-by-ctrl-c", cxmi_command, cxmi_interrupted, status=130)


# ============================================================================ contextual-mt contrastive
def voita_set(w, n: int = 6, context: int = 2) -> list:
    """A Voita-format set from the test corpus: each sentence, with up to ``context`` previous
    lines as context, against itself with its last word repeated."""
    src, ref = lines_of(w.src)[:n], lines_of(w.ref)[:n]
    entries = []
    for i in range(n):
        lo = max(0, i - context)
        dst = [ref[i], ref[i] + " " + ref[i].split()[-1]]
        entries.append(
            {
                "src": " _eos ".join(src[lo : i + 1]),
                "dst": [" _eos ".join([*ref[lo:i], d]) for d in dst],
                "true_ind": 0,
                "ctx_dist": 1,
            }
        )
    return entries


def contrastive_command(c: Ctx) -> None:
    c.command = "contextual-mt"
    path = c.write("set.json", json.dumps(voita_set(c.w)))
    c.argv = [
        "contrastive",
        "--format",
        "voita",
        "--input",
        path,
        "--path",
        c.w.ckpt,
        "--output",
        c.o("s.scores"),
        "--summary",
        c.o("s.json"),
        "--cpu",
        "--quiet",
    ]
    c.absent = [c.o("s.scores"), c.o("s.json"), c.o("s.scores.partial")]


def contrastive_entry(name: str, edit: Callable[[list], None], *fragments: Fragment):
    def mutate(c: Ctx) -> List[Fragment]:
        entries = voita_set(c.w)
        edit(entries)
        c.set("--input", c.write(f"{name}.json", json.dumps(entries)))
        return [f"{name}.json", *fragments]

    return mutate


file_cases(
    "contrastive", contrastive_command, "--input", lambda w: w.src, kinds=("missing", "dir", "latin1"), ext=".json"
)
add(
    "contrastive-input-empty",
    contrastive_command,
    opt("--input", lambda c: c.write("empty.json", ""), "empty.json", (*EMPTY, "not JSON")),
)
add(
    "contrastive-input-not-json",
    contrastive_command,
    opt("--input", lambda c: c.write("bad.json", '[{"src": 1,\n'), "bad.json:", "JSON"),
)
add("contrastive-format-unknown", contrastive_command, opt("--format", "xyz", "--format", "unknown"))
add(
    "contrastive-true-ind-out-of-range",
    contrastive_command,
    contrastive_entry("true_ind", lambda e: e[3].update(true_ind=5), "entry 3", "true_ind", "out of range"),
)
add(
    "contrastive-empty-group",
    contrastive_command,
    contrastive_entry("empty_group", lambda e: e[2].update(dst=[]), "entry 2", "empty"),
)
add(
    "contrastive-one-candidate",
    contrastive_command,
    contrastive_entry("one", lambda e: e[1].update(dst=e[1]["dst"][:1]), "entry 1", "1 candidate"),
)
add(
    "contrastive-empty-candidate",
    contrastive_command,
    contrastive_entry("blank", lambda e: e[4]["dst"].__setitem__(1, "a _eos "), "entry 4", "candidate 1", "empty"),
)
add(
    "contrastive-overlong-candidate",
    contrastive_command,
    contrastive_entry(
        "long", lambda e: e[2]["dst"].__setitem__(1, " ".join(["chat"] * 3000)), "entry 2", "candidate 1", "positions"
    ),
)
add(
    "contrastive-contrapro-context-count",
    contrastive_command,
    do(
        lambda c: (
            c.set("--format", "contrapro"),
            c.set(
                "--input",
                c.write(
                    "contrapro.json",
                    json.dumps(
                        [
                            {
                                "src segment": "it is big .",
                                "ref segment": "il est grand .",
                                "ante distance": 1,
                                "errors": [{"contrastive": "elle est grand ."}],
                            }
                        ]
                    ),
                ),
            ),
            c.set(
                "--context-files",
                c.write_lines("cp.text.en", ["it is big ."] * 2),
                c.write_lines("cp.text.de", ["a"] * 2),
                c.write_lines("cp.context.en", ["x"] * 3),
                c.write_lines("cp.context.de", ["y"] * 2),
            ),
        ),
        "context",
        ("multiple", "candidates"),
    ),
)
add(
    "contrastive-scores-wrong-length",
    contrastive_command,
    do(
        lambda c: (
            c.drop("--path"),
            c.drop("--output"),
            c.set("--scores", c.write_lines("short.scores", ["1.0"] * 11)),
        ),
        "short.scores",
        "12 candidates",
    ),
)
add(
    "contrastive-scores-not-a-number",
    contrastive_command,
    do(
        lambda c: (
            c.drop("--path"),
            c.drop("--output"),
            c.set("--scores", c.write_lines("nan.scores", ["1.0"] * 5 + ["x"] + ["1"] * 6)),
        ),
        at_line("nan.scores", 6),
        "number",
    ),
)
add("contrastive-no-path-no-scores", contrastive_command, do(lambda c: c.drop("--path"), "--path", "--scores"))
add(
    "contrastive-path-missing",
    contrastive_command,
    opt("--path", lambda c: c.missing("nothere.pt"), ("nothere.pt", "--path"), NOT_FOUND),
)
add(
    "contrastive-path-stock-translation-checkpoint",
    contrastive_command,
    opt("--path", lambda c: c.w.ckpt_stock, ("stock_translation.pt", "--path"), ("document_translation", "task")),
)
add(
    "contrastive-summary-same-as-output",
    contrastive_command,
    opt("--summary", lambda c: c.value("--output"), "s.scores", ("same", "twice")),
)
add(
    "contrastive-output-overwrites-input",
    contrastive_command,
    opt("--output", lambda c: c.value("--input"), "set.json", ("overwrite", "input")),
)
option_cases(
    "contrastive", contrastive_command, [("--batch-size", "0"), ("--max-tokens", "0"), ("--source-context-size", "-1")]
)
output_cases("contrastive", contrastive_command, "--output", "s.scores")
output_cases("contrastive", contrastive_command, "--summary", "s.json")


# ============================================================================ contextual-mt cxmi-merge
def merge_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = ["cxmi-merge", w.s0, w.s1, "--output", c.o("all.jsonl")]
    c.absent = [c.o("all.jsonl"), c.o("all.summary.json")]


def copy_shard(c, shard, name, records=None, summary=None, with_summary=True):
    """Shard ``shard`` (a path) copied into in/ as ``name``.jsonl; its records and summary
    replaced when given (records as text)."""
    text = Path(shard).read_text(encoding="utf-8") if records is None else records
    path = c.write(f"{name}.jsonl", text)
    if with_summary:
        meta = Path(shard[:-6] + ".summary.json").read_text() if summary is None else summary
        c.write(f"{name}.summary.json", meta)
    return path


def shards(c, *paths):
    c.argv = ["cxmi-merge", *paths, "--output", c.o("all.jsonl")]


add(
    "merge-one-shard-of-two",
    merge_command,
    do(lambda c: shards(c, c.w.s0), "shard", ("missing", "1/2", "of 2", "incomplete", "2 shards", "only")),
)
add(
    "merge-same-shard-twice",
    merge_command,
    do(
        lambda c: shards(c, c.w.s0, c.w.s0),
        "s0.jsonl",
        ("twice", "two", "duplicate", "same", "again", "more than once", "already"),
    ),
)
add(
    "merge-shards-of-different-checkpoints",
    merge_command,
    do(lambda c: shards(c, c.w.s0, c.w.s1_ck1), "s1_ck1", "checkpoint"),
)
add(
    "merge-shards-of-different-context-sizes",
    merge_command,
    do(lambda c: shards(c, c.w.s0, c.w.s1_ctx1), "s1_ctx1", "context"),
)
add(
    "merge-shards-of-different-log-bases",
    merge_command,
    do(lambda c: shards(c, c.w.s0, c.w.s1_bits), "s1_bits", ("log base", "log-base", "unit", "bits", "nats")),
)


add(
    "merge-shards-of-real-and-random-context",
    merge_command,
    do(lambda c: shards(c, c.w.s0, c.w.s1_random), "s1_random", "random"),
)
add(
    "merge-shard-not-json",
    merge_command,
    do(
        lambda c: shards(c, c.w.s0, copy_shard(c, c.w.s1, "garbage", records="this is not json\n")),
        "garbage.jsonl",
        ("json", "record"),
    ),
)
add(
    "merge-shard-without-summary",
    merge_command,
    do(lambda c: shards(c, c.w.s0, copy_shard(c, c.w.s1, "lonely", with_summary=False)), "lonely", "summary"),
)
add(
    "merge-shard-summary-not-json",
    merge_command,
    do(lambda c: shards(c, c.w.s0, copy_shard(c, c.w.s1, "badsum", summary="{not json")), "badsum", "json"),
)
add(
    "merge-shard-missing",
    merge_command,
    do(lambda c: shards(c, c.w.s0, c.missing("nothere.jsonl")), "nothere", NOT_FOUND),
)


def shard_dir(c):
    d = c.mkdir("dirshard.jsonl")
    c.write("dirshard.summary.json", Path(c.w.s1[:-6] + ".summary.json").read_text())
    shards(c, c.w.s0, d)
    return ["dirshard", DIRECTORY]


add("merge-shard-directory", merge_command, shard_dir)
add(
    "merge-shard-empty",
    merge_command,
    do(
        lambda c: shards(c, c.w.s0, copy_shard(c, c.w.s1, "emptyshard", records="")),
        "emptyshard",
        ("empty", "records", "sentences", "lines", "summary"),
    ),
)
add(
    "merge-shard-truncated",
    merge_command,
    do(
        lambda c: shards(
            c, c.w.s0, copy_shard(c, c.w.s1, "truncated", records="".join(x + "\n" for x in lines_of(c.w.s1)[:-1]))
        ),
        "truncated",
        ("records", "sentences", "lines", "summary", "incomplete", "missing"),
    ),
)


def shard_latin1(c):
    path = copy_shard(c, c.w.s1, "latin1shard")
    data = Path(path).read_bytes().replace(b'"reference": "', b'"reference": "caf\xe9 ', 1)
    Path(path).write_bytes(data)
    shards(c, c.w.s0, path)
    return ["latin1shard", UTF8]


add("merge-shard-latin1", merge_command, shard_latin1)
output_cases("merge", merge_command, "--output", "all.jsonl")
add(
    "merge-summary-path-is-a-directory",
    merge_command,
    do(lambda c: preexisting(c, "all.summary.json"), "all.summary.json", DIRECTORY),
)


# ============================================================================ contextual-mt report
def report_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = ["report", w.pcxmi, "--output-dir", c.o("report")]
    c.absent = [c.o("report")]


def pcxmi_file(c, name, content):
    path = c.write(name, content)
    c.argv[1] = path
    return name


add(
    "report-pcxmi-missing",
    report_command,
    do(lambda c: c.argv.__setitem__(1, c.missing("nothere.jsonl")), "nothere.jsonl", NOT_FOUND),
)
add(
    "report-pcxmi-directory",
    report_command,
    do(lambda c: c.argv.__setitem__(1, c.mkdir("dir.jsonl")), "dir.jsonl", DIRECTORY),
)
add("report-pcxmi-empty", report_command, lambda c: [pcxmi_file(c, "empty.jsonl", ""), EMPTY])
add(
    "report-pcxmi-latin1",
    report_command,
    lambda c: [
        pcxmi_file(
            c, "latin1.jsonl", Path(c.w.pcxmi).read_bytes().replace(b'"reference": "', b'"reference": "caf\xe9 ', 1)
        ),
        UTF8,
    ],
)
add(
    "report-pcxmi-not-json",
    report_command,
    lambda c: [
        pcxmi_file(c, "garbage.jsonl", lines_of(c.w.pcxmi)[0] + "\nnot json at all\n"),
        at_line("garbage.jsonl", 2),
    ],
)
add(
    "report-pcxmi-not-pcxmi-records",
    report_command,
    lambda c: [pcxmi_file(c, "other.jsonl", '{"a": 1}\n{"b": 2}\n'), ("record", "p-cxmi", "pcxmi")],
)


def pcxmi_records_edited(name: str, edit: Callable[[List[str]], List[str]]):
    def mutate(c: Ctx) -> List[Fragment]:
        lines = Path(c.w.pcxmi).read_text(encoding="utf-8").splitlines()
        return [f"{pcxmi_file(c, name, ''.join(x + chr(10) for x in edit(lines)))}:"]

    return mutate


def nan_value(lines: List[str]) -> List[str]:
    r = json.loads(lines[1])
    r["token_pcxmi"][0] = float("nan")
    return [lines[0], json.dumps(r), *lines[2:]]


add(
    "report-pcxmi-duplicated-record",
    report_command,
    lambda c: [*pcxmi_records_edited("dup.jsonl", lambda ls: [*ls, ls[0]])(c), "again"],
)
add("report-pcxmi-nan-value", report_command, lambda c: [*pcxmi_records_edited("nan.jsonl", nan_value)(c), "finite"])
add(
    "report-conllu-missing",
    report_command,
    opt("--conllu", lambda c: c.missing("nothere.conllu"), "nothere.conllu", NOT_FOUND),
)


def report_conllu(c, name, edit):
    c.set("--conllu", c.w.ref_conllu)
    return edited(c, "--conllu", name, edit)


def change_form(sentence: int, new: str = "Zzz"):
    def edit(lines):
        out, k = [], 0
        for line in lines:
            if line.startswith("# sent_id"):
                k += 1
            cols = line.split("\t")
            if k == sentence and len(cols) == 10 and cols[0] == "1":
                cols[1] = new
                line = "\t".join(cols)
            out.append(line)
        return out

    return edit


def drop_last_sentence(lines):
    blocks, block = [], []
    for line in lines:
        if line.strip():
            block.append(line)
        elif block:
            blocks.append(block)
            block = []
    if block:
        blocks.append(block)
    return [line for b in blocks[:-1] for line in [*b, ""]]


def nine_columns(lines):
    lines = list(lines)
    k = next(i for i, line in enumerate(lines) if line.count("\t") == 9)
    lines[k] = "\t".join(lines[k].split("\t")[:9])
    return lines


add(
    "report-conllu-does-not-match",
    report_command,
    lambda c: [
        report_conllu(c, "mismatch.conllu", change_form(3)),
        ("match", "differ"),
        ("line 3", "sentence 3", ":3"),
    ],
)
add(
    "report-conllu-fewer-sentences",
    report_command,
    lambda c: [report_conllu(c, "fewer.conllu", drop_last_sentence), (*LINES, "no annotation")],
)
add(
    "report-conllu-malformed",
    report_command,
    lambda c: [report_conllu(c, "malformed.conllu", nine_columns), at_line("malformed.conllu", 3)],
)
add(
    "report-conllu-latin1",
    report_command,
    opt(
        "--conllu",
        lambda c: c.latin1("latin1.conllu", c.w.ref_conllu, 3),
        "latin1.conllu",
        UTF8,
        at_line("latin1.conllu", 3),
    ),
)
add(
    "report-conllu-with-stanza-lang",
    report_command,
    do(lambda c: (c.set("--conllu", c.w.ref_conllu), c.set("--stanza-lang", "fr")), "--conllu", "--stanza-lang"),
)
add(
    "report-stanza-model-missing",
    report_command,
    do(
        lambda c: (c.set("--stanza-lang", "fr"), c.set("--stanza-dir", c.mkdir("no_stanza"))),
        "stanza",
        (*NOT_FOUND, "download", "get it"),
    ),
)
add(
    "report-tags-of-another-reference",
    report_command,
    opt("--tags", lambda c: c.w.d_tags, "reference.tags.json", ("match", "reference", "differ", "another")),
)
add(
    "report-tags-not-json",
    report_command,
    opt("--tags", lambda c: c.write("garbage.tags.json", "[[[{"), "garbage.tags.json", "json"),
)
add(
    "report-tags-wrong-layout",
    report_command,
    opt(
        "--tags",
        lambda c: c.write("layout.tags.json", '{"documents": 3}'),
        "layout.tags.json",
        ("layout", "format", "token", "list"),
    ),
)
add(
    "report-tags-missing",
    report_command,
    opt("--tags", lambda c: c.missing("nothere.tags.json"), "nothere.tags.json", NOT_FOUND),
)
add(
    "report-tags-latin1",
    report_command,
    opt(
        "--tags",
        lambda c: c.write(
            "latin1.tags.json", Path(c.w.ref_tags).read_bytes().replace(b'"token": "', b'"token": "caf\xe9', 1)
        ),
        "latin1.tags.json",
        UTF8,
    ),
)
option_cases("report", report_command, [("--top", "-1"), ("--min-count", "0"), ("--min-count", "-2")])
output_cases("report", report_command, "--output-dir", "report", directory_output=True)


# ============================================================================ contextual-mt add-symbols
GOOD_DICT = "hello 5\nworld 3\n"


def add_symbols_command(c: Ctx) -> None:
    c.command = "contextual-mt"
    good = c.write("dict.good.txt", GOOD_DICT)
    c.argv = ["add-symbols", good]
    c.unchanged = [good]


def dicts(c, second: str):
    c.argv.append(second)
    if os.path.isfile(second):
        c.unchanged.append(second)


def only(c, path):
    c.argv = ["add-symbols", path]
    c.unchanged = [path] if os.path.isfile(path) else []


def addsym_only(make_path: Callable[[Ctx], str], *fragments: Callable[[str], Fragment]):
    """A mutation: add-symbols on the one file ``make_path(c)``; the error must hold each
    ``fragment(path)``."""

    def mutate(c: Ctx) -> List[Fragment]:
        path = make_path(c)
        only(c, path)
        return [fragment(path) for fragment in fragments]

    return mutate


add("addsym-missing", add_symbols_command, do(lambda c: only(c, c.missing("nothere.txt")), "nothere.txt", NOT_FOUND))
add(
    "addsym-directory",
    add_symbols_command,
    addsym_only(
        lambda c: c.mkdir("dictdir"), lambda p: "dictdir", lambda p: DIRECTORY, lambda p: f"{p}: is a directory"
    ),
)
add(
    "addsym-latin1",
    add_symbols_command,
    addsym_only(
        lambda c: c.write("latin1.txt", b"hello 5\ncaf\xe9 3\n"),
        lambda p: "latin1.txt",
        lambda p: UTF8,
        lambda p: at_line("latin1.txt", 2),
        lambda p: f"{p}:2: not UTF-8 text",
    ),
)
add(
    "addsym-line-without-count",
    add_symbols_command,
    addsym_only(
        lambda c: c.write("nocount.txt", "hello 5\nnocount\n"), lambda p: at_line("nocount.txt", 2), lambda p: f"{p}:2"
    ),
)
add(
    "addsym-count-not-a-number",
    add_symbols_command,
    do(lambda c: only(c, c.write("badcount.txt", "hello 5\nworld many\n")), at_line("badcount.txt", 2)),
)
add(
    "addsym-duplicate-symbol",
    add_symbols_command,
    do(lambda c: only(c, c.write("dup.txt", "hello 5\nworld 3\nhello 2\n")), at_line("dup.txt", 3)),
)
add(
    "addsym-blank-line",
    add_symbols_command,
    do(lambda c: only(c, c.write("blank.txt", "hello 5\n\nworld 3\n")), at_line("blank.txt", 2)),
)
add(
    "addsym-second-file-bad-line",
    add_symbols_command,
    do(lambda c: dicts(c, c.write("second.txt", "hello 5\nnocount\n")), at_line("second.txt", 2)),
)
add(
    "addsym-second-file-missing",
    add_symbols_command,
    do(lambda c: dicts(c, c.missing("second_missing.txt")), "second_missing.txt", NOT_FOUND),
)
add(
    "addsym-second-file-directory",
    add_symbols_command,
    do(lambda c: dicts(c, c.mkdir("second_dir")), "second_dir", DIRECTORY),
)
add(
    "addsym-second-file-latin1",
    add_symbols_command,
    do(lambda c: dicts(c, c.write("second_latin1.txt", b"caf\xe9 3\n")), "second_latin1.txt", UTF8),
)
add(
    "addsym-second-file-count-not-a-number",
    add_symbols_command,
    do(lambda c: dicts(c, c.write("second_count.txt", "hello five\n")), at_line("second_count.txt", 1)),
)


# ============================================================================ muda tag
def tag_command(c: Ctx) -> None:
    w = c.w
    c.command = "muda"
    c.argv = [
        "tag",
        "--src",
        w.d_src,
        "--tgt",
        w.d_ref,
        "--docids",
        w.d_ids,
        "--tgt-lang",
        "fr",
        "--dump-tags",
        c.o("tags.json"),
        "--src-conllu",
        w.d_src_conllu,
        "--tgt-conllu",
        w.d_ref_conllu,
        "--alignments",
        w.d_align,
    ]
    c.absent = [c.o("tags.json"), c.o("tags.summary.json"), c.o("tags.src.conllu")]


file_cases("tag", tag_command, "--src", lambda w: w.d_src, ext=".en")
file_cases("tag", tag_command, "--tgt", lambda w: w.d_ref, kinds=("missing", "latin1"), ext=".fr")
file_cases("tag", tag_command, "--docids", lambda w: w.d_ids, kinds=("missing", "empty", "latin1"), ext=".docids")
add("tag-tgt-fewer-lines", tag_command, lambda c: [edited(c, "--tgt", "short.fr", drop_last), LINES])
add("tag-docids-fewer-lines", tag_command, lambda c: [edited(c, "--docids", "short.docids", drop_last), LINES])
add(
    "tag-docids-blank-line",
    tag_command,
    lambda c: [edited(c, "--docids", "blank.docids", blank_line(4)), at_line("blank.docids", 4)],
)
add("tag-unknown-language", tag_command, opt("--tgt-lang", "xx", "xx", ("unknown", "language")))
add(
    "tag-unknown-phenomenon",
    tag_command,
    lambda c: (c.set("--phenomena", "sarcasm"), ["--phenomena", "sarcasm"])[1],
    status=2,
)
add(
    "tag-src-conllu-does-not-match",
    tag_command,
    lambda c: [
        edited(c, "--src-conllu", "mismatch.en.conllu", change_form_demo(2)),
        ("match",),
        ("sentence 2", "line 2", ":2"),
    ],
)
add(
    "tag-src-conllu-fewer-sentences",
    tag_command,
    lambda c: [edited(c, "--src-conllu", "fewer.en.conllu", drop_last_sentence), LINES],
)
add(
    "tag-tgt-conllu-malformed",
    tag_command,
    lambda c: [edited(c, "--tgt-conllu", "malformed.fr.conllu", nine_columns), ("malformed.fr.conllu:",)],
)
add(
    "tag-tgt-conllu-bad-token-id",
    tag_command,
    lambda c: [edited(c, "--tgt-conllu", "badid.fr.conllu", bad_token_id), ("badid.fr.conllu:",)],
)
add(
    "tag-tgt-conllu-of-another-text",
    tag_command,
    opt("--tgt-conllu", lambda c: c.w.d_src_conllu, "test.en.conllu", "match"),
)
add(
    "tag-src-conllu-bad-coreference",
    tag_command,
    lambda c: [edited(c, "--src-conllu", "coref.en.conllu", bad_entity), ("entity", "coref")],
)
add(
    "tag-src-conllu-missing",
    tag_command,
    opt("--src-conllu", lambda c: c.missing("nothere.conllu"), "nothere.conllu", NOT_FOUND),
)
add(
    "tag-alignments-out-of-range",
    tag_command,
    lambda c: [edited(c, "--alignments", "range.align", set_line(2, "0-99")), at_line("range.align", 2), "range"],
)
add(
    "tag-alignments-garbage",
    tag_command,
    lambda c: [edited(c, "--alignments", "garbage.align", set_line(1, "x-1 banana")), at_line("garbage.align", 1)],
)
add(
    "tag-alignments-negative-index",
    tag_command,
    lambda c: [edited(c, "--alignments", "neg.align", set_line(3, "-1-0")), at_line("neg.align", 3)],
)
add("tag-alignments-fewer-lines", tag_command, lambda c: [edited(c, "--alignments", "short.align", drop_last), LINES])
add(
    "tag-stanza-model-missing",
    tag_command,
    do(
        lambda c: (
            c.drop("--src-conllu"),
            c.set("--stanza-dir", c.mkdir("no_stanza")),
            c.set("--cache-dir", str(c.inp.parent / "cache")),
        ),
        "stanza",
        (*NOT_FOUND, "download", "get it"),
    ),
)
option_cases(
    "tag",
    tag_command,
    [("--lexical-min-count", "0"), ("--lexical-min-count", "-1"), ("--coref-window", "-1"), ("--batch-size", "0")],
)
output_cases("tag", tag_command, "--dump-tags", "tags.json")
add(
    "tag-annotation-file-beside-tags-is-a-directory",
    tag_command,
    do(lambda c: preexisting(c, "tags.src.conllu"), "tags.src.conllu", DIRECTORY),
)


def change_form_demo(sentence: int):
    def edit(lines):
        out, k = [], 0
        for line in lines:
            cols = line.split("\t")
            if len(cols) == 10 and cols[0] == "1":
                k += 1
                if k == sentence:
                    cols[1] = "Zzz"
                    line = "\t".join(cols)
            out.append(line)
        return out

    return edit


def bad_token_id(lines):
    lines = list(lines)
    k = [i for i, line in enumerate(lines) if line.count("\t") == 9][3]
    lines[k] = "\t".join(["x", *lines[k].split("\t")[1:]])
    return lines


def bad_entity(lines):
    """An entity closed but never opened ('e9)')."""
    lines = list(lines)
    k = next(i for i, line in enumerate(lines) if "Entity=(e1-object)" in line)
    lines[k] = lines[k].replace("Entity=(e1-object)", "Entity=e9)")
    return lines


def set_line(k, text):
    def edit(lines):
        lines = list(lines)
        lines[k - 1] = text
        return lines

    return edit


# ============================================================================ muda eval
def eval_command(c: Ctx) -> None:
    w = c.w
    c.command = "muda"
    c.argv = [
        "eval",
        "--src",
        w.d_src,
        "--ref",
        w.d_ref,
        "--docids",
        w.d_ids,
        "--tgt-lang",
        "fr",
        "--hyps",
        w.sys_a,
        "--ref-tags",
        w.d_tags,
        "--src-conllu",
        w.d_src_conllu,
        "--lexicon",
        *w.lex,
        "--output",
        c.o("eval.json"),
        "--bootstrap",
        "10",
    ]
    c.absent = [c.o("eval.json"), c.o("eval.work")]


file_cases("eval", eval_command, "--hyps", lambda w: w.sys_a, ext=".hyp")
file_cases("eval", eval_command, "--ref", lambda w: w.d_ref, kinds=("missing", "latin1"), ext=".fr")
file_cases("eval", eval_command, "--src", lambda w: w.d_src, kinds=("latin1",), ext=".en")
file_cases("eval", eval_command, "--ref-tags", lambda w: w.d_tags, kinds=("missing", "dir"), ext=".json")
add("eval-hyps-fewer-lines", eval_command, lambda c: [edited(c, "--hyps", "short.hyp", drop_last), LINES])
add("eval-hyps-more-lines", eval_command, lambda c: [edited(c, "--hyps", "long.hyp", add_line), LINES])
add("eval-ref-fewer-lines", eval_command, lambda c: [edited(c, "--ref", "short.fr", drop_last), LINES])
add("eval-docids-fewer-lines", eval_command, lambda c: [edited(c, "--docids", "short.docids", drop_last), LINES])
add(
    "eval-docids-blank-line",
    eval_command,
    lambda c: [edited(c, "--docids", "blank.docids", blank_line(5)), at_line("blank.docids", 5)],
)


def fairseq_output(refs, skip=(), twice=None):
    out = []
    for i, ref in enumerate(refs):
        if i in skip:
            continue
        out += [
            f"S-{i}\tsource {i}",
            f"T-{i}\t{ref}",
            f"H-{i}\t-0.25\t{ref}",
            f"D-{i}\t-0.25\t{ref}",
            f"P-{i}\t-0.1 -0.2",
        ]
    if twice is not None:  # the same id again, from another run: other source, other text
        out += [
            f"S-{twice}\tanother source",
            f"T-{twice}\tanother reference",
            f"H-{twice}\t-0.5\tautre chose .",
            f"D-{twice}\t-0.5\tautre chose .",
        ]
    return [*out, "Generate test with beam=2: BLEU4 = 50.0"]


add(
    "eval-hyps-fairseq-output-missing-ids",
    eval_command,
    opt(
        "--hyps",
        lambda c: c.write_lines("gen_missing.out", fairseq_output(lines_of(c.w.d_ref), skip=(3, 7))),
        "gen_missing.out",
        ("missing", "3"),
    ),
)
add(
    "eval-hyps-fairseq-output-id-twice-different-text",
    eval_command,
    opt(
        "--hyps",
        lambda c: c.write_lines("gen_twice.out", fairseq_output(lines_of(c.w.d_ref), twice=2)),
        "gen_twice.out",
        ("twice", "duplicate", "again", "more than once", "two", "repeated", "differ", "conflict"),
    ),
)
add(
    "eval-hyps-fairseq-output-id-beyond-reference",
    eval_command,
    opt(
        "--hyps",
        lambda c: c.write_lines("gen_beyond.out", fairseq_output([*lines_of(c.w.d_ref), "x ."])),
        "gen_beyond.out",
        ("lines", "reference", "id"),
    ),
)
add(
    "eval-comet-model-missing-path",
    eval_command,
    opt("--comet-model", lambda c: c.missing("nothere.ckpt"), "nothere.ckpt", NOT_FOUND),
)
add(
    "eval-comet-model-corrupt-checkpoint",
    eval_command,
    opt("--comet-model", corrupt_comet_model, "model.ckpt", ("cannot load", "checkpoint")),
)
add(
    "eval-names-fewer-than-hyps",
    eval_command,
    do(lambda c: (c.set("--hyps", c.w.sys_a, c.w.sys_b), c.set("--names", "only-one")), "--names"),
)
add("eval-names-more-than-hyps", eval_command, do(lambda c: c.set("--names", "a", "b"), "--names"))
add(
    "eval-hyp-conllu-count-wrong",
    eval_command,
    do(lambda c: (c.set("--hyps", c.w.sys_a, c.w.sys_b), c.set("--hyp-conllu", c.w.d_ref_conllu)), "--hyp-conllu"),
)
add(
    "eval-hyp-alignments-count-wrong",
    eval_command,
    do(
        lambda c: (c.set("--hyp-conllu", c.w.d_ref_conllu), c.set("--hyp-alignments", c.w.d_align, c.w.d_align)),
        "--hyp-alignments",
    ),
)
add(
    "eval-hyp-conllu-of-another-text",
    eval_command,
    opt("--hyp-conllu", lambda c: c.w.d_src_conllu, "test.en.conllu", "match"),
)
add(
    "eval-hyp-alignments-out-of-range",
    eval_command,
    do(
        lambda c: (
            c.set("--hyp-conllu", c.w.d_ref_conllu),
            edited(c, "--hyp-alignments", "range.align", set_line(2, "0-99"), start=c.w.d_align),
        ),
        "range.align",
        at_line("range.align", 2),
        "range",
    ),
)


def lexicon_without_source(c):
    c.drop("--src-conllu")
    c.drop("--ref-tags")
    return ["--src-conllu"]


add("eval-lexicon-without-src-conllu-and-ref-tags", eval_command, lambda c: lexicon_without_source(c))


def lexicon_file(c, k, path):
    lex = list(c.w.lex)
    lex[k] = path
    c.set("--lexicon", *lex)


add(
    "eval-lexicon-alignments-missing",
    eval_command,
    do(lambda c: lexicon_file(c, 2, c.missing("nothere.align")), "nothere.align", NOT_FOUND),
)
add(
    "eval-lexicon-alignments-garbage",
    eval_command,
    do(
        lambda c: lexicon_file(c, 2, c.write("garbage.align", "zero-one\n")),
        "garbage.align",
        at_line("garbage.align", 1),
    ),
)
add(
    "eval-lexicon-conllu-malformed",
    eval_command,
    do(
        lambda c: lexicon_file(c, 1, c.write_lines("malformed.fr.conllu", nine_columns(lines_of(c.w.lex[1])))),
        "malformed.fr.conllu:",
    ),
)
add(
    "eval-lexicon-empty",
    eval_command,
    do(
        lambda c: c.set("--lexicon", *(c.write(name, "") for name in ("empty.en.conllu", "empty.fr.conllu", "e.al"))),
        "empty.en.conllu",
        "empty",
    ),
)
add(  # an English CoNLL-U given as the French side: every hypothesis word would be unknown
    "eval-lexicon-english-as-the-french-side",
    eval_command,
    do(lambda c: lexicon_file(c, 1, c.w.lex[0]), "train.en.conllu", "not French"),
)
add(
    "eval-ref-tags-of-another-reference",
    eval_command,
    opt("--ref-tags", lambda c: c.w.d_tags_other, "other.tags.json", ("reference", "match")),
)


def ref_tags_other_no_summary(c):
    c.set("--ref-tags", c.write("copied.tags.json", Path(c.w.d_tags_other).read_text()))
    return ["copied.tags.json", ("reference", "match")]


add("eval-ref-tags-of-another-reference-without-summary", eval_command, ref_tags_other_no_summary)
add(
    "eval-ref-tags-for-another-language",
    eval_command,
    opt("--ref-tags", lambda c: c.w.d_tags_es, "spanish.tags.json", ("language", "es")),
)
add(
    "eval-ref-tags-not-json",
    eval_command,
    opt("--ref-tags", lambda c: c.write("garbage.tags.json", "not json"), "garbage.tags.json", "json"),
)
add(
    "eval-ref-tags-wrong-layout",
    eval_command,
    opt("--ref-tags", lambda c: c.write("layout.tags.json", "[[[1, 2]]]"), "layout.tags.json", ("layout", "token")),
)
add("eval-unknown-language", eval_command, opt("--tgt-lang", "xx", "xx", ("unknown", "language")))
option_cases("eval", eval_command, [("--bootstrap", "-1"), ("--coref-window", "-1"), ("--batch-size", "0")])
output_cases("eval", eval_command, "--output", "eval.json")


def eval_dir_output(flag):
    def mutate(c):
        c.set(flag, c.existing_dir_output())
        return ["odir", DIRECTORY]

    return mutate


add("eval-table-is-a-directory", eval_command, eval_dir_output("--table"))
add(
    "eval-work-directory-is-a-file",
    eval_command,
    do(lambda c: preexisting(c, "eval.work", directory=False), "eval.work", DIRECTORY_OR_FILE),
)
add(
    "eval-names-not-distinct",
    eval_command,
    do(lambda c: (c.set("--hyps", c.w.sys_a, c.w.sys_b), c.set("--names", "same", "same")), "--names"),
)
add("eval-plot-is-a-directory", eval_command, eval_dir_output("--plot"))
add(
    "eval-plot-under-a-file",
    eval_command,
    opt("--plot", lambda c: c.under_file("eval.png"), "afile", DIRECTORY_OR_FILE),
)


# muda eval of a document-level output (re-aligned to the source lines by docalign)
def eval_documents(c: Ctx, name: str = "documents.jsonl", edit=None) -> str:
    """System a's lines joined per document, as JSONL records (see ``_documents_jsonl``)."""
    return _documents_jsonl(c, name, edit, ids=c.w.d_ids, texts=c.w.sys_a)


add(
    "eval-pivot-fewer-lines", eval_command, lambda c: [edited(c, "--pivot", "short.pivot", drop_last, c.w.d_ref), LINES]
)
file_cases("eval", eval_command, "--pivot", lambda w: w.d_ref, kinds=("missing", "latin1"), ext=".pivot")
add(
    "eval-segmenter-pipeline-not-installed",
    eval_command,
    do(
        lambda c: (c.set("--hyps", eval_documents(c)), c.set("--segmenter", "xx_no_such_pipeline_sm")),
        "xx_no_such_pipeline_sm",
        "spacy download",
    ),
)
option_cases("eval", eval_command, [("--band", "0")])
add(
    "eval-hyps-documents-unknown-id",
    eval_command,
    opt(
        "--hyps",
        lambda c: eval_documents(c, "unknown.jsonl", _renamed_second),
        at_line("unknown.jsonl", 2),
        "no-such-document",
    ),
)
add(
    "eval-hyps-json-objects-without-doc",
    eval_command,
    lambda c: [json_objects(c, "--hyps", "objects.jsonl"), at_line("objects.jsonl", 1), '"doc"'][1:],
)
output_cases("eval", eval_command, "--alignment-dir", "alignments", directory_output=True)
add(
    "eval-alignment-dir-of-line-aligned-hyps",  # issue 50: exit 0 and an empty folder left behind
    eval_command,
    lambda c: [
        c.set("--alignment-dir", c.o("alignments")),
        c.absent.append(c.o("alignments")),
        "--alignment-dir",
        "line-aligned",
    ][2:],
)
add(
    "eval-hyps-jsonl-first-record-cut-off",
    eval_command,
    lambda c: [first_record_cut_off(c, "--hyps"), at_line("cut.jsonl", 1), "JSON record"][1:],
)
add(
    "eval-hyps-line-aligned-cut-to-the-number-of-documents",
    eval_command,
    lambda c: [cut_to_the_documents(c, "--hyps"), "short.fr", "lines but", "one document per line"][1:],
)
add(
    "eval-hyps-jsonl-text-with-a-nul-escape",
    eval_command,
    lambda c: [control_character(c, "--hyps"), at_line("nul.jsonl", 2), "control character"][1:],
)


# ============================================================================ fairseq-train / fairseq-generate
def train_command(c: Ctx) -> None:
    """fairseq-train (through tests.helpers.train): argv = [data, save_dir, extra...]."""
    c.command = "fairseq-train"
    c.argv = [c.w.bin, c.o("ckpt"), "-s", "en", "-t", "fr", "--target-context-size", "1"]
    c.absent = [c.o("ckpt")]


def copy_bin(c):
    dest = c.inp / "bin"
    shutil.copytree(c.w.bin, dest)
    c.argv[0] = str(dest)
    return dest


add(
    "train-negative-source-context-size",
    train_command,
    do(lambda c: c.argv.extend(["--source-context-size", "-1"]), "--source-context-size", MUST),
)
add(
    "train-negative-target-context-size",
    train_command,
    opt("--target-context-size", "-2", "--target-context-size", MUST),
)
add(
    "train-coword-dropout-above-1",
    train_command,
    do(lambda c: c.argv.extend(["--coword-dropout", "1.5"]), "--coword-dropout", MUST),
)


def train_no_source_dictionary(c):
    c.argv[c.argv.index("-s") + 1] = "de"
    return ["dict.de.txt", NOT_FOUND, f"{c.w.bin}/dict.de.txt: dictionary not found (for -s de)"]


def train_no_data_directory(c):
    c.argv[0] = c.missing("nowhere")
    return [f"{c.argv[0]}: data directory not found"]


add("train-missing-dictionary-for-source-language", train_command, train_no_source_dictionary)
add("train-data-directory-missing", train_command, train_no_data_directory)


def train_docids_short(c):
    dest = copy_bin(c)
    p = dest / "valid.en-fr.docids"
    p.write_text("".join(x + "\n" for x in p.read_text().splitlines()[:-1]))
    return ["valid.en-fr.docids", LINES, str(p), "lines"]


def train_docids_empty(c):
    dest = copy_bin(c)
    (dest / "train.en-fr.docids").write_text("")
    return ["train.en-fr.docids", "empty"]


def train_valid_count_mismatch(c):
    """The valid split's target side replaced by the test split's (another sentence count)."""
    dest = copy_bin(c)
    for ext in ("bin", "idx"):
        shutil.copy(dest / f"test.en-fr.fr.{ext}", dest / f"valid.en-fr.fr.{ext}")
    return ["valid.en-fr.en.bin", "valid.en-fr.fr.bin"]


def train_docids_blank(c):
    dest = copy_bin(c)
    p = dest / "train.en-fr.docids"
    lines = p.read_text().splitlines()
    lines[4] = ""
    p.write_text("".join(x + "\n" for x in lines))
    return [at_line("train.en-fr.docids", 5)]


def train_without_symbol(symbol: str):
    def mutate(c):
        dest = copy_bin(c)
        p = dest / "dict.fr.txt"
        p.write_text("".join(x + "\n" for x in p.read_text().splitlines() if not x.startswith(symbol)))
        return ["dict.fr.txt", symbol, str(p), "contextual-mt add-symbols"]

    return mutate


add("train-docids-fewer-lines", train_command, train_docids_short)
add("train-docids-blank-line", train_command, train_docids_blank)
add("train-docids-empty", train_command, train_docids_empty)
add("train-valid-source-target-count-mismatch", train_command, train_valid_count_mismatch)
add("train-dictionary-without-brk", train_command, train_without_symbol("<brk>"))
add("train-dictionary-without-mask", train_command, train_without_symbol("<mask>"))


def generate_command(c: Ctx) -> None:
    c.command = "fairseq-generate"
    c.argv = [
        c.w.bin,
        "--user-dir",
        USER_DIR,
        "--task",
        "document_translation",
        "-s",
        "en",
        "-t",
        "fr",
        "--target-context-size",
        "2",
        "--path",
        c.w.ckpt,
        "--gen-subset",
        "test",
        "--cpu",
        "--batch-size",
        "8",
        "--beam",
        "2",
    ]


add("generate-beam-0", generate_command, opt("--beam", "0", "--beam", MUST))
add(
    "generate-stock-translation-checkpoint",
    generate_command,
    opt("--path", lambda c: c.w.ckpt_stock, ("stock_translation.pt", "--path"), ("document_translation", "task")),
)
add(
    "generate-checkpoint-missing",
    generate_command,
    opt("--path", lambda c: c.missing("nothere.pt"), ("nothere.pt", "--path"), NOT_FOUND),
)


def generate_docids_short(c):
    dest = copy_bin(c)
    p = dest / "test.en-fr.docids"
    p.write_text("".join(x + "\n" for x in p.read_text().splitlines()[:-1]))
    return ["test.en-fr.docids", LINES]


add("generate-docids-fewer-lines", generate_command, generate_docids_short)


# ---- file reading and writing rules (no output over an input, NUL bytes)
def output_over_input(out_flag: str, in_flag: str, name: str, link: bool = False):
    """``out_flag`` given the file of ``in_flag`` (copied into in/ as ``name``), or with ``link``
    a symbolic link to it in out/: refused before any work, naming both options; the input is
    unchanged (in/ and out/ are checked as they were)."""

    def mutate(c: Ctx) -> List[Fragment]:
        path = c.write(name, Path(c.value(in_flag)).read_bytes())
        c.set(in_flag, path)
        target = path
        if link:
            target = c.o("link_to_" + name)
            os.symlink(path, target)
        c.set(out_flag, target)
        return [os.path.basename(target), name, out_flag, in_flag, "overwrite"]

    return mutate


add("cxmi-output-is-the-reference", cxmi_command, output_over_input("--output", "--reference", "ref.fr"))
add("cxmi-output-is-the-docids", cxmi_command, output_over_input("--output", "--docids", "test.docids"))
add("translate-output-is-the-source", translate_command, output_over_input("--output", "--source", "src.en"))
add(
    "translate-output-is-a-link-to-the-source",
    translate_command,
    output_over_input("--output", "--source", "src.en", link=True),
)
add("score-output-is-the-hyp", score_command, output_over_input("--output", "--hyp", "hyp.fr"))
add(
    "score-output-is-a-link-to-the-docids",
    score_command,
    output_over_input("--output", "--docids", "test.docids", link=True),
)
add("eval-output-is-the-ref", eval_command, output_over_input("--output", "--ref", "ref.fr"))
add("eval-plot-is-a-link-to-the-hyps", eval_command, output_over_input("--plot", "--hyps", "sys.hyp", link=True))
add("tag-dump-tags-is-the-src", tag_command, output_over_input("--dump-tags", "--src", "src.en"))


def input_is_a_side_output(in_flag: str, name: str, output: str, out_flag: str = "--output"):
    """The file of ``in_flag`` copied into in/ as ``name``, a file the command writes or removes
    beside ``out_flag`` = in/``output`` (OUTPUT.partial, its summary): refused before any work."""

    def mutate(c: Ctx) -> List[Fragment]:
        source = c.value(in_flag) if in_flag.startswith("--") else c.argv[1]
        path = c.write(name, Path(source).read_bytes())
        if in_flag.startswith("--"):
            c.set(in_flag, path)
        else:
            c.argv[1] = path
        c.set(out_flag, str(c.inp / output))
        return [name, in_flag, "overwrite"]

    return mutate


add(
    "cxmi-source-is-the-outputs-partial", cxmi_command, input_is_a_side_output("--source", "p.jsonl.partial", "p.jsonl")
)
add("cxmi-docids-is-the-outputs-summary", cxmi_command, input_is_a_side_output("--docids", "p.summary.json", "p.jsonl"))
add(
    "contrastive-input-is-the-outputs-partial",
    contrastive_command,
    input_is_a_side_output("--input", "s.scores.partial", "s.scores"),
)


def report_pcxmi_in_the_output_dir(c: Ctx) -> List[Fragment]:
    path = c.write("rep/report.json", Path(c.w.pcxmi).read_bytes())
    c.argv[1] = path
    c.set("--output-dir", str(c.inp / "rep"))
    return ["report.json", "PCXMI", "overwrite"]


add("report-pcxmi-is-a-file-the-report-writes", report_command, report_pcxmi_in_the_output_dir)


def merge_output_is_a_shard(c: Ctx) -> List[Fragment]:
    shard = c.write("shard0.jsonl", Path(c.w.s0).read_bytes())
    c.argv[1] = shard
    c.set("--output", shard)
    return ["shard0.jsonl", "--output", "SHARDS", "overwrite"]


add("merge-output-is-a-shard", merge_command, merge_output_is_a_shard)


def nul_byte(line: int):
    """A NUL byte inside line ``line`` (the rest of the file as it was)."""

    def edit(lines):
        lines = list(lines)
        lines[line - 1] = lines[line - 1][:2] + "\0" + lines[line - 1][2:]
        return lines

    return edit


add(
    "translate-source-nul-byte",
    translate_command,
    lambda c: [edited(c, "--source", "nul.en", nul_byte(3)), at_line("nul.en", 3), "NUL"],
)
add(
    "cxmi-docids-nul-byte",
    cxmi_command,
    lambda c: [edited(c, "--docids", "nul.docids", nul_byte(2)), at_line("nul.docids", 2), "NUL"],
)
add(
    "score-ref-nul-byte",
    score_command,
    lambda c: [edited(c, "--ref", "nul.fr", nul_byte(1), start=c.w.ref), at_line("nul.fr", 1), "NUL"],
)
add("tag-tgt-nul-byte", tag_command, lambda c: [edited(c, "--tgt", "nul.fr", nul_byte(4)), at_line("nul.fr", 4), "NUL"])
add(
    "eval-ref-tags-nul-byte",
    eval_command,
    lambda c: [edited(c, "--ref-tags", "nul_tags.json", nul_byte(1)), at_line("nul_tags.json", 1), "NUL"],
)


# ---- contrastive sets, cxmi options, make variables, shard merging
def same_tokens(entries: list) -> None:
    """Entry 1: two different strings that differ only in words outside the tiny vocabulary."""
    reference = entries[1]["dst"][0]
    entries[1]["dst"] = [reference + " zzyzx", reference + " qwvkj"]


add(
    "contrastive-different-strings-same-tokens",
    contrastive_command,
    contrastive_entry("same_tokens", same_tokens, "entry 1", "candidates 0 and 1", "same tokens"),
)
add(
    "cxmi-random-context-seed-neg",
    cxmi_command,
    do(lambda c: c.argv.extend(["--random-context", "--seed", "-1"]), "--seed", MUST),
)


def shard_without_records(c):
    """A shard whose summary is there but whose .jsonl is not (deleted, or never finished)."""
    path = copy_shard(c, c.w.s1, "gone")
    os.unlink(path)
    shards(c, c.w.s0, path)
    return ["gone.jsonl", "does not exist"]


add("merge-shard-jsonl-absent", merge_command, shard_without_records)


# ---- the sentencepiece model and the dictionary
def spm_of_the_corpus(c: Ctx, drop: int = 0, extra: Sequence[str] = ()) -> List[Fragment]:
    """--spm: a sentencepiece model of the tiny corpus; --data: dictionaries holding its pieces
    but the last ``drop``, and the symbols ``extra`` (both fail before the weights load)."""
    import sentencepiece as spm

    from contextual_mt.backends.fairseq.codec import model_pieces

    raw = Path(c.w.raw)
    prefix = c.inp / "corpus_spm"
    spm.SentencePieceTrainer.train(
        input=f"{raw / 'train.en'},{raw / 'train.fr'}",
        model_prefix=str(prefix),
        vocab_size=60,
        model_type="bpe",
        hard_vocab_limit=False,
        minloglevel=2,
    )
    pieces = model_pieces(spm.SentencePieceProcessor(model_file=f"{prefix}.model"))
    entries = pieces[: len(pieces) - drop] + list(extra) + ["<brk>", "<mask>"]
    for lang in ("en", "fr"):
        c.write_lines(f"data/dict.{lang}.txt", [f"{w} 1" for w in entries])
    c.set("--spm", f"{prefix}.model")
    c.set("--data", str(c.inp / "data"))
    found = (
        (f"{drop} of its {len(pieces)} pieces", "not in the dictionary")
        if drop
        else (f"{len(extra)} of the {len(entries)} dictionary symbols", "not pieces of the model")
    )
    return ["corpus_spm.model", "dict.en.txt", *found]


for _prefix, _base in (("translate", translate_command), ("cxmi", cxmi_command), ("contrastive", contrastive_command)):
    add(f"{_prefix}-spm-more-pieces-than-the-dictionary", _base, lambda c: spm_of_the_corpus(c, drop=3))
    add(
        f"{_prefix}-spm-dictionary-symbols-not-pieces",
        _base,
        lambda c: spm_of_the_corpus(c, extra=["▁zebra", "quokka"]),
    )
add(
    "contrastive-spm-other-dictionary",
    contrastive_command,
    opt("--spm", lambda c: c.w.other_spm, ("other_spm.model", "--spm"), ("dictionary", "match")),
)


def data_folder_of_an_older_dictionary(c: Ctx) -> List[Fragment]:
    """`pipeline data` into a folder prepared before the dictionary held every piece of the
    sentencepiece model: its record lacks that setting, and the folder is refused as made with
    other options (its models map unseen pieces to <unk>), not reused."""
    from contextual_mt.pipeline.data_plan import STATE, DataOptions, make_plan

    c.command = "contextual-mt"
    out = c.out / "data"
    c.argv = [
        "pipeline",
        "data",
        "--lang",
        "fr",
        "--text",
        c.w.raw,
        "--output",
        str(out),
        "--vocab-size",
        "50",
        "--workers",
        "1",
        "--quiet",
    ]
    settings = make_plan(DataOptions(lang="fr", output=str(out), text=c.w.raw, vocab_size=50, workers=1)).settings
    settings.pop("dictionary")
    done = {"files": {}, "stats": {}, "seconds": {}}
    out.mkdir()
    (out / STATE).parent.mkdir(parents=True)
    (out / STATE).write_text(
        json.dumps(
            {
                "stage": "data",
                "base": "record",
                "outputs": {},
                "format": 1,
                "fingerprint": "0" * 64,
                "settings": settings,
                "steps": dict.fromkeys(("text", "spm", "bin"), done),
            }
        )
        + "\n"
    )
    return ["data", "dictionary", "--overwrite"]


add("pipeline-data-folder-of-an-older-dictionary", lambda c: None, data_folder_of_an_older_dictionary)


# ============================================================================ muda tag / download: models missing
add(
    "tag-models-missing-all-listed",
    tag_command,
    do(
        lambda c: (
            c.drop("--src-conllu"),
            c.drop("--tgt-conllu"),
            c.drop("--alignments"),
            c.set("--stanza-dir", c.mkdir("no_stanza")),
            c.set("--cache-dir", str(c.inp.parent / "cache")),
        ),
        "needs models not on this machine",
        "stanza en (tokenize,pos,lemma,depparse,coref)",
        "stanza fr (tokenize,pos,lemma)",
        "muda download --tgt-lang fr",
        "--src-conllu",
        "--tgt-conllu",
        "--alignments",
    ),
)
add(
    "tag-aligner-folder-missing",
    tag_command,
    do(
        lambda c: (c.drop("--alignments"), c.set("--align-model", c.missing("no_aligner"))),
        "no_aligner",
        ("not found", "without config.json"),
        "--alignments",
    ),
)


def download_command(c: Ctx) -> None:
    c.command = "muda"
    c.argv = ["download", "--tgt-lang", "fr", "--stanza-dir", c.o("stanza")]


add("download-unknown-language", download_command, opt("--tgt-lang", "xx", "xx", ("unknown", "language")))
add(
    "download-unknown-phenomenon",
    download_command,
    lambda c: (c.set("--phenomena", "sarcasm"), ["--phenomena", "sarcasm"])[1],
    status=2,
)


# ---- the demo's data command, the test-set stages, merged shards and the other late cases
def demo_data_command(c: Ctx) -> None:
    c.command = "contextual-mt"
    c.argv = ["demo-data", "--output", c.o("corpus"), "--train-docs", "5", "--valid-docs", "2", "--test-docs", "2"]
    c.absent = [c.o("corpus")]


option_cases("demo-data", demo_data_command, [("--train-docs", "0"), ("--test-docs", "100000000000")])
add("score-output-empty-path", score_command, opt("--output", "", "--output", "empty path"))
add(
    "plan-shards-a-billion",
    lambda c: (
        setattr(c, "command", "contextual-mt"),
        setattr(c, "argv", ["pipeline", "plan", "--lang", "fr", "--root", str(c.out), "--shards", "1000000000"]),
    )[-1],
    opt("--shards", "1000000000", "--shards", MUST),
)


# ---- the probe's defects (issue 38): messages that fitted another command, warnings before the error
add(
    "attribute-context-sizes-zero",
    attribute_command,
    do(
        lambda c: (c.set("--source-context-size", "0"), c.set("--target-context-size", "0")),
        "0/0",
        "no token can depend on context",
        "attribution needs context",
    ),
)
add(
    "translate-path-garbage-text",
    translate_command,
    opt(
        "--path",
        lambda c: c.write("garbage.pt", "garbage\n"),
        ("garbage.pt", "--path"),
        "not a checkpoint",
        ("damaged", "another kind"),
    ),
)


# ---- testset build / evaluate (the probe, issue 38)
def testset_build_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = [
        "testset",
        "build",
        "--source",
        w.d_src,
        "--reference",
        w.d_ref,
        "--docids",
        w.d_ids,
        "--lang",
        "fr",
        "--tags",
        w.d_tags,
        "--output-dir",
        c.o("suite"),
    ]
    c.absent = [c.o("suite")]


output_cases("testset-build", testset_build_command, "--output-dir", "suite", directory_output=True)
add(
    "testset-build-phenomena-without-groups",
    testset_build_command,
    opt("--phenomena", "verb_form", "reference.tags.json", "no test group", "verb_form", "nothing written"),
)


def earlier_build_that_tagged_there(c: Ctx) -> List[Fragment]:
    """--output-dir holds an earlier build made without --tags (its reference tags beside its
    suites): this build, from other tags, would leave them passing for its own."""
    folder = c.out / "suite"
    folder.mkdir()
    earlier = {"language": "fr", "tags": str(folder / "reference.tags.json"), "groups": 1}
    (folder / "summary.json").write_text(json.dumps(earlier) + "\n")
    for name in ("reference.tags.json", "reference.tags.summary.json", "reference.tags.tgt.conllu"):
        (folder / name).write_text("earlier\n")
    c.absent = []
    return ["--output-dir", "reference.tags.json", "earlier build", "--overwrite"]


add(
    "testset-build-output-dir-of-an-earlier-build-with-its-tags", testset_build_command, earlier_build_that_tagged_there
)


def testset_evaluate_command(c: Ctx) -> None:
    """The demo's test suites, built here (in/suite), and a system's translations of them."""
    from contextual_mt.testsets.build import BuildOptions, run_build

    w = c.w
    suite = c.inp / "suite"
    run_build(BuildOptions(w.d_src, w.d_ref, w.d_ids, w.d_tags, str(suite), "fr"))
    c.command = "contextual-mt"
    c.argv = [
        "testset",
        "evaluate",
        "--manifest",
        str(suite / "manifest.jsonl"),
        "--hyp",
        w.sys_a,
        "--docids",
        w.d_ids,
        "--output",
        c.o("eval.json"),
        "--bootstrap",
        "100",
    ]
    c.absent = [c.o("eval.json")]


def docids_of_one_document(c: Ctx) -> List[Fragment]:
    """Document ids that disagree with the manifest's (all one document): the intervals were
    zero-wide and every p 0.000, with exit 0."""
    c.set("--docids", c.write_lines("one_doc.docids", ["d1"] * len(lines_of(c.w.d_ids))))
    return ["one_doc.docids", "document", "manifest"]


def manifest_phenomenon(c: Ctx) -> List[Fragment]:
    manifest = Path(c.value("--manifest"))
    rows = manifest.read_text(encoding="utf-8").splitlines()
    first = json.loads(rows[0])
    first["phenomenon"] = "sarcasm"
    rows[0] = json.dumps(first, ensure_ascii=False)
    manifest.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return ["manifest.jsonl:1", "sarcasm", "phenomenon"]


add("testset-evaluate-docids-of-one-document", testset_evaluate_command, docids_of_one_document)
add("testset-evaluate-manifest-unknown-phenomenon", testset_evaluate_command, manifest_phenomenon)
add(
    "testset-evaluate-hyp-documents-without-pivot",
    testset_evaluate_command,
    lambda c: [documents_hyp(c), "docs.jsonl", "--pivot"][1:],
)
add(
    "testset-evaluate-hyp-documents-without-docids",
    testset_evaluate_command,
    lambda c: [documents_hyp(c), c.set("--pivot", c.w.d_ref), c.drop("--docids"), "docs.jsonl", "--docids"][3:],
)
add(
    "testset-evaluate-pivot-fewer-lines",
    testset_evaluate_command,
    lambda c: [documents_hyp(c), edited(c, "--pivot", "short_pivot.fr", drop_last, start=c.w.d_ref), "--pivot", LINES][
        1:
    ],
)
add(  # json's message ends in "starting at", its position apart: never "starting at at line 2"
    "testset-evaluate-summary-with-an-unterminated-string",
    testset_evaluate_command,
    opt(
        "--summary",
        lambda c: c.write("cut.summary.json", '{\n  "language": "fr'),
        "cut.summary.json",
        "unterminated string starting at line 2, column 15",
    ),
)
option_cases("testset-evaluate", testset_evaluate_command, [("--band", "0")])
add(
    "testset-evaluate-segmenter-not-installed",
    testset_evaluate_command,
    lambda c: [
        documents_hyp(c),
        c.set("--pivot", c.w.d_ref),
        c.set("--segmenter", "xx_nothere_sm"),
        "xx_nothere_sm",
        "spacy download",
    ][3:],
)
add(
    "attribute-hypotheses-blank-line",
    attribute_command,  # a guard: it says "hypothesis", not "reference"
    lambda c: [
        c.drop("--reference"),
        edited(c, "--hypotheses", "blank_hyp.fr", blank_line(3), start=c.w.ref),
        at_line("blank_hyp.fr", 3),
        "hypothesis",
    ][1:],
)

# ---- an empty value given to an input's option: one line naming the option
add("attribute-source-empty-path", attribute_command, opt("--source", "", "--source", "empty value"))
add(
    "translate-path-empty-with-hf-model",
    translate_command,
    do(lambda c: (c.set("--path", ""), c.set("--hf-model", "Helsinki-NLP/opus-mt-en-fr")), "--path", "empty value"),
)
add("tag-tgt-lang-empty", tag_command, opt("--tgt-lang", "", "--tgt-lang", "empty value"))


# ============================================================================ contextual-mt align
def _documents_jsonl(c: Ctx, name: str = "docs.jsonl", edit=None, ids=None, texts=None) -> str:
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


def align_command(c: Ctx) -> None:
    w = c.w
    c.command = "contextual-mt"
    c.argv = ["align", "--hyp-documents", _documents_jsonl(c), "--docids", w.ids, "--pivot", w.hyp]
    c.argv += ["--output", c.o("aligned.fr"), "--alignment", c.o("alignment.jsonl")]
    c.absent = [c.o("aligned.fr"), c.o("alignment.jsonl")]


def _renamed_second(records):
    records[1]["doc"] = "no-such-document"
    return records


def _emptied_first(records):
    records[0]["text"] = " "
    return records


file_cases("align", align_command, "--hyp-documents", lambda w: w.ref, kinds=("missing", "dir", "latin1"))
file_cases("align", align_command, "--pivot", lambda w: w.hyp, kinds=("missing", "dir", "latin1"))


def _documents_edited(name: str, edit, *fragments: Fragment):
    """A mutation: --hyp-documents replaced by the JSONL records edited by ``edit``."""
    return do(lambda c: c.set("--hyp-documents", _documents_jsonl(c, name, edit)), *fragments)


for _cid, _name, _edit, _fragments in (
    ("not-in-docids", "renamed.jsonl", _renamed_second, (at_line("renamed.jsonl", 2), "no-such-document")),
    ("missing", "fewer.jsonl", lambda r: r[:-1], ("fewer.jsonl", "no record")),
    ("empty", "emptied.jsonl", _emptied_first, (at_line("emptied.jsonl", 1), "empty")),
):
    add(f"align-document-{_cid}", align_command, _documents_edited(_name, _edit, *_fragments))
add(
    "align-output-unknown-format",
    align_command,
    lambda c: [edited(c, "--hyp-documents", "odd.txt", drop_last, start=c.w.ref), "odd.txt", "unknown format"],
)
add(
    "align-output-line-aligned",
    align_command,
    do(lambda c: c.set("--hyp-documents", c.w.hyp), "line-aligned"),
)
add("align-without-pivot", align_command, do(lambda c: c.drop("--pivot"), "--pivot"))
add("align-pivot-fewer-lines", align_command, lambda c: [edited(c, "--pivot", "short.fr", drop_last), LINES])
add(
    "align-segmenter-not-installed",
    align_command,
    opt("--segmenter", "xx_no_such_pipeline", "xx_no_such_pipeline", "spacy download"),
)
add(  # a folder is no package name: never "spacy download /the/folder" (issue 50 item 4)
    "align-segmenter-folder-without-a-pipeline",
    align_command,
    opt("--segmenter", lambda c: c.mkdir("pipeline"), "pipeline", "does not hold a spaCy pipeline"),
)
add("align-pivot-none-without-source", align_command, opt("--pivot", "none", "--pivot none", "--source"))
add(
    "align-pivot-none-without-lexical-train",
    align_command,
    do(lambda c: (c.set("--pivot", "none"), c.set("--source", c.w.src)), "--lexical-train"),
)
add(
    "align-lexical-train-without-pivot-none",
    align_command,
    do(lambda c: c.set("--lexical-train", c.w.src, c.w.ref), "--lexical-train", "--pivot none"),
)
add(
    "align-lexical-train-not-parallel",
    align_command,
    lambda c: [
        c.set("--pivot", "none"),
        c.set("--source", c.w.src),
        c.set("--lexical-train", c.w.src, c.write_lines("short_train.fr", lines_of(c.w.ref)[:-1])),
        "short_train.fr",
        "not a parallel corpus",
    ][3:],
)
add(
    "score-pivot-none",
    score_command,
    lambda c: [documents_hyp(c), c.set("--pivot", "none"), "--pivot none", "contextual-mt align"][2:],
)
option_cases("align", align_command, [("--band", "0")])
output_cases("align", align_command, "--output", "aligned.fr")
add(
    "align-output-and-alignment-the-same-file",
    align_command,
    opt("--alignment", lambda c: c.o("aligned.fr"), "aligned.fr", "same file"),
)
add(
    "score-output-and-alignment-output-the-same-file",
    score_command,
    lambda c: [documents_hyp(c), c.set("--alignment-output", c.o("scores.json")), "scores.json", "same file"][2:],
)
output_cases("align", align_command, "--alignment", "alignment.jsonl")


def _one_record_per_line(c: Ctx, ids: str, texts: str) -> str:
    """JSONL document records, one per line of ``texts``: as many lines as a line-aligned output."""
    records = [{"doc": d, "text": t} for d, t in zip(lines_of(ids), lines_of(texts), strict=True)]
    return c.write_lines("records.jsonl", [json.dumps(r, ensure_ascii=False) for r in records])


add(
    "score-jsonl-as-many-records-as-lines-without-docids",
    score_command,
    do(
        lambda c: (c.drop("--docids"), c.set("--hyp", _one_record_per_line(c, c.w.ids, c.w.ref))),
        "records.jsonl",
        "--docids",
    ),
)
add(
    "testset-evaluate-jsonl-as-many-records-as-lines-without-docids",
    testset_evaluate_command,
    do(
        lambda c: (c.drop("--docids"), c.set("--hyp", _one_record_per_line(c, c.w.d_ids, c.w.d_ref))),
        "records.jsonl",
        "--docids",
    ),
)
add(
    "align-pivot-jsonl",
    align_command,
    do(lambda c: c.set("--pivot", _documents_jsonl(c, "pivot.jsonl")), "pivot.jsonl", "JSONL"),
)
add(
    "score-pivot-jsonl",
    score_command,
    do(
        lambda c: (
            c.set("--hyp", _documents_jsonl(c, "docs.jsonl")),
            c.set("--pivot", _one_record_per_line(c, c.w.ids, c.w.ref)),
        ),
        "records.jsonl",
        "JSONL",
    ),
)


# ---- counterfactual suites (`testset build --counterfactual`) and their measures (`testset cues`), issue 43
def counterfactual_build_command(c: Ctx) -> None:
    testset_build_command(c)
    c.argv.append("--counterfactual")


def _conllu_edited(c: Ctx, flag: str, original: str, name: str, edit: Callable[[List[str]], List[str]]) -> str:
    """A copy of a CoNLL-U file with each token row's columns edited; given as ``flag``."""
    rows = []
    for line in lines_of(original):
        cols = line.split("\t")
        rows.append("\t".join(edit(cols)) if len(cols) == 10 else line)
    c.set(flag, c.write_lines(name, rows))
    return name


def _no_coreference(cols: List[str]) -> List[str]:
    return [*cols[:9], "_"]


def _every_noun_masculine(cols: List[str]) -> List[str]:
    if cols[3] == "NOUN":
        cols[5] = cols[5].replace("Gender=Fem", "Gender=Masc")
    return cols


add(
    "testset-build-counterfactual-suite-without-cues",
    counterfactual_build_command,
    lambda c: [
        _conllu_edited(c, "--src-conllu", c.w.d_src_conllu, "nocoref.en.conllu", _no_coreference),
        c.set("--phenomena", "pronouns"),
        "reference.tags.json",
        "no group has a known cue",
    ][2:],
)
add(
    "testset-build-counterfactual-lexicon-without-a-noun-of-the-other-gender",
    counterfactual_build_command,
    lambda c: [
        _conllu_edited(c, "--tgt-conllu", c.w.d_ref_conllu, "masculine.fr.conllu", _every_noun_masculine),
        c.set("--phenomena", "pronouns"),
        "no cue could be flipped",
        "no noun of the other gender",
    ][2:],
)
add(
    "testset-build-counterfactual-shift-beyond-the-longest-document",
    counterfactual_build_command,
    opt("--max-shift", "60", "--max-shift 60", "longest document"),
)
add(
    "testset-build-max-shift-without-counterfactual",
    testset_build_command,
    opt("--max-shift", "2", "--max-shift", "--counterfactual"),
)
option_cases("testset-build-counterfactual", counterfactual_build_command, [("--max-shift", "-1")])


def testset_cues_command(c: Ctx) -> None:
    """A counterfactual suite of the demo, built here (in/suite), and the generative evaluation of
    its reference (the expected translations) to measure."""
    from contextual_mt.testsets.build import BuildOptions, run_build
    from contextual_mt.testsets.evaluate import EvaluateOptions, evaluate_testset

    w = c.w
    suite = c.inp / "suite"
    run_build(BuildOptions(w.d_src, w.d_ref, w.d_ids, w.d_tags, str(suite), "fr", counterfactual=True))
    cf = suite / "counterfactual"
    evaluation = c.inp / "eval.json"
    evaluate_testset(
        EvaluateOptions(str(cf / "manifest.jsonl"), (str(cf / "reference.fr"),), output=str(evaluation), bootstrap=0)
    )
    c.command = "contextual-mt"
    c.argv = ["testset", "cues", "--suite", str(cf), "--evaluation", str(evaluation)]
    c.argv += ["--output", c.o("cues.json"), "--plot", c.o("cues.png"), "--bootstrap", "100"]
    c.absent = [c.o("cues.json"), c.o("cues.png")]


def rehashed(c: Ctx, name: str) -> None:
    """The suite's summary.json made to record the sha256 of its file ``name`` as it is now (a
    careful hand edit): what the suite's other checks see past the content hashes."""
    from commandkit.text import file_sha256

    folder = c.inp / "suite" / "counterfactual"
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    summary["files"][name] = file_sha256(str(folder / name))
    (folder / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")


def _evaluation_of_the_build(c: Ctx) -> List[Fragment]:
    """`testset evaluate` of the build's own manifest (not the counterfactual one)."""
    from contextual_mt.testsets.evaluate import EvaluateOptions, evaluate_testset

    path = c.inp / "eval_main.json"
    evaluate_testset(
        EvaluateOptions(str(c.inp / "suite" / "manifest.jsonl"), (str(c.w.d_ref),), output=str(path), bootstrap=0)
    )
    c.set("--evaluation", str(path))
    return ["eval_main.json", "another manifest"]


def _contrastive_of_another_set(c: Ctx) -> List[Fragment]:
    summary = {"format": "voita", "scores": "other.scores", "fingerprint": {"input": "0" * 64}}
    c.set("--contrastive", c.write("other.summary.json", json.dumps(summary)))
    return ["other.summary.json", "another test set"]


def _manifest_of_another_build(c: Ctx) -> List[Fragment]:
    """The suite with its manifest replaced by a shorter one (of another build)."""
    folder = c.inp / "suite" / "counterfactual"
    manifest = folder / "manifest.jsonl"
    manifest.write_text("".join(line + "\n" for line in lines_of(str(manifest))[:-1]), encoding="utf-8")
    return ["manifest.jsonl", "another build"]


add("testset-cues-evaluation-of-another-manifest", testset_cues_command, _evaluation_of_the_build)
add("testset-cues-contrastive-of-another-suite", testset_cues_command, _contrastive_of_another_set)
add("testset-cues-manifest-of-another-build", testset_cues_command, _manifest_of_another_build)
add(
    "testset-cues-suite-not-counterfactual",
    testset_cues_command,
    opt("--suite", lambda c: str(c.inp / "suite"), "summary.json", "not the summary of a counterfactual suite"),
)
add("testset-cues-without-decisions", testset_cues_command, do(lambda c: c.drop("--evaluation"), "--contrastive"))
add("testset-cues-plot-not-png", testset_cues_command, opt("--plot", lambda c: c.o("cues.jpg"), "--plot", ".png"))
option_cases("testset-cues", testset_cues_command, [("--bootstrap", "5")])
output_cases("testset-cues", testset_cues_command, "--output", "cues.json")


def _bases_edited(c: Ctx, edit: Callable[[List[dict]], None], rehash: bool) -> int:
    """The suite's manifest with its records' ``base`` edited (``rehash``: and summary.json's hash
    of it made to match, as a careful hand edit would); the first line edited."""
    folder = c.inp / "suite" / "counterfactual"
    manifest = folder / "manifest.jsonl"
    records = [json.loads(line) for line in lines_of(str(manifest))]
    before = [r["base"] for r in records]
    edit(records)
    manifest.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    if rehash:
        rehashed(c, "manifest.jsonl")
    return next(n for n, (r, b) in enumerate(zip(records, before, strict=True), start=1) if r["base"] != b)


def _each_cue_flip_to_the_next_group(records: List[dict]) -> None:
    """Issue 50: each cue_flip's base moved to the next original group (a cue score of 24.0, not 0.0)."""
    originals = [r["base"] for r in records if r["edit"] == "original"]
    for r in records:
        k = originals.index(r["base"])
        if r["edit"] == "cue_flip" and k + 1 < len(originals):
            r["base"] = originals[k + 1]


def _one_base_out_of_range(records: List[dict]) -> None:
    """Issue 50: a base of 99999999 silently dropped its group (337 of 338 measured)."""
    records[1]["base"] = 99999999


add(
    "testset-cues-manifest-edited-after-the-build",
    testset_cues_command,
    lambda c: [_bases_edited(c, _each_cue_flip_to_the_next_group, False), "manifest.jsonl", "changed since"][1:],
)
add(
    "testset-cues-base-moved-to-another-group",
    testset_cues_command,
    lambda c: [
        at_line("manifest.jsonl", _bases_edited(c, _each_cue_flip_to_the_next_group, True)),
        "not the original of its group",
    ],
)
add(
    "testset-cues-base-out-of-range",
    testset_cues_command,
    lambda c: [at_line("manifest.jsonl", _bases_edited(c, _one_base_out_of_range, True)), "names no original group"],
)


def testset_evaluate_suite_command(c: Ctx) -> None:
    """testset evaluate of the counterfactual suite's manifest (the suite of testset_cues_command)."""
    testset_cues_command(c)
    cf = c.inp / "suite" / "counterfactual"
    c.argv = ["testset", "evaluate", "--manifest", str(cf / "manifest.jsonl"), "--hyp", str(cf / "reference.fr")]
    c.argv += ["--output", c.o("eval.json"), "--bootstrap", "0"]
    c.absent = [c.o("eval.json")]


add(
    "testset-evaluate-suite-manifest-edited-after-the-build",
    testset_evaluate_suite_command,
    lambda c: [_bases_edited(c, _one_base_out_of_range, False), "manifest.jsonl", "changed since"][1:],
)


# ---- issue 43, probed: inputs that passed for the suite's own, or an option the user never gave
def earlier_counterfactual_build(c: Ctx) -> List[Fragment]:
    """--output-dir holds an earlier --counterfactual build; this one (without) would leave its
    suite passing for its own: the error names the files with their folder (counterfactual/...),
    not as the build's own manifest.jsonl and voita.json."""
    folder = c.out / "suite"
    (folder / "counterfactual").mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps({"language": "fr", "groups": 1}) + "\n")
    for name in ("voita.json", "manifest.jsonl", "summary.json", "source.en", "reference.fr", "docids"):
        (folder / "counterfactual" / name).write_text("earlier\n")
    c.absent = []
    return [os.path.join("counterfactual", "manifest.jsonl"), "earlier build", "--overwrite"]


add("testset-build-output-dir-of-an-earlier-counterfactual-build", testset_build_command, earlier_counterfactual_build)
add(
    "testset-build-counterfactual-default-shift-beyond-the-longest-document",
    counterfactual_build_command,
    opt("--context-size", "60", "--max-shift 62", "the default", "--context-size 60"),
)


def _summary_of_scores(c: Ctx, **extra) -> str:
    """A `contrastive` summary of the suite's voita.json (by its hash), with a scores file beside it."""
    from commandkit.text import file_sha256

    voita = c.inp / "suite" / "counterfactual" / "voita.json"
    n = len(json.loads(voita.read_text(encoding="utf-8")))
    scores = c.write_lines("model.scores", [f"{k % 3}.5" for k in range(2 * n)])
    summary = {"format": "voita", "scores": scores, "fingerprint": {"input": file_sha256(str(voita))}, **extra}
    return c.write("model.summary.json", json.dumps(summary))


def _output_over_the_scores(c: Ctx) -> List[Fragment]:
    c.set("--contrastive", _summary_of_scores(c))
    c.set("--output", str(c.inp / "model.scores"))
    return ["model.scores", "--output", "would overwrite the scores"]


def _scores_rewritten(c: Ctx) -> List[Fragment]:
    """The summary's scores file was since rewritten (another model's run with the same --output)."""
    c.set("--contrastive", _summary_of_scores(c, scores_sha256="0" * 64))
    return ["model.summary.json", "model.scores", "rewritten"]


def _voita_group_without_true_ind(c: Ctx) -> List[Fragment]:
    voita = c.inp / "suite" / "counterfactual" / "voita.json"
    entries = json.loads(voita.read_text(encoding="utf-8"))
    del entries[1]["true_ind"]
    voita.write_text(json.dumps(entries), encoding="utf-8")
    rehashed(c, "voita.json")
    return ["voita.json", "group 2", "true_ind"]


def _manifest_lines_swapped(c: Ctx) -> List[Fragment]:
    """Two manifest lines swapped by hand (an original and its cue flip): the decisions would be
    paired with the wrong edits."""
    manifest = c.inp / "suite" / "counterfactual" / "manifest.jsonl"
    rows = lines_of(str(manifest))
    rows[0], rows[1] = rows[1], rows[0]
    manifest.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    rehashed(c, "manifest.jsonl")
    return ["manifest.jsonl:1", "voita.json", "edited by hand"]


def _evaluation_without_outcomes(c: Ctx) -> List[Fragment]:
    path = c.inp / "eval.json"
    result = json.loads(path.read_text(encoding="utf-8"))
    for s in result["systems"].values():
        del s["group_outcomes"]
    path.write_text(json.dumps(result), encoding="utf-8")
    return ["eval.json", "no outcome"]


add("testset-cues-output-is-the-scores-file", testset_cues_command, _output_over_the_scores)
add("testset-cues-scores-rewritten-since-the-summary", testset_cues_command, _scores_rewritten)
add("testset-cues-voita-group-without-true-ind", testset_cues_command, _voita_group_without_true_ind)
add("testset-cues-manifest-lines-swapped", testset_cues_command, _manifest_lines_swapped)
add("testset-cues-evaluation-without-outcomes", testset_cues_command, _evaluation_without_outcomes)
add(
    "testset-cues-suite-is-a-file",
    testset_cues_command,
    opt(
        "--suite",
        lambda c: str(c.inp / "suite" / "counterfactual" / "manifest.jsonl"),
        "--suite",
        "a file, not the counterfactual folder",
    ),
)
add(
    "testset-cues-output-over-the-suite-documents",
    testset_cues_command,
    opt(
        "--output",
        lambda c: str(c.inp / "suite" / "counterfactual" / "source.en"),
        "source.en",
        "--output",
        "would overwrite the suite's documents",
    ),
)
add(
    "testset-cues-manifest-empty",
    testset_cues_command,
    do(
        lambda c: (
            (c.inp / "suite" / "counterfactual" / "manifest.jsonl").write_text(""),
            rehashed(c, "manifest.jsonl"),
        ),
        "manifest.jsonl",
        "no edited group",
    ),
)


def _shift_beyond_without_tags(c: Ctx) -> List[Fragment]:
    """Without --tags (the reference tagged first, from these annotations): the shift is refused
    before the reference is tagged, so nothing is written, not even the tags."""
    c.drop("--tags")
    c.set("--src-conllu", str(c.w.d_src_conllu))
    c.set("--tgt-conllu", str(c.w.d_ref_conllu))
    c.set("--alignments", str(c.w.d_align))
    c.set("--max-shift", "60")
    return ["--max-shift 60", "longest document"]


add(
    "testset-build-counterfactual-shift-refused-before-tagging",
    counterfactual_build_command,
    _shift_beyond_without_tags,
)
