"""Writing a file of the private cache: whole or not at all, never flushed.

A cache (generator.ledgercache, treecache, memo, rechecks) is only a shortcut: each reader
checks what it reads (a checksum, the bytes it is bound to) and falls back to the slow way. So
a write needs no fsync: a crash leaves the old file, the new one, or one its reader refuses. A
failure to write is not an error either; it costs the next reader its shortcut.
"""

from __future__ import annotations

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
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    except OSError:
        return False
    return True
