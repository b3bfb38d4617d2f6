"""On-disk cache of annotations, keyed by a hash of the content and of what produced it, so the
same source side is annotated once however many hypothesis files are tagged."""

from __future__ import annotations

import hashlib
import logging
import os
from typing import Optional, Sequence

from commandkit.outputs import atomic_write_text

logger = logging.getLogger("muda")


def default_cache_dir() -> str:
    """``$XDG_CACHE_HOME/contextual-mt/muda``, else ``~/.cache/contextual-mt/muda`` (the XDG base
    directory rule: a relative or empty XDG_CACHE_HOME is ignored)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "contextual-mt", "muda")


class AnnotationCache:
    def __init__(self, directory: Optional[str] = None):
        self.directory = directory or default_cache_dir()
        self.hits = self.misses = 0
        self.warned = False

    def key(self, kind: str, producer: str, lines: Sequence[str]) -> str:
        h = hashlib.sha256(f"{kind}\0{producer}\0".encode())
        for line in lines:
            h.update(line.encode("utf-8") + b"\n")
        return h.hexdigest()

    def path(self, key: str, ext: str) -> str:
        return os.path.join(self.directory, key[:2], key + ext)

    def get(self, key: str, ext: str) -> Optional[str]:
        p = self.path(key, ext)
        if os.path.isfile(p):
            try:
                with open(p, encoding="utf-8") as f:
                    text = f.read()
                self.hits += 1
                return text
            except (OSError, UnicodeDecodeError) as e:  # an unreadable entry is a miss: annotate again
                logger.warning("annotation cache: cannot read %s (%s); annotating again", p, e)
        self.misses += 1
        return None

    def put(self, key: str, ext: str, text: str) -> None:
        """Store an entry; a cache that cannot be written costs time on the next run, not this
        run's result, so it is a warning, not an error."""
        try:
            atomic_write_text(self.path(key, ext), text, transactional=False)  # a cache outlives a failed command
        except OSError as e:
            if not self.warned:
                logger.warning(
                    "annotation cache %s cannot be written (%s); annotations will not be reused (--cache-dir)",
                    self.directory,
                    e.strerror or e,
                )
                self.warned = True
