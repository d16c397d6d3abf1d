"""What the last release lists, so that a build after one event does not read its checksum tree
again: at a million items, 47,000 list files naming 330,000.

Every file a release lists, with its SHA-256, is a function of its root `SHA256SUMS` alone (each
list of the tree is named, with its SHA-256, by its parent; generator.build.previous_release
reads them), so the memory (`<private>/cache/listing`) is bound to the SHA-256 of that root and
to the code that reads a tree (`rules_version`), and to nothing else. It is written by a build
once its release is swapped in, from the SHA-256 of every file it wrote, which is what its tree
lists. A list file edited in the published folder changes nothing here: what a build takes from
the last release is still checked file by file (generator.build.writer).

The file: a line `transparency listing v1 <rules> <release> <count> <sha256 of the rest>`, then
one line a file, `<sha256> <path>`, sorted by path. A file that is torn, of another release or
of other code is no memory: the build reads the tree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from generator.core.digest import rules_version
from generator.program.datadir import Paths
from generator.state.cache_file import write_cache

LISTING_NAME = "listing"
_MAGIC = "transparency listing v1"


def listing_path(paths: Paths) -> Path:
    return paths.private / "cache" / LISTING_NAME


def load(paths: Paths, sums: bytes | None) -> dict[str, str] | None:
    """Path -> SHA-256 of every file the release whose root is `sums` lists, as remembered; None
    when nothing is remembered of that release."""
    if sums is None:
        return None
    try:
        data = listing_path(paths).read_bytes()
    except OSError:
        return None
    head, _, rest = data.partition(b"\n")
    fields = head.decode("ascii", "replace").split(" ")
    release = hashlib.sha256(sums).hexdigest()
    if fields[:3] != _MAGIC.split(" ") or len(fields) != 7 or fields[3:5] != [rules_version(), release]:
        return None
    if not fields[5].isdigit() or hashlib.sha256(rest).hexdigest() != fields[6]:
        return None
    try:
        text = rest.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if lines[-1] != "" or len(lines) - 1 != int(fields[5]):
        return None
    listing = {}
    for line in lines[:-1]:
        sha, _, rel = line.partition(" ")
        if len(sha) != 64 or not rel:
            return None
        listing[rel] = sha
    return listing if len(listing) == int(fields[5]) else None


def save(paths: Paths, release: str, listing: Mapping[str, str]) -> None:
    """Remember that the release whose root `SHA256SUMS` has the SHA-256 `release` lists
    `listing`."""
    if any("\n" in rel for rel in listing):
        return  # a path no site holds (layout refuses it): nothing remembered rather than a torn line
    body = "".join(f"{listing[rel]} {rel}\n" for rel in sorted(listing, key=lambda p: p.encode())).encode()
    head = f"{_MAGIC} {rules_version()} {release} {len(listing)} {hashlib.sha256(body).hexdigest()}\n"
    write_cache(listing_path(paths), [head.encode(), body])
