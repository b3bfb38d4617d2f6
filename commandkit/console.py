"""A command as the console runs it: the one boundary where a user's error becomes one 'error:'
line and an exit status (``report``: an InputError, a full disk, 1; Ctrl-C and SIGTERM, 130), for
our commands (``run_command``, ``console_run``) and for fairseq's running our task
(``install_excepthook``); and warnings as ``warning: ...`` lines (``configure_logging``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from contextlib import nullcontext
from typing import Any, Callable, ContextManager, Optional

from commandkit.errors import DISK_FULL, Code, InputError

INTERRUPTED = 130  # the shell's status for a command stopped by Ctrl-C (128 + SIGINT)
PIPE_CLOSED = "standard output was closed by its reader (a pipe); no output file was written"


def _disk_full_line(e: OSError) -> str:
    """A full disk met outside the writers of ``commandkit.outputs`` (which name their output): the file
    the error names, if any."""
    where = f"{e.filename}: " if e.filename else ""
    return f"error: {where}cannot write ({e.strerror or e}); free some space and run again"


def close_progress_bars() -> None:
    """Close the tqdm bars still open (a command stopped inside its loop), so that the error line
    comes below the bar, not onto it, and no bar is redrawn after it (a bar closes itself when it
    is collected). Nothing when tqdm was never imported."""
    tqdm = sys.modules.get("tqdm")
    for bar in list(getattr(getattr(tqdm, "tqdm", None), "_instances", ())):
        with contextlib.suppress(Exception):  # a bar whose stream is gone: nothing to clear
            bar.close()


def out_of_memory(e: BaseException, hint: str) -> Optional[InputError]:
    """torch's allocation failures (CPU: "can't allocate memory", CUDA: "out of memory") are a
    setting too large for the machine, not a bug: an error whose line says which settings to
    lower (``hint``). None for anything else."""
    text = str(e)
    if not isinstance(e, MemoryError) and not (
        isinstance(e, RuntimeError) and ("out of memory" in text or "allocate memory" in text)
    ):
        return None
    first = next((line.strip() for line in text.splitlines() if "memory" in line), text)[:160]
    return InputError(f"out of memory ({first or type(e).__name__}); {hint}", code=Code.OUT_OF_MEMORY)


def report(e: BaseException, memory_hint: Optional[str] = None) -> Optional[int]:
    """The command line's one boundary: a user's error as its one line on stderr, and the exit
    status; None for a bug (the caller lets its traceback through). An InputError (a full disk,
    an allocation that does not fit when ``memory_hint`` says what to lower) is status 1, Ctrl-C
    (and SIGTERM) 130, a closed output pipe 1."""
    if memory_hint is not None:
        e = out_of_memory(e, memory_hint) or e
    if isinstance(e, InputError):
        line, status = f"error: {e}", 1
    elif isinstance(e, KeyboardInterrupt):
        line, status = "error: interrupted", INTERRUPTED
    elif isinstance(e, BrokenPipeError):  # stdout's reader stopped (``| head``): one line, not a traceback
        line, status = f"error: {PIPE_CLOSED}", 1
        _stdout_to_devnull()  # else Python's flush at exit fails again
    elif isinstance(e, OSError) and e.errno in DISK_FULL:
        line, status = _disk_full_line(e), 1
    else:
        return None
    close_progress_bars()  # the line below the bar, not onto it
    print(line, file=sys.stderr)
    return status


def _excepthook(exc_type, exc, tb, _previous=sys.excepthook):
    status = report(exc)
    if status is None:
        _previous(exc_type, exc, tb)
    elif status != 1:  # Python's own status after an uncaught exception is 1
        sys.exit(status)


def install_excepthook() -> None:
    """For programs that are not ours and run our code (fairseq's commands with our task): an
    uncaught user error prints its one line (``report``), as under ``run_command``."""
    if getattr(sys.excepthook, "__name__", "") != "_excepthook":
        sys.excepthook = _excepthook


def run_command(
    func: Callable[[Any], int], args: Any, guard: Optional[ContextManager] = None, memory_hint: Optional[str] = None
) -> int:
    """Run a command inside ``guard`` (its outputs, see ``commandkit.outputs.outputs``); a user's
    error ends it with its one line and exit status (``report``), anything else is a bug."""
    try:
        with guard or nullcontext():
            return func(args)
    except (Exception, KeyboardInterrupt) as e:
        status = report(e, memory_hint)
        if status is None:
            raise
        return status


def _stdout_to_devnull() -> None:
    with contextlib.suppress(OSError, ValueError):  # no file descriptor (captured): nothing to do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


class _StderrHandler(logging.StreamHandler):
    """Writes to sys.stderr as it is when a record comes (a caller running main in-process may swap it)."""

    stream = property(lambda self: sys.stderr, lambda self, value: None)


class _UserFormatter(logging.Formatter):
    """Warnings and errors as the user reads them (``warning: ...``), whichever library logs
    them; progress (INFO) with its time and source, when shown."""

    def format(self, record: logging.LogRecord) -> str:
        if record.levelno >= logging.WARNING:
            return f"{record.levelname.lower()}: {record.getMessage()}"
        return super().format(record)


def configure_logging(level: int = logging.WARNING) -> None:
    """The commands' log set-up: one handler on stderr, warnings as ``warning: ...`` lines
    (nothing changes where logging is set up already, e.g. by a program running main in-process)."""
    handler = _StderrHandler()
    handler.setFormatter(
        _UserFormatter("%(asctime)s | %(levelname)s | %(name)s | %(message)s", datefmt="%Y-%m-%d %H:%M:%S")
    )
    logging.basicConfig(handlers=[handler], level=level)


def _exit_interrupted(signum, frame) -> None:
    print("error: interrupted", file=sys.stderr, flush=True)
    os._exit(INTERRUPTED)


def _terminated(signum, frame) -> None:
    raise KeyboardInterrupt  # the same clean stop as Ctrl-C: no temporary file left behind


_fork_mask = threading.local()
_fork_hooks_registered = False


def _default_sigterm_in_forked_children() -> None:
    """A forked worker (multiprocessing.Pool) must keep SIGTERM's default: its pool ends it so, and
    an exception there could leave a queue lock held and hang the others. SIGTERM stays blocked
    from before the fork until the child has the default: a pool that ends at once (its workers
    not yet started) otherwise reaches the inherited handler, whose exception is swallowed by the
    fork hooks, and the worker lives on while its pool waits for it forever."""
    global _fork_hooks_registered
    if _fork_hooks_registered:
        return
    _fork_hooks_registered = True
    os.register_at_fork(before=_block_sigterm, after_in_parent=_restore_sigterm, after_in_child=_child_sigterm)


def _block_sigterm() -> None:
    _fork_mask.was_blocked = signal.SIGTERM in signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def _restore_sigterm() -> None:
    if not getattr(_fork_mask, "was_blocked", False):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _child_sigterm() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _restore_sigterm()  # a SIGTERM sent meanwhile now ends the child, as its sender meant


def console_run(main: Callable[[], int]) -> None:
    """A console script: ``main()``'s status. SIGTERM (kill, timeout, scancel) stops it as Ctrl-C
    does, cleaning up its temporary files (Python's default would end it on the spot); a Ctrl-C
    after main has returned (while Python waits for worker threads to end) exits at once with
    status 130 and one line, instead of "Exception ignored in: <module 'threading'>"."""
    try:
        signal.signal(signal.SIGTERM, _terminated)
    except ValueError:  # not the main thread
        pass
    else:
        _default_sigterm_in_forked_children()
    code = main()
    try:
        signal.signal(signal.SIGINT, _exit_interrupted)
        signal.signal(signal.SIGTERM, _exit_interrupted)
    except ValueError:
        pass
    sys.exit(code)
