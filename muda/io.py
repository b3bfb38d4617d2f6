"""The base I/O layer, for muda and the packages built on it: text files read with clear errors,
outputs written atomically (temp file, rename), and document ids.

A document is a maximal run of equal consecutive ids (``document_spans``); a repeated id after
another document starts a new document (with a warning). Every grouping by document goes
through this module. Every command writes through ``outputs(...)``: destinations checked before
any computation, all files renamed into place together at the end, nothing left on failure.
"""
from __future__ import annotations

import argparse
import codecs
import hashlib
import logging
import os
import shutil
import tempfile
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, \
    Tuple, TypeVar, Union

from muda.errors import InputError, WriteError, write_error

if TYPE_CHECKING:
    import numpy as np

T = TypeVar("T")
Pairs = Union[Mapping[str, Optional[str]], Sequence[Tuple[str, Optional[str]]]]  # option -> path
logger = logging.getLogger("muda")


# ----------------------------------------------------------------------------- reading
def check_input_file(path: str, what: str = "file") -> None:
    """An input path must be an existing file: one line naming it otherwise."""
    if not path:
        raise InputError(f"an empty path was given for the {what}")
    real = readable_path(path)  # this command may have written it
    if os.path.isdir(real):
        raise InputError(f"{path}: is a directory, not a {what}")
    if not os.path.exists(real):
        raise InputError(f"{path}: {what} not found")


def decode_text(data: bytes, name: str, first_line: int = 1) -> str:
    """The one decoder of user text (files, and lines streamed from archives): UTF-8, a
    byte-order mark at the start of a file dropped (it would stick to the first document id or
    sentence), bytes that are not UTF-8 and NUL characters refused with ``name:LINE``.
    ``first_line``: the line number of ``data``'s first line (1: the start of the file)."""
    if first_line == 1 and data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    elif first_line == 1 and data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise InputError(f"{name}:1: not UTF-8 text (UTF-16: save it as UTF-8)")
    try:  # all of it at once: the offset of a bad byte is the data's, not a buffer's
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = first_line + data.count(b"\n", 0, e.start)
        raise InputError(f"{name}:{line}: not UTF-8 text ({e.reason})") from None
    nul = text.find("\0")
    if nul >= 0:
        line = first_line + text.count("\n", 0, nul)
        raise InputError(f"{name}:{line}: a NUL byte inside the line (is this a text file?)")
    return text


def decoded_lines(raw: Iterable[bytes], name: str) -> Iterator[Tuple[int, str]]:
    """(line number, line without its break) of byte lines, e.g. an archive member's, each
    through ``decode_text``."""
    for lineno, line in enumerate(raw, start=1):
        yield lineno, decode_text(line, name, lineno).rstrip("\r\n")


def read_text(path: str) -> str:
    """The text of a UTF-8 file given by the user (see ``decode_text``): what every line reader
    and JSON input reads through. Line breaks as in Python's text mode (CR LF and CR become LF)."""
    check_input_file(path)
    with open(readable_path(path), "rb") as f:
        text = decode_text(f.read(), path)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def read_lines(path: str) -> List[str]:
    """Lines of a UTF-8 text file, without line breaks (see ``read_text``)."""
    text = read_text(path)
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") or not text else lines


def file_sha256(path: str) -> str:
    """Content hash of a file, streamed (checkpoints can be large)."""
    h = hashlib.sha256()
    with open(readable_path(path), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ----------------------------------------------------------------------------- writing
def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _temp_beside(path: str, suffix: str = "") -> str:
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=suffix, dir=directory)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; give the usual mode
    return tmp


