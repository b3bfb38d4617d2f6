"""What the whole test run shares is built once, also when pytest-xdist (``make test``) runs the
tests in several processes: the first process to ask builds it under a file lock, in a folder
beside the workers' own temporary folders; the others wait for it and read the same result."""

import fcntl
import os
import pickle
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")


def shared_root(tmp_path_factory) -> Path:
    """The folder every process of this run sees: pytest's base temporary folder, or its parent
    under xdist (where each worker has ``popen-gwN``)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextmanager
def run_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` for threads and processes alike (flock holds per open file)."""
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_once(tmp_path_factory, name: str, build: Callable[[Path], T]) -> T:
    """``build(folder)`` once per test run; its (picklable) value for every caller. A build that
    failed leaves nothing: the next caller tries again (and fails with its own error)."""
    root = shared_root(tmp_path_factory)
    folder, value = root / f"shared-{name}", root / f"shared-{name}.pickle"
    with run_lock(root / f"shared-{name}.lock"):
        if not value.exists():
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir()
            result = build(folder)
            value.write_bytes(pickle.dumps(result))
        return pickle.loads(value.read_bytes())
