"""The shape of a listing the mirror refuses before it fetches anything (site/mirror.py
_check_shape): a path where another path is a folder, or where the mirror keeps its own files;
judged by one look a path as it was judged level by level."""

from __future__ import annotations

import random

from generator.verifier.site import mirror
from generator.verifier.site.remote import open_remote

SHA = "0123456789abcdef" * 4


def _shape_before(files: dict[str, str]) -> str | None:
    """The shape check as it read each path level by level (before it took a set of folders)."""
    for rel in sorted(files):
        if rel in ("SHA256SUMS", "SHA256SUMS.sig") or rel.split("/", 1)[0] == ".mirror-incoming":
            return "own"
        parts = rel.split("/")
        for n in range(1, len(parts)):
            if "/".join(parts[:n]) in files:
                return "clash"
    return None


def test_the_shape_of_a_listing_is_judged_as_level_by_level() -> None:
    # A listing the mirror refuses: a path where another is a folder, or where it keeps its own.
    draw = random.Random(20261207)
    names = [
        "a",
        "b",
        "a/b",
        "a/b/c",
        "b/c",
        "SHA256SUMS",
        "SHA256SUMS.sig",
        "SHA256SUMS/x",
        ".mirror-incoming",
        ".mirror-incoming/x",
        "c/.mirror-incoming",
    ]
    remote = open_remote("https://example.org/site/")
    for _ in range(3000):
        files = {p: SHA for p in draw.sample(names + [f"d/{n}" for n in range(5)], draw.randint(0, 5))}
        want = _shape_before(files)
        try:
            mirror._check_shape(remote, files)
            got = None
        except mirror.MirrorFailed as e:
            got = "own" if "a path the list itself or the mirror holds" in str(e) else "clash"
        # What the check refused level by level, it refuses; besides, a folder named as the
        # mirror's own list (which it writes as a file), which the mirror could not hold either.
        if want is not None:
            assert got is not None, files
        elif got is not None:
            assert got == "own" and "SHA256SUMS/x" in files, files
        if want == "own":
            assert got == "own", files