class OutputTransaction:
    """All the files one command writes: each destination is checked before any computation,
    written to a temporary beside it, and the temporaries are renamed together at the end; on
    failure (an error, Ctrl-C) they are removed with the directories the command created, so
    either all of a command's outputs appear or none. Open one with ``outputs(...)``."""

    def __init__(self) -> None:
        self.staged: Dict[str, str] = {}  # destination (absolute) -> temporary
        self.created_dirs: List[str] = []
        self.scratch: List[str] = []  # directories written directly (see ``scratch_directory``)

    def is_scratch(self, path: str) -> bool:
        """``path`` lies in a scratch directory: written at once, never staged."""
        absolute = os.path.abspath(path)
        return any(absolute.startswith(d + os.sep) for d in self.scratch)

    def make_dirs(self, directory: str, for_path: str) -> None:
        """Create ``directory`` and its missing parents, remembering them for a rollback."""
        missing = []
        d = os.path.abspath(directory)
        while not os.path.exists(d):
            missing.append(d)
            d = os.path.dirname(d)
        if not os.path.isdir(d):
            raise InputError(f"{for_path}: cannot write here ({d} is a file, not a directory)")
        for d in reversed(missing):
            try:
                os.mkdir(d)
            except OSError as e:
                raise InputError(f"{for_path}: cannot create directory {d} ({e.strerror})") from None
            self.created_dirs.append(d)

    def check(self, path: str, directory: bool = False) -> None:
        """Fail now, with one line naming ``path``, if it cannot be written."""
        if directory:
            if os.path.exists(path) and not os.path.isdir(path):
                raise InputError(f"{path}: exists and is not a directory")
            self.make_dirs(path, path)
            probe_dir = path
        else:
            if os.path.isdir(path):
                raise InputError(f"{path}: is a directory; give a file path for this output")
            probe_dir = os.path.dirname(os.path.abspath(path))
            self.make_dirs(probe_dir, path)
        try:  # the only reliable test (read-only file systems, ACLs, root)
            fd, probe = tempfile.mkstemp(prefix=".write-test.", dir=probe_dir)
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise InputError(f"{path}: cannot write here ({e.strerror})") from None

    def stage(self, path: str, suffix: str = "") -> str:
        """The temporary file to write instead of ``path``."""
        key = os.path.abspath(path)
        if key not in self.staged:
            self.check(path)
            self.staged[key] = _temp_beside(path, suffix)
        return self.staged[key]

    def commit(self) -> None:
        for final in self.staged:  # what changed while the command ran: fail before any rename
            if os.path.isdir(final):
                raise InputError(f"{final}: cannot write (a directory is there now)")
        for final, tmp in self.staged.items():
            try:
                os.replace(tmp, final)
            except OSError as e:  # e.g. a directory put there while the command ran
                raise InputError(f"{final}: cannot write ({e.strerror})") from None
        self.staged.clear()
        self.created_dirs.clear()

    def rollback(self) -> None:
        for tmp in self.staged.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
        self.staged.clear()
        for d in reversed(self.created_dirs):
            try:
                os.rmdir(d)  # only if nothing else was put there
            except OSError:
                pass
        self.created_dirs.clear()


_ACTIVE: ContextVar[Optional[OutputTransaction]] = ContextVar("muda_outputs", default=None)


@contextmanager
def outputs(*files: Optional[str], directories: Sequence[Optional[str]] = ()) -> Iterator[OutputTransaction]:
    """Check that ``files`` and ``directories`` can be written, then run the block with every
    atomic write staged; commit at the end, roll back on any exception. Inside an open
    transaction it only checks and joins it (the outermost one commits)."""
    outer = _ACTIVE.get()
    tx = outer or OutputTransaction()
    try:
        for d in directories:
            if d:
                tx.check(d, directory=True)
        for f in files:
            if f:
                tx.check(f)
    except BaseException:
        if outer is None:
            tx.rollback()
        raise
    if outer is not None:
        yield outer
        return
    token = _ACTIVE.set(tx)
    try:
        yield tx
        tx.commit()
    except BaseException:
        tx.rollback()  # a failed commit too: the temporaries not yet renamed go
        raise
    finally:
        _ACTIVE.reset(token)


def check_distinct(outputs: Sequence[Tuple[str, Optional[str]]]) -> None:
    """(what, path) of one command's outputs: two at the same place would silently keep only
    the last written. One line naming both."""
    seen: Dict[str, str] = {}
    for what, path in outputs:
        if not path:
            continue
        key = os.path.realpath(path)
        if key in seen:
            first = seen[key]
            raise InputError(f"{path}: given twice as an output" if first == what else
                             f"{path}: {first} and {what} would be the same file; give each its own path")
        seen[key] = what


def _pairs(items: Pairs) -> List[Tuple[str, Optional[str]]]:
    return list(items.items()) if isinstance(items, Mapping) else list(items)


def check_not_inputs(outputs: Pairs, inputs: Pairs) -> None:
    """No output may replace an input of the same command (``--output`` given the hypothesis
    file would destroy it), whatever the path's spelling or links: one line naming both paths
    and both options. Each is a mapping option -> path, or (option, path) pairs."""
    where = {}
    for flag, path in _pairs(inputs):
        if path:
            where.setdefault(os.path.realpath(path), (flag, path))
    for flag, path in _pairs(outputs):
        hit = where.get(os.path.realpath(path)) if path else None
        if hit:
            input_flag, input_path = hit
            given = "" if input_path == path else f" ({input_path})"
            raise InputError(f"{path}: {flag} would overwrite the input given as {input_flag}{given}; "
                             f"write it elsewhere")


