"""The SHA-256 of every input and published file as the last build left them, by identity: so that a
build after one event hashes the files that changed, not every file of the program and the site.

As Git's index does: a file whose identity (mode, size, modification and change times, inode) is
the one recorded was not written since, short of resetting its change time, which takes the
system's clock; its bytes are the ones hashed then. A file changed within the clock's tick of its
recording could keep its times, so a row is recorded only for a file whose times are older than
the build record's mark by more than a tick (build_cache.py writes the mark just before it looks at
the files; every file is that old when it records them at all), and any later change gives a
later time.

Rows are keyed by place: `data/…` and `private/…` for the inputs (as build_cache reads them),
`site/…` for the published site. A build uses a row to know an input's SHA-256 without reading it
(build_cache.read_inputs) and to take a file of the last release as it is without hashing it
(SiteWriter.link_previous); the build's own check then hashes the files it wrote. Like every
cache, it is a shortcut: a missing, damaged or foreign file is ignored (its blocks are checked
against their SHA-256, as cache_file.BlockFile does), and `build --full` reads none.
"""

from __future__ import annotations

import bisect
import itertools
import os
import stat
from array import array
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from generator.program.datadir import Paths
from generator.state.cache_file import BlockFile, block_file_pieces, write_cache

INDEX_NAME = "hashes.index"
_MAGIC = b"transparency hash index v1\n"
_FIELDS = 5  # mode, size, mtime_ns, ctime_ns, inode

# A million-item program's site and inputs are some 375,000 files: the index is flat arrays (the
# places NUL-joined, five int64 and 32 bytes a file), some 60 bytes a file, read whole once.


def index_path(paths: Paths) -> Path:
    return paths.private / "cache" / INDEX_NAME


def identity_row(st: os.stat_result) -> tuple[int, ...]:
    """A file's identity as the index and the build record keep it: mode, size, modification and
    change times, inode."""
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


# Identities are kept as signed 64-bit words: an inode number past 2**63 (some network and
# FUSE file systems give them) is kept as its two's complement, and read back as it was.
_INO = 4
_WRAP = 1 << 64
_CUT = len("site/")  # a published file's place, less this, is its path in the site


def _stored(ident: tuple[int, ...]) -> tuple[int, ...]:
    if len(ident) != _FIELDS:
        raise ValueError(f"an identity has {_FIELDS} fields, not {len(ident)}")
    ino = ident[_INO]
    return (*ident[:_INO], ino - _WRAP if ino >= 1 << 63 else ino)


def _read_back(words: array[int], i: int) -> tuple[int, ...]:
    row = words[_FIELDS * i : _FIELDS * (i + 1)]
    ino = row[_INO]
    return (*row[:_INO], ino + _WRAP if ino < 0 else ino)


class FileRows:
    """Rows of the index being gathered (place, identity as `identity_row` gives it, SHA-256),
    kept as the index keeps them: flat arrays, not a tuple of objects a row. A build holds a row
    for each of its inputs from the moment it reads them until it records them (350,000 at a
    million items until the private stores no build reads were left out, 52,000 since), and hands
    them to another process (pickled): as tuples that was some 170 MB, and as many objects for
    the pickler to remember."""

    def __init__(self) -> None:
        self._places: list[str] = []
        self._idents = array("q")
        self._shas = bytearray()

    def __len__(self) -> int:
        return len(self._places)

    def append(self, place: str, ident: tuple[int, ...], sha256: str) -> None:
        words, sha = array("q", _stored(ident)), bytes.fromhex(sha256)  # refused before anything is kept
        if len(sha) != 32:
            raise ValueError("a SHA-256 is 32 bytes")
        self._places.append(place)
        self._idents.extend(words)
        self._shas += sha

    def set_sha256(self, at: int, sha256: str) -> None:
        """The SHA-256 of the row appended `at`-th, learnt after it was appended."""
        sha = bytes.fromhex(sha256)
        if len(sha) != 32 or not 0 <= at < len(self._places):
            raise ValueError("a SHA-256 is 32 bytes, of a row appended")
        self._shas[32 * at : 32 * (at + 1)] = sha

    def __iter__(self) -> Iterator[tuple[str, tuple[int, ...], str]]:
        idents, shas = self._idents, self._shas
        for i, place in enumerate(self._places):
            yield place, _read_back(idents, i), shas[32 * i : 32 * (i + 1)].hex()

    def regular_under(self, prefixes: tuple[str, ...]) -> dict[str, str]:
        """Place -> SHA-256 of the regular files whose place starts with one of `prefixes`: only
        those rows are decoded (a build asks for its run specs' and certificates' folders,
        some 50,000 of 52,000 inputs at a million items)."""
        idents, shas = self._idents, self._shas
        return {
            place: shas[32 * i : 32 * (i + 1)].hex()
            for i, place in enumerate(self._places)
            if place.startswith(prefixes) and stat.S_ISREG(idents[_FIELDS * i])
        }

    def __getstate__(self) -> tuple[int, str, array[int], bytes]:
        # One string for every place: the pickler remembers one object, not one a row.
        return len(self._places), "\0".join(self._places), self._idents, bytes(self._shas)

    def __setstate__(self, state: tuple[int, str, array[int], bytes]) -> None:
        count, places, self._idents, shas = state
        self._places = places.split("\0") if count else []
        self._shas = bytearray(shas)


