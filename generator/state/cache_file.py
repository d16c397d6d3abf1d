"""Writing a file of the private cache: whole or not at all, never flushed.

A cache (each `*_cache` module of generator/state/) is only a shortcut: each reader
checks what it reads (a checksum, the bytes it is bound to) and falls back to the slow way. So
a write needs no fsync: a crash leaves the old file, the new one, or one its reader refuses. A
failure to write is not an error either; it costs the next reader its shortcut.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

_CHUNK = 1 << 20


def hash_prefix(f: BinaryIO, n: int) -> Any:
    """The SHA-256 object of the next `n` bytes of `f` (read a megabyte at a time, in C), or None
    if `f` ends before: what binds a cache to the bytes of the ledger it was made from."""
    h = hashlib.sha256()
    while n:
        chunk = f.read(min(_CHUNK, n))
        if not chunk:
            return None
        h.update(chunk)
        n -= len(chunk)
    return h


def write_cache(path: Path, data: bytes) -> bool:
    """Replace `path` with `data` (a temporary file renamed over it); False if it could not."""
    staged = stage_cache(path, data)
    return staged is not None and staged.commit()


class Staged:
    """A cache file written beside its place, not yet in it: a build stages its caches before
    it verifies (so that the state they are made from can be freed first) and puts them in
    place only once its release is published."""

    def __init__(self, tmp: str, path: Path) -> None:
        self.tmp = tmp
        self.path = path

    def commit(self) -> bool:
        try:
            os.replace(self.tmp, self.path)
        except OSError:
            self.discard()
            return False
        return True

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.tmp)


def stage_cache(path: Path, data: bytes) -> Staged | None:
    """`data` written to a temporary file beside `path`; None if it could not be."""
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return None
    return Staged(tmp, path)
