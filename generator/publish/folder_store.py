"""A folder as a store: for a web server's document root, or a copy a static host uploads.

A new file is written beside its place under a temporary name, flushed to disk, then linked
(immutable: the link fails if a file is already there) or renamed (a page) into place, so a
reader, and a kill at any moment, leaves every path with its old bytes or its new ones. On a
file system without hard links, an immutable file is renamed into place once it is seen absent:
only one publish to a target runs at a time (the command's lock), so nothing else can put a file
there in between. The folders whose entries changed are flushed before `SHA256SUMS` and the
checkpoint are replaced, so that after a power loss a checkpoint never names files the disk lost.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from generator.core import layout
from generator.core.object_kinds import Headers
from generator.publish.store import Conflict, StoreError, file_sha256

_CHUNK = 1 << 20
# What os.link raises where a file system has no hard links (FAT, some network and FUSE mounts).
_NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK})
# Replaced only once everything they name is on the disk.
_NAMING = frozenset({layout.SUMS, layout.SUMS_SIG, layout.CHECKPOINT})
# Temporary files start with this, so a folder left by a kill shows what they are, and `keys`
# skips them.
TEMP_PREFIX = ".publish-tmp-"


class FolderStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.description = str(root)
        self._dirty: set[Path] = set()  # folders with entries not yet flushed

    def _place(self, key: str) -> Path:
        parts = key.split("/")
        if not key or key.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise StoreError(f"{key}: not a relative path inside the site")
        return self.root.joinpath(*parts)

    def _staged(self, dest: Path, source: Path, sha256: str) -> Path:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.parent / f"{TEMP_PREFIX}{os.getpid()}-{dest.name}"
        h = hashlib.sha256()
        with source.open("rb") as src, tmp.open("wb") as out:
            while chunk := src.read(_CHUNK):
                h.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if h.hexdigest() != sha256:
            tmp.unlink()
            raise StoreError(
                f"{source}: its bytes changed while it was published (SHA-256 {h.hexdigest()}, expected {sha256})"
            )
        os.chmod(tmp, 0o644)
        return tmp

    def create(self, key: str, source: Path, sha256: str, headers: Headers) -> bool:
        dest = self._place(key)
        if dest.exists():
            return self._same(key, dest, sha256)
        tmp = self._staged(dest, source, sha256)
        try:
            os.link(tmp, dest)
        except FileExistsError:
            return self._same(key, dest, sha256)
        except OSError as e:
            if e.errno not in _NO_LINKS:
                raise
            if dest.exists():  # no other publisher runs (the lock): absent now, absent at the rename
                return self._same(key, dest, sha256)
            os.replace(tmp, dest)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        self._dirty.add(dest.parent)
        return True

    def _flush_folders(self) -> None:
        for folder in sorted(self._dirty):
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        self._dirty.clear()

    def _same(self, key: str, dest: Path, sha256: str) -> bool:
        there = file_sha256(dest) if dest.is_file() and not dest.is_symlink() else "not a regular file"
        if there != sha256:
            raise Conflict(f"{key}: already published with other bytes (SHA-256 {there}, this release's {sha256})")
        return False

    def replace(self, key: str, source: Path, sha256: str, headers: Headers) -> None:
        dest = self._place(key)
        tmp = self._staged(dest, source, sha256)
        if key in _NAMING:
            self._flush_folders()
        os.replace(tmp, dest)
        self._dirty.add(dest.parent)
        if key == layout.CHECKPOINT:
            self._flush_folders()

    def delete(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._place(key).unlink()

    def fetch(self, key: str, limit: int) -> bytes | None:
        dest = self._place(key)
        try:
            if dest.is_symlink() or not dest.is_file():
                return None if not dest.exists() else b""
            if dest.stat().st_size > limit:
                raise StoreError(f"{dest}: more than {limit} bytes")
            return dest.read_bytes()
        except OSError as e:
            raise StoreError(f"{dest}: {e.strerror or e}") from None

    def digest(self, key: str) -> str | None:
        dest = self._place(key)
        try:
            if not dest.exists():
                return None
            if not dest.is_file() or dest.is_symlink():
                return "not a regular file"
            return file_sha256(dest)
        except OSError as e:
            raise StoreError(f"{dest}: {e.strerror or e}") from None

    def keys(self) -> Iterator[str]:
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames.sort()
            rel = Path(dirpath).relative_to(self.root)
            for name in filenames:
                if not name.startswith(TEMP_PREFIX):
                    found.append((rel / name).as_posix())
        yield from sorted(found, key=lambda k: k.encode())

    def identity(self) -> str:
        """What names this folder for the record of what was published to it: its real path."""
        return str(self.root.resolve())

    def prepare(self) -> None:
        try:
            if self.root.exists() and not self.root.is_dir():
                raise StoreError(f"{self.root}: not a folder")
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"{self.root}: {e.strerror or e}") from None


def remove_leftovers(root: Path) -> None:
    """Temporary files a killed publish left; the next publish removes them before it starts."""
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            if name.startswith(TEMP_PREFIX):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(dirpath, name))