class IdentityRows:
    """Places and their identities (`identity_row`), kept flat as FileRows keeps them: a look at
    every file of a million-item site holds 330,000 of them from the look until the record."""

    def __init__(self) -> None:
        self._places: list[str] = []
        self._idents = array("q")

    def __len__(self) -> int:
        return len(self._places)

    def append(self, place: str, ident: tuple[int, ...]) -> None:
        self._idents.extend(_stored(ident))
        self._places.append(place)

    def __iter__(self) -> Iterator[tuple[str, tuple[int, ...]]]:
        idents = self._idents
        for i, place in enumerate(self._places):
            yield place, _read_back(idents, i)

    @property
    def places(self) -> list[str]:
        return self._places

    def modes(self) -> array[int]:
        return self._idents[0::_FIELDS]

    def newest(self) -> int:
        """The latest modification or change time among the rows; 0 for none."""
        if not self._places:
            return 0
        return max(max(self._idents[2::_FIELDS]), max(self._idents[3::_FIELDS]))

    def feed(self, h: Any, shape: bool = False) -> None:
        """Hash the rows into `h` as two blocks (the places, NUL-joined, and the identities as
        stored), not a line a row: a look at 330,000 files made as many strings to hash. With
        `shape`, the change times are left out (build_cache.SiteLook.shape)."""
        words = self._idents
        if shape:
            words = array("q", words)
            words[3::_FIELDS] = array("q", bytes(8 * len(self._places)))
        h.update(b"%d\0" % len(self._places))
        h.update("\0".join(self._places).encode("utf-8", "surrogateescape"))
        h.update(b"\0")
        h.update(words.tobytes())


class _Damaged(Exception):
    pass


class HashIndex:
    """Place -> (identity, SHA-256) of the files the last build recorded, sorted by place."""

    def __init__(self, places: list[str] | None = None, idents: array[int] | None = None, shas: bytes = b"") -> None:
        self._places = places or []
        self._idents = idents if idents is not None else array("q")
        self._shas = shas
        self.used = 0  # files whose hash was taken from here, for tests and progress

    def __len__(self) -> int:
        return len(self._places)

    def sha256(self, place: str, st: os.stat_result) -> str | None:
        """The SHA-256 recorded for the regular file at `place` if `st` is the identity it had."""
        i = bisect.bisect_left(self._places, place)
        if i == len(self._places) or self._places[i] != place or not stat.S_ISREG(st.st_mode):
            return None
        if _read_back(self._idents, i) != identity_row(st):
            return None
        self.used += 1
        return self._shas[32 * i : 32 * (i + 1)].hex()


def load_index(paths: Paths) -> HashIndex:
    """The index the last build left; an empty one if there is none or it is not one."""

    def damaged(section: str, block: int) -> BaseException:
        return _Damaged(f"{section} block {block}")

    try:
        f = BlockFile(index_path(paths), _MAGIC, damaged)
    except (OSError, ValueError):
        return HashIndex()
    try:
        with f.f:
            blob, idents, shas = (f.sections[n].whole() for n in ("places", "idents", "shas"))
        places = bytes(blob).decode("utf-8", "surrogateescape").split("\0") if blob else []
        n = len(places)
        if len(idents) != _FIELDS * n or len(shas) != 32 * n or any(a >= b for a, b in itertools.pairwise(places)):
            return HashIndex()
        return HashIndex(places, idents, bytes(shas))
    except (_Damaged, KeyError, ValueError, TypeError):
        return HashIndex()


def save_index(
    paths: Paths,
    settled_before: int,
    files: Iterable[tuple[str, tuple[int, ...], str]],
    site: IdentityRows | None = None,
    site_hashes: Mapping[str, str] | None = None,
) -> int:
    """Record `files` (place, identity as `identity_row` gives it, SHA-256), each only if it is a regular
    file whose times are older than `settled_before` (the mark less a tick); how many were
    recorded. The rows replace the last build's: a file no longer read is no longer in them.

    `site`: the published files' rows as a look kept them (places `site/<path>`), each recorded by
    the same rule with its SHA-256 in `site_hashes` (by path), where it has one: taken from the
    look's arrays as they are, not a tuple a file."""
    rows = sorted(
        (place, ident, sha)
        for place, ident, sha in files
        if len(ident) == _FIELDS and stat.S_ISREG(ident[0]) and max(ident[2], ident[3]) < settled_before
    )
    places = [place for place, _, _ in rows]
    idents = array("q", (n for _, ident, _ in rows for n in _stored(ident)))
    shas = "".join(sha for _, _, sha in rows)
    if site is not None and site_hashes is not None:
        words = site._idents
        modes, mtimes, ctimes = words[0::_FIELDS], words[2::_FIELDS], words[3::_FIELDS]
        keep = [
            i
            for i, place in enumerate(site.places)
            if stat.S_ISREG(modes[i]) and max(mtimes[i], ctimes[i]) < settled_before and place[_CUT:] in site_hashes
        ]
        keep.sort(key=site.places.__getitem__)
        taken = [site.places[i] for i in keep]
        if places and taken and places[-1] >= taken[0]:  # not so for any site a build makes
            return save_index(paths, settled_before, [*rows, *_site_rows(site, keep, site_hashes)])
        places += taken
        for i in keep:
            idents.extend(words[_FIELDS * i : _FIELDS * (i + 1)])
        shas += "".join(site_hashes[place[_CUT:]] for place in taken)
    if len(shas) != 64 * len(places):
        raise ValueError("a SHA-256 is 64 hexadecimal digits")
    data, _ = block_file_pieces(
        _MAGIC,
        {"files": len(places)},
        [
            ("places", "B", "\0".join(places).encode("utf-8", "surrogateescape")),
            ("idents", "q", idents.tobytes()),
            ("shas", "B", bytes.fromhex(shas)),
        ],
    )
    return len(places) if write_cache(index_path(paths), data) else 0


def _site_rows(
    site: IdentityRows, keep: list[int], site_hashes: Mapping[str, str]
) -> Iterator[tuple[str, tuple[int, ...], str]]:
    for i in keep:
        place = site.places[i]
        yield place, _read_back(site._idents, i), site_hashes[place[_CUT:]]
