"""Files written whole: a reader, or a later run that trusts a file it finds, never sees half
of one. The bytes go to a temporary file of a unique name in the same folder, then are
renamed over the target (`os.replace`, atomic on one file system), so two writers at once
(two Airflow runs, two threads) leave one whole file or the other, and a writer killed
half-way leaves only its temporary file, which is removed when it can be. A read-modify-write
of files (an index rebuilt from what it finds, with its cache) holds `held` around it, so two
writers at once do not each write what they read before the other wrote."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
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


@contextlib.contextmanager
def held(lock: Path) -> Iterator[None]:
    """An exclusive lock on the file `lock` (created, never removed) for the block: one
    process or thread at a time, waited for; released when the block ends or its process
    dies (flock)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
