"""Which download archive (or, in format v3, which download parts) this builder wrote last, and
with what: `<private>/cache/download.json`.

A build copies the compressed members of the last release's `download/site.zip` instead of
deflating them again (generator.build.site_archive) only when that archive is the one this
builder wrote, with the deflater it runs now (zlib and zipfile's Python): the record names the
archive's SHA-256 and that deflater. It is true of those bytes whether or not their release was
published. In format v3 (docs/formats/v3.md, 6) it names the parts instead: the SHA-256 of
their lines (`parts_digest`), so that a part the last release lists is known to be this builder's
and is kept, or its members copied, as the archive's are. A cache (generator.state.cache_file):
a missing or unreadable one, or a failure to write it, costs the next build a full deflate, no more.
"""

from __future__ import annotations

import hashlib
import json
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path

from generator.state.cache_file import write_cache

RECORD_NAME = "download.json"
# What deflates besides zlib (the level, the window, how headers are written) is zipfile's, so its version counts too.
DEFLATER = f"zlib {zlib.ZLIB_RUNTIME_VERSION}, Python {sys.version_info.major}.{sys.version_info.minor}"


def archive_cache_path(private: Path) -> Path:
    return private / "cache" / RECORD_NAME


def last_archive(path: Path) -> str | None:
    """The SHA-256 of the archive this builder last wrote with today's deflater; None if the
    record is missing, unreadable or of another deflater."""
    return _last(path, "archive")


def last_parts(path: Path) -> str | None:
    """The `parts_digest` of the download parts this builder last wrote with today's deflater (v3)."""
    return _last(path, "parts")


def _last(path: Path, member: str) -> str | None:
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("v") != 1 or doc.get("deflater") != DEFLATER:
        return None
    digest = doc.get(member)
    return digest if isinstance(digest, str) else None


def remember_archive(path: Path, sha256: str) -> None:
    """Tell the next build which archive this one wrote, and with what."""
    doc = {"v": 1, "archive": sha256, "deflater": DEFLATER}
    write_cache(path, json.dumps(doc, sort_keys=True).encode() + b"\n")


def remember_parts(path: Path, digest: str) -> None:
    """Tell the next build which download parts this one wrote (their `parts_digest`), and with what."""
    doc = {"v": 1, "parts": digest, "deflater": DEFLATER}
    write_cache(path, json.dumps(doc, sort_keys=True).encode() + b"\n")


def parts_digest(rows: Iterable[tuple[str, str]]) -> str:
    """What names a set of download parts: the SHA-256 of their (path, SHA-256) rows as checksum lines."""
    lines = "".join(f"{sha}  {p}\n" for p, sha in sorted(rows, key=lambda r: r[0].encode()))
    return hashlib.sha256(lines.encode()).hexdigest()
