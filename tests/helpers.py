"""Shared test helpers: a tiny document-level EN->FR corpus, running commands (as subprocesses or
in this process), training a tiny model."""

import contextlib
import io
import logging
import os
import random
import subprocess
import sys
from pathlib import Path

import contextual_mt  # activates the compat layer, registers the plugin

BIN = Path(sys.executable).parent
USER_DIR = str(Path(contextual_mt.__file__).parent)

NOUNS = {
    "cat": ("chat", "il"),
    "table": ("table", "elle"),
    "car": ("voiture", "elle"),
    "dog": ("chien", "il"),
    "house": ("maison", "elle"),
    "book": ("livre", "il"),
}
ADJS = {"big": "grand", "small": "petit", "red": "rouge", "old": "vieux"}


def write_corpus(directory: Path, seed: int = 0, sizes=(("train", 60), ("valid", 6), ("test", 6))):
    """Documents alternating 'I see the ADJ NOUN .' and 'it is ADJ .' (il/elle from context)."""
    rng = random.Random(seed)
    for split, ndocs in sizes:
        src, tgt, ids = [], [], []
        for d in range(ndocs):
            noun = rng.choice(sorted(NOUNS))
            for s in range(rng.randint(1, 6)):
                adj = rng.choice(sorted(ADJS))
                if s % 2 == 0:
                    noun = rng.choice(sorted(NOUNS))
                    src.append(f"i see the {adj} {noun} .")
                    tgt.append(f"je vois le {NOUNS[noun][0]} {ADJS[adj]} .")
                else:
                    src.append(f"it is {adj} .")
                    tgt.append(f"{NOUNS[noun][1]} est {ADJS[adj]} .")
                ids.append(f"{split}-doc {d}")
        (directory / f"{split}.en").write_text("\n".join(src) + "\n")
        (directory / f"{split}.fr").write_text("\n".join(tgt) + "\n")
        (directory / f"{split}.docids").write_text("\n".join(ids) + "\n")


def run(cmd, cwd=None, env=None, check=True):
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.run(cmd, cwd=cwd, env=full_env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd[0]} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def run_in_process(main, argv, env=None) -> subprocess.CompletedProcess:
    """A console script's ``main(argv)`` (``contextual_mt.cli.main``, ``muda.cli.main``) in this
    process, as the CompletedProcess its subprocess would give: the exit status (argparse's
    SystemExit included), stdout and stderr (log records included, as the script's stderr has
    them). Saves the seconds of a new interpreter importing torch and fairseq. An exception
    escaping ``main`` fails the calling test, as a traceback would. ``env``: variables set while
    it runs."""
    argv = [str(a) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    os.environ.update(env or {})
    log = logging.StreamHandler(err)
    log.setFormatter(logging.Formatter("%(levelname)s | %(name)s | %(message)s"))
    logging.getLogger().addHandler(log)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as e:
                if isinstance(e.code, str):
                    print(e.code, file=sys.stderr)
                status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        logging.getLogger().removeHandler(log)
        os.environ.clear()
        os.environ.update(saved)
    return subprocess.CompletedProcess(argv, status, out.getvalue(), err.getvalue())


def contextual_mt_cli(*args, env=None) -> subprocess.CompletedProcess:
    """``contextual-mt ARGS``, in this process (see run_in_process)."""
    from contextual_mt.cli import main

    return run_in_process(main, args, env=env)


def preprocess(raw: Path, dest: Path, add_symbols: bool = True) -> Path:
    run(
        [
            str(BIN / "fairseq-preprocess"),
            "-s",
            "en",
            "-t",
            "fr",
            "--joined-dictionary",
            "--trainpref",
            str(raw / "train"),
            "--validpref",
            str(raw / "valid"),
            "--testpref",
            str(raw / "test"),
            "--destdir",
            str(dest),
            "--workers",
            "1",
        ]
    )
    for split in ("train", "valid", "test"):
        (dest / f"{split}.en-fr.docids").write_text((raw / f"{split}.docids").read_text())
    if add_symbols:
        run([str(BIN / "contextual-mt"), "add-symbols", str(dest / "dict.en.txt"), str(dest / "dict.fr.txt")])
    return dest


TINY_MODEL = [
    "--arch",
    "contextual_transformer_tiny",
    "--share-all-embeddings",
    "--encoder-layers",
    "1",
    "--decoder-layers",
    "1",
]
TRAIN_OPTS = [
    "--optimizer",
    "adam",
    "--lr",
    "2e-3",
    "--lr-scheduler",
    "inverse_sqrt",
    "--warmup-updates",
    "20",
    "--max-tokens",
    "1000",
    "--cpu",
    "--no-progress-bar",
    "--criterion",
    "label_smoothed_cross_entropy",
    "--label-smoothing",
    "0.1",
]


def train(data: Path, save_dir: Path, *extra: str, epochs: int = 2, launcher=None, check=True):
    cmd = (launcher or []) + [
        str(BIN / "fairseq-train"),
        str(data),
        "--user-dir",
        USER_DIR,
        "--task",
        "document_translation",
        *TINY_MODEL,
        *TRAIN_OPTS,
        "--max-epoch",
        str(epochs),
        "--save-dir",
        str(save_dir),
        *extra,
    ]
    return run(cmd, check=check)


def write_fairseq_checkpoint(path, epochs: int, num_updates: int, valid_loss: float, within: int = 0) -> None:
    """A stand-in for a checkpoint fairseq saved at the end of epoch ``epochs`` (or ``within``
    batches into the next one, stopped by max_update): the state the train stage reads of it (no
    weights)."""
    import torch

    torch.save(
        {
            "extra_state": {
                "train_iterator": {"version": 2, "epoch": epochs + 1, "iterations_in_epoch": within},
                "val_loss": valid_loss,
                "best": valid_loss,
            },
            "optimizer_history": [{"num_updates": num_updates}],
            "cfg": None,
        },
        str(path),
    )
