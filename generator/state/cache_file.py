"""Writing a file of the private cache: whole or not at all, never flushed.

A cache (each `*_cache` module of generator/state/) is only a shortcut: each reader
checks what it reads (a checksum, the bytes it is bound to) and falls back to the slow way. So
a write needs no fsync: a crash leaves the old file, the new one, or one its reader refuses. A
failure to write is not an error either; it costs the next reader its shortcut.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from generator.core.digest import rules_version

_CHUNK = 1 << 20


def read_code_bound(path: Path, member: str, **bound: str) -> dict[str, Any]:
    """The object `member` of a JSON cache `{"v":1,"rules":…,…}` (`code_bound_bytes`) written by
    this very code and whose other members are `bound`; {} when the file is missing, torn, of
    other code or another release, or not of that shape. Its entries are the caller's to check."""
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("v") != 1 or doc.get("rules") != rules_version():
        return {}
    if any(doc.get(k) != v for k, v in bound.items()):
        return {}
    found = doc.get(member)
    return found if isinstance(found, dict) else {}


def code_bound_bytes(member: str, value: dict[str, Any], **bound: str) -> bytes:
    """A JSON cache of `value` (as `member`, sorted by key), bound to this code and to `bound`."""
    doc = {"v": 1, "rules": rules_version(), **bound, member: dict(sorted(value.items()))}
    return json.dumps(doc, separators=(",", ":")).encode()


# A file written in pieces, one after the other: bytes, or a view of an array's own.
Piece = bytes | bytearray | memoryview


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


def write_cache(path: Path, data: bytes | Sequence[Piece]) -> bool:
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


def stage_cache(path: Path, data: bytes | Sequence[Piece]) -> Staged | None:
    """`data` (bytes, or pieces written one after the other: a cache of a million-item ledger's
    arrays is never joined into one copy of them) written to a temporary file beside `path`;
    None if it could not be."""
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                for piece in [data] if isinstance(data, bytes | bytearray | memoryview) else data:
                    out.write(piece)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return None
    return Staged(tmp, path)


# A block file's blocks: what a lookup reads and checks.
BLOCK = 1 << 16


def block_file_pieces(
    magic: bytes, meta: dict[str, Any], sections: Sequence[tuple[str, str, Piece]]
) -> tuple[list[Piece], str]:
    """A file of flat arrays (`sections`: name, array typecode or "B" for bytes, their bytes) read
    a block at a time (BlockFile), as the pieces to write one after the other: `magic`, an 8-byte
    big-endian length, a JSON header (`meta`, the byte order, the block size, and each section's
    name, typecode, length and the SHA-256 of each of its blocks), the header's own SHA-256, then
    the sections. Also its id: the header's SHA-256."""
    header = json.dumps(
        {
            "meta": meta,
            "byteorder": sys.byteorder,
            "block": BLOCK,
            "sections": [
                [
                    name,
                    code,
                    len(data),
                    [hashlib.sha256(data[i : i + BLOCK]).hexdigest() for i in range(0, len(data), BLOCK)],
                ]
                for name, code, data in sections
            ],
        },
        separators=(",", ":"),
        sort_keys=True,
    ).encode()
    digest = hashlib.sha256(header).digest()
    return [magic, len(header).to_bytes(8, "big"), header, digest, *(data for _, _, data in sections)], digest.hex()


def block_file_bytes(
    magic: bytes, meta: dict[str, Any], sections: Sequence[tuple[str, str, Piece]]
) -> tuple[bytes, str]:
    """block_file_pieces, joined."""
    pieces, digest = block_file_pieces(magic, meta, sections)
    return b"".join(pieces), digest


class BlockFile:
    """A block file, open: its header checked, its sections read a block at a time, each block
    checked against its hash when first read. A block that does not match is passed to
    `on_damage` (section, block), which raises. ValueError for a file that is not one."""

    def __init__(self, path: Path, magic: bytes, on_damage: Callable[[str, int], BaseException]) -> None:
        self.path = path
        self.on_damage = on_damage
        self.f = path.open("rb")
        try:
            self._read_header(magic)
        except (KeyError, TypeError, IndexError) as e:  # a checksummed header written by hand
            self.f.close()
            raise ValueError(f"its header is malformed ({type(e).__name__}: {e})") from None
        except BaseException:
            self.f.close()
            raise

    def _read_header(self, magic: bytes) -> None:
        head = self.f.read(len(magic) + 8)
        if len(head) != len(magic) + 8 or not head.startswith(magic):
            raise ValueError("not a file of this kind and version")
        raw = self.f.read(int.from_bytes(head[-8:], "big"))
        digest = self.f.read(32)
        if hashlib.sha256(raw).digest() != digest:
            raise ValueError("its header does not match its checksum")
        self.id = digest.hex()
        header = json.loads(raw)
        if header["byteorder"] != sys.byteorder or header["block"] != BLOCK:
            raise ValueError("made on another machine or by another version")
        self.meta: dict[str, Any] = header["meta"]
        self.sections: dict[str, Section] = {}
        at = len(head) + len(raw) + 32
        for name, code, size, hashes in header["sections"]:
            self.sections[name] = Section(self, name, code, at, size, hashes)
            at += size
        if self.f.seek(0, 2) != at:
            raise ValueError("its length is not the one its header gives")


class Section:
    """One array of a block file, indexed like the array it was saved from (an int, or a slice
    of a byte section), read a block at a time."""

    def __init__(self, owner: BlockFile, name: str, code: str, start: int, size: int, hashes: list[str]) -> None:
        self.owner, self.name, self.code, self.start, self.size, self.hashes = owner, name, code, start, size, hashes
        self.itemsize = array(code).itemsize
        self.blocks: dict[int, memoryview] = {}
        if len(hashes) != -(-size // BLOCK) or size % self.itemsize or BLOCK % self.itemsize:
            raise ValueError(f"its section {name} is malformed")

    def __len__(self) -> int:
        return self.size // self.itemsize

    def _raw(self, n: int) -> bytes:
        self.owner.f.seek(self.start + n * BLOCK)
        data = self.owner.f.read(min(BLOCK, self.size - n * BLOCK))
        if hashlib.sha256(data).hexdigest() != self.hashes[n]:
            raise self.owner.on_damage(self.name, n)
        return data

    def _block(self, n: int) -> memoryview:
        view = self.blocks.get(n)
        if view is None:
            view = self.blocks[n] = memoryview(self._raw(n)).cast(self.code)  # type: ignore[call-overload]
        return view

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if self.code != "B" or step != 1:
                raise TypeError("only byte sections are sliced")
            return b"".join(
                self._block(n)[max(start, n * BLOCK) - n * BLOCK : min(stop, (n + 1) * BLOCK) - n * BLOCK].tobytes()
                for n in range(start // BLOCK, -(-stop // BLOCK))
            )
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{self.name} index out of range")
        per = BLOCK // self.itemsize
        return self._block(i // per)[i % per]

    def __iter__(self) -> Any:
        return iter(self.whole())

    def whole(self) -> Any:
        """The section read whole (every block checked), as a bytearray or an array."""
        out: Any = bytearray() if self.code == "B" else array(self.code)
        for n in range(len(self.hashes)):
            data = self._raw(n)
            if self.code == "B":
                out += data
            else:
                out.frombytes(data)
        return out
