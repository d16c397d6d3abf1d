"""Reading a file someone else chose (a site's, a mirror's): a regular file or nothing.

A path inside a folder an attacker laid out may be a FIFO, whose open() waits for a writer
forever, a device that never ends, or a link to any file of this machine. Opening without
blocking and without following a final link, then asking the open file what it is (fstat),
leaves no moment in which the path could be swapped for something else; reading one byte past a
bound says when the file is too large without reading all of it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

# Absent on Windows, where a FIFO cannot be opened as a file and a link is seen by lstat.
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegular(OSError):
    """The path is a link, a FIFO, a device, a socket or a folder: not a file to read."""


class TooLarge(OSError):
    """The file holds more bytes than the bound its kind allows."""


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of `path` if it is a regular file of at most `limit` bytes. FileNotFoundError
    when nothing is there, NotRegular for anything else there (a final link included), TooLarge
    past the bound, another OSError when it cannot be read."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError as e:
        if e.errno == errno.ELOOP:  # O_NOFOLLOW's answer to a final link
            raise NotRegular(errno.ELOOP, "a symbolic link, not a regular file", str(path)) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file (a FIFO, a device, a socket or a folder)", str(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a regular file never blocks; undo O_NONBLOCK for plain reads
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise TooLarge(errno.EFBIG, f"larger than the {limit} bytes such a file can have", str(path))
    return b"".join(chunks)
