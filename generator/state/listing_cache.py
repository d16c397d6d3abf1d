"""What the last release lists, so that a build after one event does not read its checksum tree
again: at a million items, 47,000 list files naming 330,000.

Every file a release lists, with its SHA-256, is a function of its root `SHA256SUMS` alone (each
list of the tree is named, with its SHA-256, by its parent; generator.build.previous_release
reads them), so the memory (`<private>/cache/listing`) is bound to the SHA-256 of that root and
to the code that reads a tree (`rules_version`), and to nothing else. It is written by a build
once its release is swapped in, from the SHA-256 of every file it wrote, which is what its tree
lists. A list file edited in the published folder changes nothing here: what a build takes from
the last release is still checked file by file (generator.build.writer).

The listing of the release a build replaces is kept as `listing.spare` (`keep_as_spare`): that
release becomes the spare, the next build's staging folder, which then removes the paths it
named that the new release does not list, instead of walking the folder (SiteWriter.prune).

The file: a line `transparency listing v1 <rules> <release> <count> <sha256 of the rest>`, then
one line a file, `<sha256> <path>`, sorted by path. A file that is torn, of another release or
of other code is no memory: the build reads the tree.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from generator.core.digest import rules_version
from generator.program.datadir import Paths
from generator.state.cache_file import write_cache

LISTING_NAME = "listing"
SPARE_LISTING_NAME = "listing.spare"
_MAGIC = "transparency listing v1"


def listing_path(paths: Paths) -> Path:
    return paths.private / "cache" / LISTING_NAME


def spare_listing_path(paths: Paths) -> Path:
    return paths.private / "cache" / SPARE_LISTING_NAME


def load(paths: Paths, sums: bytes | None) -> dict[str, str] | None:
    """Path -> SHA-256 of every file the release whose root is `sums` lists, as remembered; None
    when nothing is remembered of that release."""
    read = _Rows.open(listing_path(paths), hashlib.sha256(sums).hexdigest() if sums is not None else None)
    if read is None:
        return None
    listing = {}
    for sha, rel in read:
        if len(sha) != 64 or not rel:
            return None
        listing[rel] = sha
    return listing if len(listing) == read.count else None


def spare_paths(paths: Paths, release: str) -> Iterator[str] | None:
    """Every path the release whose root `SHA256SUMS` has the SHA-256 `release` lists, as
    remembered when it was replaced (`keep_as_spare`): what the spare release
    (generator.build.staging) holds, unless someone changed it, which the build's look at the
    staged site finds by its count. Read a line at a time, never whole. None when nothing is
    remembered of that release."""
    read = _Rows.open(spare_listing_path(paths), release)
    return None if read is None else (rel for _, rel in read)


class _Rows:
    """The (SHA-256, path) lines of a memory whose first line binds it to a release's root and to
    this code, and counts and hashes the rest, read one at a time from the file `open` checked:
    the same open file, so the lines read are the lines checked."""

    def __init__(self, f: BinaryIO, count: int) -> None:
        self._file, self.count = f, count

    @classmethod
    def open(cls, path: Path, release: str | None) -> _Rows | None:
        """The memory at `path` if it is of the release whose root has the SHA-256 `release`."""
        if release is None:
            return None
        try:
            f = path.open("rb")
        except OSError:
            return None
        try:
            fields = f.readline(1024).decode("ascii", "replace").rstrip("\n").split(" ")
            if fields[:3] != _MAGIC.split(" ") or len(fields) != 7 or fields[3:5] != [rules_version(), release]:
                f.close()
                return None
            # The whole file checked before a line is used, a MiB at a time: never held whole.
            start = f.tell()
            h, lines, last = hashlib.sha256(), 0, b"\n"
            while chunk := f.read(1 << 20):
                h.update(chunk)
                lines += chunk.count(b"\n")
                last = chunk[-1:]
            f.seek(start)
        except OSError:
            f.close()
            return None
        if not fields[5].isdigit() or int(fields[5]) != lines or last != b"\n" or h.hexdigest() != fields[6]:
            f.close()
            return None
        return cls(f, lines)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        # Every line ends in a newline (checked): one that is not UTF-8 ends the rows short.
        with self._file as f:
            try:
                for line in f:
                    sha, _, rel = line[:-1].decode("utf-8").partition(" ")
                    yield sha, rel
            except (OSError, UnicodeDecodeError):
                return


def keep_as_spare(paths: Paths) -> None:
    """The last release's listing, kept as the spare's before this release's takes its place:
    the release a build replaces becomes the next build's staging folder."""
    with contextlib.suppress(FileNotFoundError):
        os.replace(listing_path(paths), spare_listing_path(paths))


def save(paths: Paths, release: str, listing: Mapping[str, str]) -> None:
    """Remember that the release whose root `SHA256SUMS` has the SHA-256 `release` lists
    `listing`."""
    if any("\n" in rel for rel in listing):
        return  # a path no site holds (layout refuses it): nothing remembered rather than a torn line
    body = "".join(f"{listing[rel]} {rel}\n" for rel in sorted(listing, key=lambda p: p.encode())).encode()
    head = f"{_MAGIC} {rules_version()} {release} {len(listing)} {hashlib.sha256(body).hexdigest()}\n"
    write_cache(listing_path(paths), [head.encode(), body])
