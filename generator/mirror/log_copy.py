"""The mirror's copy of one log on disk: `<DIR>/<lowercase hex SHA-256 of the origin>/`, laid out as
C2SP tlog-tiles (`checkpoint`, `tile/<L>/<N>[.p/<W>]`, `tile/entries/<N>[.p/<W>]`) and served as it
lies, c2sp.org/tlog-mirror's monitoring prefix followed by the origin's hash.

What makes the copy safe to kill at any moment:

- every file is written whole or not at all: a temporary file beside it (a dot name, which the
  mirror's server never serves), fsynced, renamed into place, then its folder fsynced; a folder
  made on the way is fsynced into its parent, so that after a power loss no folder on the disk
  lacks one it held;
- the checkpoint is written last, once every tile of its tree is durably on disk (pull.py): a kill
  leaves the old checkpoint with all of its tiles, and perhaps some tiles of the next tree that no
  checkpoint names yet, or the new checkpoint with all of its tiles;
- nothing is deleted or changed in place: a full tile never changes, and a partial tile of an
  earlier size stays right for that size's checkpoint, which a reader may still hold.

A tile on disk that the stored checkpoint does not cover (left by a run that was killed or refused)
is no more trusted than the site: pull.py checks it as it checks a fetched one. One run at a time
per log: a lock file beside the copy (`<DIR>/.<origin hash>.lock`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from generator.core.regularfile import NotRegular, read_regular
from generator.mirror.mirror_errors import MirrorError
from generator.verifier import (
    MAX_LEAF_BYTES,
    TILE_WIDTH,
    CosignerKey,
    FormatError,
    NoteError,
    parse_checkpoint,
    show,
    verify_cosignatures,
)

CHECKPOINT = "checkpoint"
MAX_CHECKPOINT_BYTES = 1 << 16  # a checkpoint with a hundred cosignatures is under 20 kB
MAX_TILE_BYTES = TILE_WIDTH * (2 + MAX_LEAF_BYTES)  # an entry bundle of 256 leaves, each length-prefixed
_FILE_MODE = 0o644  # the copy is public: served to anyone
_FOLDER_MODE = 0o755


def origin_hash(origin: str) -> str:
    """The name of a log's folder: the lowercase hex SHA-256 of its origin (an origin is text from
    a log, never a file name)."""
    return hashlib.sha256(origin.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class MirrorCheckpoint:
    """The mirror's checkpoint of a log as stored: the note (the log's checkpoint text and
    signatures, then the mirror's cosignature) and the tree it signs."""

    note: bytes
    size: int
    root: bytes


class LogCopy:
    """The copy of the log `origin` in the mirror's folder `root`."""

    def __init__(self, root: Path, origin: str) -> None:
        self.root = root
        self.origin = origin
        self.folder = root / origin_hash(origin)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """One run at a time for this log: two would race, and the slower could write back an
        older checkpoint over a newer one."""
        lock = self.root / f".{origin_hash(self.origin)}.lock"
        try:
            self._make_folders(self.root)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as e:
            raise MirrorError(f"{self.root}: cannot keep a mirror there ({e.strerror or e})") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise MirrorError(f"{self.folder}: another run is updating this copy of {show(self.origin)}") from None
            yield
        finally:
            os.close(fd)

    def checkpoint(self, mirror: CosignerKey) -> MirrorCheckpoint | None:
        """The mirror's checkpoint of this log, or None before the first: a note of this log's
        checkpoint, cosigned by this mirror's key. Anything else there is an error, never a fresh
        start: the checkpoint is what the mirror refuses to go back from or fork."""
        where = self.folder / CHECKPOINT
        data = self.read(CHECKPOINT, MAX_CHECKPOINT_BYTES)
        if data is None:
            return None
        try:
            cosigned = verify_cosignatures(data, [mirror])
            text = data.decode("utf-8")  # verify_cosignatures read it as UTF-8, with its empty line
            origin, size, root = parse_checkpoint(text[: text.rfind("\n\n") + 1])
        except (NoteError, FormatError) as e:
            raise MirrorError(f"{where}: not a checkpoint this mirror wrote: {e}") from None
        if mirror.name not in cosigned:
            raise MirrorError(
                f"{where}: not cosigned by this mirror's key {mirror.vkey}: the copy was made with another key "
                "(follow with that key, or into another --out folder)"
            )
        if origin != self.origin:
            raise MirrorError(f"{where}: a checkpoint of {show(origin)}, not of {show(self.origin)}")
        return MirrorCheckpoint(data, size, root)

    def holds(self, rel: str) -> bool:
        """Whether the copy has a regular file at `rel` (a link there is not one)."""
        try:
            return stat.S_ISREG(os.lstat(self.folder / rel).st_mode)
        except OSError:
            return False

    def read(self, rel: str, limit: int = MAX_TILE_BYTES) -> bytes | None:
        """The bytes of the copy's file `rel`, or None when it has none, or something else than a
        regular file there (which writing the file replaces)."""
        try:
            return read_regular(self.folder / rel, limit)
        except (FileNotFoundError, NotADirectoryError, NotRegular):
            return None
        except OSError as e:
            raise MirrorError(f"{self.folder / rel}: cannot read it: {e.strerror or e}") from None

    def write(self, rel: str, data: bytes) -> None:
        """Write the copy's file `rel` durably: whole or not at all, its folders and itself on the
        disk once this returns."""
        path = self.folder / rel
        try:
            self._make_folders(path.parent)
            _replace_durably(path, data)
        except OSError as e:
            raise MirrorError(f"{path}: cannot write it: {e.strerror or e}") from None

    def write_checkpoint(self, note: bytes) -> None:
        """Replace the mirror's checkpoint, durably and atomically: the last write of a run, once
        every tile of its tree is on the disk."""
        self.write(CHECKPOINT, note)

    @staticmethod
    def _make_folders(folder: Path) -> None:
        """`folder` and the folders above it that are missing, each fsynced into its parent."""
        missing = []
        while not folder.is_dir():
            missing.append(folder)
            folder = folder.parent
        for made in reversed(missing):
            made.mkdir(_FOLDER_MODE)  # a file in the way raises, as it should
            _fsync_folder(made.parent)


def _replace_durably(path: Path, data: bytes) -> None:
    """`data` at `path`, whole or not at all: a temporary file beside it (a dot name; a leftover of
    a killed run, or a link, there is removed, never written through), fsynced, renamed over the
    path (a link there is replaced, not followed), the folder fsynced."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, _FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), _FILE_MODE)  # the umask filters O_CREAT's mode
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
