"""Bad-input cases: fairseq-train and fairseq-generate with the task."""

from __future__ import annotations

import shutil

from tests.bad_input.core import LINES, MUST, NOT_FOUND, Ctx, add, at_line, do, opt
from tests.helpers import USER_DIR


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
