"""On-disk cache of annotations, keyed by a hash of the content and of what produced it, so the
same source side is annotated once however many hypothesis files are tagged."""
from __future__ import annotations

import hashlib
import os
from typing import Optional, Sequence

from muda.io import atomic_write_text


def default_cache_dir() -> str:
    return os.path.join(os.path.expanduser("~"), ".cache", "contextual-mt", "muda")


class AnnotationCache:
    def __init__(self, directory: Optional[str] = None):
        self.directory = directory or default_cache_dir()
        self.hits = self.misses = 0

    def key(self, kind: str, producer: str, lines: Sequence[str]) -> str:
        h = hashlib.sha256(f"{kind}\0{producer}\0".encode())
        for line in lines:
            h.update(line.encode("utf-8") + b"\n")
        return h.hexdigest()

    def path(self, key: str, ext: str) -> str:
        return os.path.join(self.directory, key[:2], key + ext)

    def get(self, key: str, ext: str) -> Optional[str]:
        p = self.path(key, ext)
        if os.path.exists(p):
            self.hits += 1
            with open(p, encoding="utf-8") as f:
                return f.read()
        self.misses += 1
        return None

    def put(self, key: str, ext: str, text: str) -> None:
        atomic_write_text(self.path(key, ext), text, transactional=False)  # a cache outlives a failed command
