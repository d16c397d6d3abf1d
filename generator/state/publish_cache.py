"""The record of what was last published to a target: every path with the SHA-256 of its bytes.

One record per target (named by the SHA-256 of the store's identity: a folder's real path, a
bucket's endpoint and address), in the private directory's cache:
a checksum list in the format of `SHA256SUMS`, sorted by path bytes, so that comparing it with a
new release is one pass over two sorted lists. It is written, whole or not at all, only after a
publish finished; a publish killed before that sends again what the record does not show, and the
store's own answer (the same bytes are already there) makes that cheap and safe. A lost record
costs one full publish, nothing else: it is a shortcut, never the truth, which `--check` reads
from the store itself.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from generator.state.cache_file import write_cache

_LINE = re.compile(r"([0-9a-f]{64})  (.+)")


def record_path(cache_dir: Path, target: str) -> Path:
    return cache_dir / "publish" / f"{hashlib.sha256(target.encode()).hexdigest()[:32]}.sums"


def read_record(path: Path) -> Iterator[tuple[str, str]]:
    """(path, sha256) in path-byte order; nothing if there is no record or it is damaged (a
    damaged record would be a wrong shortcut: without it, everything is compared with the store)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return
    rows: list[tuple[str, str]] = []
    for line in lines:
        m = _LINE.fullmatch(line)
        if not m:
            return
        rows.append((m.group(2), m.group(1)))
    if [r[0].encode() for r in rows] != sorted(r[0].encode() for r in rows):
        return
    yield from rows


def write_record(path: Path, rows: Iterable[tuple[str, str]]) -> bool:
    """Write the record of a finished publish; False if it could not be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return write_cache(path, "".join(f"{sha}  {p}\n" for p, sha in rows).encode())
