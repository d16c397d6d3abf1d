"""The last release: the site in the output folder before this build replaces it, the one input a
build reads back from its own output.

It is read for two reasons. What a release owes the last is read on every build: its keys and its
ledger (the new release must extend them, generator.build.release_continuity), its checkpoint
history (carried forward), its full tiles (never rewritten), the signature of a certificate whose
key this program no longer holds, its checkpoint's cosignatures (kept while the checkpoint is the
same), its checkpoint again for the verifier (`--since`), and, after writing, every artifact it
published (unchanged byte for byte). Its files taken as they are, which saves work and changes no
byte, only when `reuse` is set (not under `build --full`, which makes every byte anew): a file
whose bytes are those its SHA256SUMS lists is hard-linked instead of written, the page memo's pages
(generator.state.page_cache), the download archive's members, the search index's shards. Every
step that reads it names it in generator.commands.build_steps.
"""

from __future__ import annotations

import os
from pathlib import Path

from generator.core import layout
from generator.verifier import read_lists


class PreviousRelease:
    """The release in `folder` (which may hold nothing yet: a first build has no last release)."""

    def __init__(self, folder: Path, *, reuse: bool = True) -> None:
        self.folder = folder
        self._folder = os.fspath(folder)
        self.reuse = reuse
        self._sums: dict[str, str] | None = None

    def file(self, rel: str) -> Path:
        """Where the last release holds site path `rel` (the file may not exist)."""
        return self.folder / rel

    def file_name(self, rel: str) -> str:
        """`file(rel)` as a string: for the loops over every file of a release."""
        return f"{self._folder}/{rel}"

    @property
    def sums(self) -> dict[str, str]:
        """Site path -> SHA-256, from its SHA256SUMS: what it vouches each file holds. Empty
        without `reuse` (nothing is taken as it is) or when it has no SHA256SUMS of ours."""
        if self._sums is None:
            self._sums = listed_files(self.folder) if self.reuse else {}
        return self._sums

    def remember(self, listing: dict[str, str] | None) -> None:
        """What its SHA256SUMS lists, as a build remembered it of this very root
        (generator.state.listing_cache), so that the tree is not read again; None: read it."""
        if listing is not None and self.reuse and self._sums is None:
            self._sums = listing

    def digest(self, rel: str) -> str | None:
        """The SHA-256 its SHA256SUMS lists for `rel`, if any (and `reuse`)."""
        return self.sums.get(rel)

    def paths(self) -> list[str]:
        """Every path its SHA256SUMS lists (none without `reuse`)."""
        return list(self.sums)

    def sums_bytes(self) -> bytes | None:
        """Its SHA256SUMS as bytes, which names the release (the page memo belongs to one); None
        without `reuse` or when it cannot be read."""
        if not self.reuse:
            return None
        try:
            return self.file(layout.SUMS).read_bytes()
        except OSError:
            return None


def listed_files(site: Path) -> dict[str, str]:
    """path -> SHA-256 from a release's SHA256SUMS and, in format v3, every list of its tree
    (docs/formats/v3.md, 5); nothing if it has no SHA256SUMS. A list that cannot be read, or is
    not the bytes its parent lists, adds nothing: what it would have named is written anew."""
    try:
        root = (site / layout.SUMS).read_bytes()
    except OSError:
        return {}
    return read_lists(root, lambda rel: _read(site / rel))[0]


def _read(path: Path) -> bytes | None:
    try:
        return None if path.is_symlink() else path.read_bytes()
    except OSError:
        return None