@contextmanager
def scratch_directory(prefix: str = "muda-") -> Iterator[str]:
    """A temporary directory for intermediate files, removed at the end whatever happens; writes
    into it are not staged by the open transaction (nothing of it is an output)."""
    path = os.path.abspath(tempfile.mkdtemp(prefix=prefix))
    tx = _ACTIVE.get()
    if tx is not None:
        tx.scratch.append(path)
    try:
        yield path
    finally:
        if tx is not None:
            tx.scratch.remove(path)
        shutil.rmtree(path, ignore_errors=True)


_NOT_FILES = ("command", "stage", "func", "output_args", "output_dir_args", "transaction")  # set by the parsers


def command_outputs(args: Any, parser: Optional[argparse.ArgumentParser] = None) -> ContextManager:
    """The ``outputs(...)`` of a CLI subcommand: the arguments its parser names in
    ``output_args`` (files, or lists of files) and ``output_dir_args`` (directories). Every other
    argument that names an existing file is an input, which no output may replace: one rule for
    every command, checked before any work (``parser``, when given, names the options in the
    error). A command that resumes step by step (``transaction=False``) only gets its atomic
    writes."""
    if not getattr(args, "transaction", True):
        return nullcontext()
    names = _option_names(parser, args) if parser is not None else {}

    def given(dests: Iterable[str]) -> List[Tuple[str, str]]:
        found: List[Tuple[str, str]] = []
        for dest in dests:
            value = getattr(args, dest, None)
            flag = names.get(dest, "--" + dest.replace("_", "-"))
            found += [(flag, v) for v in (value if isinstance(value, (list, tuple)) else [value])
                      if isinstance(v, str) and v]
        return found

    written = (*getattr(args, "output_args", ()), *getattr(args, "output_dir_args", ()))
    for dest in written:  # '' would be read as "no output" and the results silently dropped
        if getattr(args, dest, None) == "":
            return _refuse(f"{names.get(dest, '--' + dest.replace('_', '-'))}: an empty path was given")
    inputs = [(flag, path) for flag, path in given(d for d in vars(args) if d not in written + _NOT_FILES)
              if os.path.isfile(path)]
    # the files a command writes or removes beside its outputs (OUTPUT.partial, a summary, a
    # report folder's files), as (what, path): no input may be one of them either
    side = getattr(args, "side_outputs", None)
    return _command_transaction(given(getattr(args, "output_args", ())),
                                [path for _, path in given(getattr(args, "output_dir_args", ()))], inputs,
                                list(side(args)) if side else [])


@contextmanager
def _refuse(message: str) -> Iterator[None]:
    """An error raised inside the command's guard (one 'error:' line, exit 1)."""
    raise InputError(message)
    yield  # pragma: no cover (a generator, for contextmanager)


@contextmanager
def _command_transaction(files: List[Tuple[str, str]], directories: List[str], inputs: List[Tuple[str, str]],
                         side: List[Tuple[str, str]]) -> Iterator[OutputTransaction]:
    check_not_inputs(files + side, inputs)  # here, inside the command's guard: one 'error:' line
    with outputs(*(path for _, path in files), directories=directories) as tx:
        yield tx


def _option_names(parser: argparse.ArgumentParser, args: Any) -> Dict[str, str]:
    """dest -> how the user wrote it (``--dump-tags``, ``SHARDS``), along the chosen subcommands."""
    names: Dict[str, str] = {}
    while parser is not None:
        chosen = None
        for action in parser._actions:
            if action.nargs == argparse.PARSER:  # the subcommands: follow the chosen one
                chosen = action.choices.get(getattr(args, action.dest, None))
            elif action.option_strings:
                names.setdefault(action.dest, next((o for o in action.option_strings if o.startswith("--")),
                                                   action.option_strings[0]))
            else:
                names.setdefault(action.dest, action.metavar if isinstance(action.metavar, str)
                                 else action.dest.upper())
        parser = chosen
    return names


def readable_path(path: str) -> str:
    """Where to read ``path`` now: its staged temporary if this command has written it."""
    tx = _ACTIVE.get()
    if tx is not None:
        return tx.staged.get(os.path.abspath(_through_link(path)), path)
    return path


def output_exists(path: str) -> bool:
    """``path`` exists, or is staged by the open transaction."""
    return os.path.exists(readable_path(path))


