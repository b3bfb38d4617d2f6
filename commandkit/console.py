"""A command as the console runs it: an InputError (or a full disk) as one 'error:' line and
exit status 1, Ctrl-C and SIGTERM as one line and status 130 (``run_command``, ``console_run``,
``install_excepthook``), and warnings as ``warning: ...`` lines (``configure_logging``).
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

from commandkit.errors import DISK_FULL, InputError

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


def _excepthook(exc_type, exc, tb, _previous=sys.excepthook):
    close_progress_bars()
    if issubclass(exc_type, InputError):
        print(f"error: {exc}", file=sys.stderr)
        return
    if issubclass(exc_type, KeyboardInterrupt):
        print("error: interrupted", file=sys.stderr)
        sys.exit(INTERRUPTED)
    if issubclass(exc_type, OSError) and exc.errno in DISK_FULL:
        print(_disk_full_line(exc), file=sys.stderr)
        return
    _previous(exc_type, exc, tb)


def install_excepthook() -> None:
    """Make an uncaught InputError print one line (exit status stays 1)."""
    if getattr(sys.excepthook, "__name__", "") != "_excepthook":
        sys.excepthook = _excepthook


def run_command(func: Callable[[Any], int], args: Any, guard: Optional[ContextManager] = None) -> int:
    """Run a CLI subcommand inside ``guard`` (its outputs, see ``commandkit.outputs.outputs``): an InputError
    becomes one 'error:' line and exit status 1 (a full disk too); Ctrl-C one line and status 130."""
    try:
        with guard or nullcontext():
            return func(args)
    except InputError as e:
        close_progress_bars()
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        close_progress_bars()
        print("error: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # stdout's reader stopped (``| head``): one line, not a traceback
        close_progress_bars()
        _stdout_to_devnull()  # else Python's flush at exit fails again
        print(f"error: {PIPE_CLOSED}", file=sys.stderr)
        return 1
    except OSError as e:
        if e.errno not in DISK_FULL:
            raise
        close_progress_bars()
        print(_disk_full_line(e), file=sys.stderr)
        return 1


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
