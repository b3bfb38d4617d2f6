"""A built suite's files are one unit: the build records their content hashes (sha256) in its
``summary.json`` (``hashes``), and every command that reads the suite checks them first
(``check_unchanged``), so that a file edited, replaced or of another build is one line naming it,
never measured with the rest (a manifest whose ``base`` fields were moved pairs each edit with
another group's original)."""

from __future__ import annotations

import os
from typing import Dict, Mapping, Sequence

from commandkit.text import file_sha256
from contextual_mt.errors import Code, InputError

FILES_KEY = "files"  # in summary.json: file name (beside it) -> sha256


def hashes(folder: str, names: Sequence[str]) -> Dict[str, str]:
    """name -> sha256 of the files ``names`` in ``folder`` (as the build wrote them)."""
    return {name: file_sha256(os.path.join(folder, name)) for name in names}


def check_unchanged(summary_path: str, summary: Mapping) -> None:
    """Every file the summary at ``summary_path`` records, beside it, is still the one the build
    wrote; a file that is not there is left to the reader that needs it. A summary of a build
    that recorded no hashes is taken as it is."""
    files = summary.get(FILES_KEY)
    if files is None:
        return
    if not isinstance(files, dict) or not all(
        isinstance(n, str) and n == os.path.basename(n) and isinstance(h, str) for n, h in files.items()
    ):
        raise InputError(
            f"{summary_path}: its '{FILES_KEY}' are not file name -> sha256 (rebuild the suite)", code=Code.FORMAT
        )
    folder = os.path.dirname(summary_path)
    for name, digest in files.items():
        path = os.path.join(folder, name)
        if os.path.isfile(path) and file_sha256(path) != digest:
            raise InputError(
                f"{path}: changed since the suite was built (edited, or of another build: not the file whose "
                f"sha256 {summary_path} records); rebuild the suite",
                code=Code.MISMATCH,
            )
