"""What publishing needs of a place to put a site, whichever it is (an S3 bucket, a folder).

Two writes: `create`, which makes an object only if none is at its key and otherwise compares
bytes (the same bytes are the same object, left alone; other bytes are a conflict, never
overwritten), and `replace`, which swaps an object for a whole new one. Readers see an object's
old bytes or its new ones, never a part: a folder renames a finished file into place, and an
object store makes an object visible only once its upload completes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from generator.core.object_kinds import Headers


def file_sha256(path: Path) -> str:
    """The SHA-256 (hex) of a file's bytes, read in chunks, never whole."""
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


class StoreError(Exception):
    """One object could not be written or read; the message says which and why."""


class Conflict(StoreError):
    """An immutable object is already there with other bytes."""


class Store(Protocol):
    """A place objects are published to; every key is a site path under the store's prefix."""

    description: str

    def create(self, key: str, source: Path, sha256: str, headers: Headers) -> bool:
        """Make `key` hold the bytes of `source` (whose SHA-256 is `sha256`) if nothing is there:
        True if it made it, False if the same bytes were already there; Conflict otherwise."""
        ...

    def replace(self, key: str, source: Path, sha256: str, headers: Headers) -> None:
        """Make `key` hold the bytes of `source`, whatever it held."""
        ...

    def delete(self, key: str) -> None:
        """Remove `key` (a page no release lists any more); nothing if it is not there."""
        ...

    def fetch(self, key: str, limit: int) -> bytes | None:
        """The bytes at `key` (at most `limit`; StoreError beyond), or None if there is none."""
        ...

    def digest(self, key: str) -> str | None:
        """The SHA-256 (hex) of the bytes at `key`, read and hashed; None if there is no object."""
        ...

    def keys(self) -> Iterator[str]:
        """Every key under the store's prefix, sorted."""
        ...

    def identity(self) -> str:
        """The store's name for the record of what was published to it (an address is not enough:
        a relative folder, or one bucket name on two endpoints)."""
        ...

    def prepare(self) -> None:
        """Whatever the store needs before the first write (a bucket's CORS rule, say)."""
        ...
