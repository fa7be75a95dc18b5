"""Files written whole: a reader, or a later run that trusts a file it finds, never sees half
of one. The bytes go to a temporary file of a unique name in the same folder, then are
renamed over the target (`os.replace`, atomic on one file system), so two writers at once
(two Airflow runs, two threads) leave one whole file or the other, and a writer killed
half-way leaves only its temporary file, which is removed when it can be."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_whole(path: Path, data: bytes) -> Path:
    """Write `data` to `path` whole (module docstring), making its folder when missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
    return path
