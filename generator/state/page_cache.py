"""What each page of the last release was made from, so that a build renders only what changed.

A page is a pure function of its template, the code, and the values handed to the template.
The build hashes those values (`digest_of`, which refuses any value it cannot hash exactly
rather than guess) into the page's key; when the last release has the file under the same key,
the new release takes that file as it is (a hard link) instead of rendering it again. The
result is the same bytes a full render gives: the key covers everything the page is made of,
and anything it might not cover (the code, the templates, the versions of Jinja2 and
MarkupSafe) is folded into a rules version that empties the memo when it changes.

The memo (`<private>/cache/pages.json`) belongs to one release: it records the SHA-256 of the
`SHA256SUMS` it was saved with, and is used only while the site in the output folder still has
that file. It is written after the new release is swapped in; a kill before that leaves an
old memo that no longer matches, and the next build renders everything. The memo only says
which file may be taken; taking it (a hard link, if the file still holds those bytes) is the
writer's work (generator.build.writer).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from generator.state.cache_file import code_bound_bytes, read_code_bound, write_cache

MEMO_NAME = "pages.json"


class PageMemo:
    """The keys of the last release's pages, and those of the release being built. `last_sums`
    is the last release's SHA256SUMS (None: no last release to take pages from)."""

    def __init__(self, path: Path | None, last_sums: bytes | None) -> None:
        self.path = path
        self.old: dict[str, list[str]] = {}
        self.new: dict[str, str] = {}
        self.reused = 0
        self.rendered = 0
        if path is not None and last_sums is not None:
            self.old = _load(path, last_sums)

    @property
    def knows_last_release(self) -> bool:
        """Whether the last release was made by this very code, and is the one in the output
        folder: what else a build may take from it as it is, the memo vouches for."""
        return bool(self.old)

    def known(self, rel: str, key: str) -> str | None:
        """Page `rel` of this release is made from the values whose key is `key`: the SHA-256 the
        last release's file must still have to be taken as it is, when that file was made from the
        very same values; else None, and the caller renders it."""
        if self.path is None:
            return None
        self.new[rel] = key
        old = self.old.get(rel)
        return old[1] if old is not None and old[0] == key else None

    def written(self) -> None:
        """The release is written: the last release's keys are no longer asked for, only this
        one's kept (for `save`)."""
        self.old = {}

    def save(self, hashes: dict[str, str], release: str) -> None:
        """Remember this release's keys, once it is the site in the output folder (`release`:
        the SHA-256 of the SHA256SUMS the build wrote). A failure to write costs the next build a
        full render, no more."""
        if self.path is None:
            return
        pages = {rel: [key, hashes[rel]] for rel, key in self.new.items() if rel in hashes}
        write_cache(self.path, code_bound_bytes("pages", pages, release=release))


def _load(path: Path, sums: bytes) -> dict[str, list[str]]:
    """The memo's pages if it belongs to the release whose SHA256SUMS is `sums`, else nothing."""
    pages = read_code_bound(path, "pages", release=hashlib.sha256(sums).hexdigest())
    return {
        rel: row
        for rel, row in pages.items()
        if isinstance(rel, str) and isinstance(row, list) and len(row) == 2 and all(isinstance(x, str) for x in row)
    }


def memo_path(private: Path) -> Path:
    return private / "cache" / MEMO_NAME