@contextmanager
def writing(path: str) -> Iterator[None]:
    """Around every write of ``path``: an OSError (a full disk above all) becomes one line naming
    it, instead of a traceback naming a temporary file or nothing."""
    try:
        yield
    except WriteError:
        raise  # named already, by an inner write
    except OSError as e:
        raise write_error(path, e) from None


def _through_link(path: str) -> str:
    """An output given as a symbolic link is written where the link points (renaming the new
    file onto the link would replace the link and leave its target as it was)."""
    return os.path.realpath(path) if os.path.islink(path) else path


def _atomic_write(path: str, write: Callable[[str], None], suffix: str = "", transactional: bool = True) -> None:
    """The one writer of outputs: ``write(temporary)``, then the temporary renamed to ``path``
    (inside ``outputs(...)``: staged, renamed when the command ends); any OSError names ``path``."""
    tx = _ACTIVE.get() if transactional else None
    path = _through_link(path)
    with writing(path):
        if tx is not None and not tx.is_scratch(path):
            write(tx.stage(path, suffix))
            return
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tmp = _temp_beside(path, suffix)
        try:
            write(tmp)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise


def _write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def atomic_write_text(path: str, text: str, transactional: bool = True) -> None:
    """Write ``text`` to ``path``; readers never see a partial file. Inside ``outputs(...)``
    the file appears when the command ends (``transactional=False``: now, e.g. for caches)."""
    _atomic_write(path, lambda tmp: _write_text(tmp, text), transactional=transactional)


def atomic_write_lines(path: str, lines: Iterable[str], transactional: bool = True) -> None:
    """One line per item, written atomically."""
    lines = list(lines)
    if any("\n" in line for line in lines):
        raise ValueError(f"{path}: an output line contains a newline")
    atomic_write_text(path, "".join(line + "\n" for line in lines), transactional)


def read_docids(path: str) -> List[str]:
    """A docids file: one non-empty document id per line (blank ids and empty files are errors)."""
    check_input_file(path, "docids file")
    ids = read_lines(path)
    if not ids:
        raise InputError(f"{path}: docids file is empty")
    for lineno, doc_id in enumerate(ids, start=1):
        if not doc_id.strip():
            raise InputError(f"{path}:{lineno}: empty document id")
    _warn_interleaved(path, ids)
    return ids


def _warn_interleaved(path: str, ids: Sequence[str]) -> None:
    """A document id that comes back after another document starts a second document under the
    same id: almost always shuffled lines. Say so, naming the line."""
    first: Dict[str, int] = {}
    for n, doc_id in enumerate(ids):
        if n and doc_id != ids[n - 1] and doc_id in first:
            logger.warning("%s:%d: document id %r appears again after other documents (first at line %d); "
                           "it starts a new document (a document is a run of equal consecutive ids)",
                           path, n + 1, doc_id, first[doc_id] + 1)
            return
        first.setdefault(doc_id, n)


def document_spans(ids: Sequence[str]) -> List[Tuple[int, int]]:
    """``(start, end)`` of each document, in order: maximal runs of equal consecutive ids."""
    spans: List[Tuple[int, int]] = []
    for i in range(len(ids)):
        if i == 0 or ids[i] != ids[i - 1]:
            spans.append((i, i + 1))
        else:
            spans[-1] = (spans[-1][0], i + 1)
    return spans


def document_starts(ids: Sequence[str]) -> np.ndarray:
    """For each sentence, the index of the first sentence of its document."""
    import numpy as np  # here, not on top: `muda --help` and argument errors need no numpy

    starts = np.zeros(len(ids), dtype=np.int64)
    for start, end in document_spans(ids):
        starts[start:end] = start
    return starts


def group_by_document(items: Sequence[T], ids: Sequence[str]) -> List[List[T]]:
    """``items`` (one per line) split into documents."""
    return [list(items[a:b]) for a, b in document_spans(ids)]


def check_line_count(ids: Sequence[str], docids_path: str, count: int, what: str) -> None:
    """Every sentence needs exactly one document id."""
    if len(ids) != count:
        raise InputError(f"{docids_path}: has {len(ids)} lines but {what} has {count}; "
                    "every sentence needs exactly one document id")


def atomic_save_figure(fig, path: str, dpi: int = 110) -> None:
    """Save a matplotlib figure atomically (temp file, rename; staged inside ``outputs``)."""
    _atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=dpi), suffix=os.path.splitext(path)[1] or ".png")
