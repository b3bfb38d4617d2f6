"""Outputs written atomically (temp file, rename): every command writes through ``outputs(...)``:
destinations checked before any computation, all files renamed into place together at the end,
nothing left on failure. Also the checks that outputs are distinct and replace no input.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from commandkit.errors import DISK_FULL, Code, InputError, WriteError, write_error

Pairs = Union[Mapping[str, Optional[str]], Sequence[Tuple[str, Optional[str]]]]  # option -> path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_probe(fd: int) -> None:
    """One byte: a full disk still takes an empty file (an inode), not a byte."""
    os.write(fd, b"\n")


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
            raise InputError(f"{for_path}: cannot write here ({d} is a file, not a directory)", code=Code.CANNOT_WRITE)
        for d in reversed(missing):
            try:
                os.mkdir(d)
            except OSError as e:
                message = f"{for_path}: cannot create directory {d} ({e.strerror})"
                raise InputError(message, code=Code.CANNOT_WRITE) from None
            self.created_dirs.append(d)

    def check(self, path: str, directory: bool = False) -> None:
        """Fail now, with one line naming ``path``, if it cannot be written."""
        if directory:
            if os.path.exists(path) and not os.path.isdir(path):
                raise InputError(f"{path}: exists and is not a directory", code=Code.CANNOT_WRITE)
            self.make_dirs(path, path)
            probe_dir = path
        else:
            if os.path.isdir(path):
                raise InputError(f"{path}: is a directory; give a file path for this output", code=Code.CANNOT_WRITE)
            probe_dir = os.path.dirname(os.path.abspath(path))
            self.make_dirs(probe_dir, path)
        try:  # the only reliable test (read-only file systems, ACLs, root)
            fd, probe = tempfile.mkstemp(prefix=".write-test.", dir=probe_dir)
            try:
                _write_probe(fd)
            finally:
                os.close(fd)
                os.unlink(probe)
        except OSError as e:
            if e.errno in DISK_FULL:  # before any computation, not after it
                raise write_error(path, e) from None
            raise InputError(f"{path}: cannot write here ({e.strerror})", code=Code.CANNOT_WRITE) from None

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
                raise InputError(f"{final}: cannot write (a directory is there now)", code=Code.CANNOT_WRITE)
        for final, tmp in self.staged.items():
            try:
                os.replace(tmp, final)
            except OSError as e:  # e.g. a directory put there while the command ran
                raise InputError(f"{final}: cannot write ({e.strerror})", code=Code.CANNOT_WRITE) from None
        self.staged.clear()
        self.created_dirs.clear()

    def rollback(self) -> None:
        for tmp in self.staged.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
        self.staged.clear()
        for d in reversed(self.created_dirs):
            with contextlib.suppress(OSError):  # only if nothing else was put there
                os.rmdir(d)
        self.created_dirs.clear()


_ACTIVE: ContextVar[Optional[OutputTransaction]] = ContextVar("commandkit_outputs", default=None)


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
            raise InputError(
                f"{path}: given twice as an output"
                if first == what
                else f"{path}: {first} and {what} would be the same file; give each its own path",
                code=Code.OUTPUT_IS_INPUT,
            )
        seen[key] = what


def _pairs(items: Pairs) -> List[Tuple[str, Optional[str]]]:
    return list(items.items()) if isinstance(items, Mapping) else list(items)


def check_not_inputs(outputs: Pairs, inputs: Pairs) -> None:
    """No output may replace an input of the same command (``--output`` given the hypothesis
    file would destroy it), whatever the path's spelling or links: one line naming both paths
    and both options. Each is a mapping option -> path, or (option, path) pairs."""
    where: Dict[str, Tuple[str, str]] = {}
    for flag, path in _pairs(inputs):
        if path:
            where.setdefault(os.path.realpath(path), (flag, path))
    for flag, path in _pairs(outputs):
        hit = where.get(os.path.realpath(path)) if path else None
        if hit:
            input_flag, input_path = hit
            given = "" if input_path == path else f" ({input_path})"
            raise InputError(
                f"{path}: {flag} would overwrite the input given as {input_flag}{given}; write it elsewhere",
                code=Code.OUTPUT_IS_INPUT,
            )


@contextmanager
def scratch_directory(prefix: str = "scratch-") -> Iterator[str]:
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


def atomic_save_figure(fig, path: str, dpi: int = 110) -> None:
    """Save a matplotlib figure atomically (temp file, rename; staged inside ``outputs``)."""
    _atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=dpi), suffix=os.path.splitext(path)[1] or ".png")
