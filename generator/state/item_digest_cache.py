"""What each committed item's source said when it was committed, so that `commit` can refuse an edited one.

A committed item never changes: its commitment is signed, and `certify` scores against the
committed answer key. An operator who edits a committed item's source must hear so at once,
not at `retire` months later. Reading every sealed document at every commit would cost a
million reads; instead each committed item's *source digest*, the SHA-256 of the canonical
`{"gate": G, "item": {"prompt": …, "answer": …}}`, is remembered in
`PRIVATE/cache/item-digests` and compared with the digest of today's source row.

The file is a cache (FORMAT.md, "Private formats"): the line `transparency item digests v1`,
then per commit, in ledger order, its 32-byte commitment and the 32-byte source digest, then
the SHA-256 of everything before. Only the records whose commitments are the ledger's own, in
order, are used; the rest are remade from the committed documents (the reveal, or the sealed
line whose SHA-256 is the commitment), once.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import Any

from generator.core import canonical_json
from generator.program.datadir import Paths
from generator.program.sealed import locate_sealed, read_located
from generator.state.cache_file import write_cache
from generator.verifier import FormatError, Ledger, loads_strict, sha256_hex

CACHE_NAME = "item-digests"
_MAGIC = b"transparency item digests v1\n"
_RECORD = 64
# A committed document that cannot be found or read: nothing to compare with, so no refusal.
UNKNOWN = bytes(32)


def source_digest(gate: str, item: dict[str, Any]) -> bytes:
    return hashlib.sha256(canonical_json.dumps_validated({"gate": gate, "item": item})).digest()


def _cache_path(paths: Paths) -> Path:
    return paths.private / "cache" / CACHE_NAME


class ItemDigests:
    """The source digest of every committed item, by its commit position."""

    def __init__(self, paths: Paths, ledger: Ledger) -> None:
        self._paths = paths
        self._ledger = ledger
        self._records: bytearray | None = None  # commitment ‖ digest per commit, filled on first use
        self._saved = b""

    def load(self) -> bytearray:
        """The records, the missing ones remade; before the first `add`, while the ledger holds
        only the commits already made."""
        if self._records is not None:
            return self._records
        records = bytearray()
        try:
            data = _cache_path(self._paths).read_bytes()
        except OSError:
            data = b""
        body = data[len(_MAGIC) : -32]
        if data.startswith(_MAGIC) and len(body) % _RECORD == 0 and hashlib.sha256(data[:-32]).digest() == data[-32:]:
            # Keep the records whose commitments are the ledger's, in order: one comparison in C.
            count = min(len(body) // _RECORD, self._ledger.commit_count)
            mine = self._ledger.commitment_bytes(count)
            theirs = b"".join(body[n * _RECORD : n * _RECORD + 32] for n in range(count))
            if theirs != mine:
                count = next(n for n in range(count) if theirs[32 * n : 32 * n + 32] != mine[32 * n : 32 * n + 32])
            records += body[: count * _RECORD]
            self._saved = bytes(records)
        self._records = records
        self._fill(records)
        return records

    def _fill(self, records: bytearray) -> None:
        """Remake the records of the commits the cache does not hold from the committed documents."""
        start = len(records) // _RECORD
        commits = list(self._ledger.commits(start))
        if not commits:
            return
        found = {c.id: self._reveal(c.id, c.commitment) for c in commits}
        sealed = locate_sealed(self._paths, {c.id: c.commitment for c in commits if found[c.id] is None})
        for c in commits:
            doc = found[c.id]
            if doc is None and c.id in sealed:
                doc = _parse(read_located(sealed[c.id]))
            digest = UNKNOWN
            if doc is not None:
                with contextlib.suppress(KeyError, TypeError, ValueError):
                    digest = source_digest(doc["gate"], doc["item"])
            records += bytes.fromhex(c.commitment) + digest

    def _reveal(self, item_id: str, commitment: str) -> dict[str, Any] | None:
        try:
            data = self._paths.reveal_file(item_id).read_bytes()
        except OSError:
            return None
        return _parse(data) if sha256_hex(data) == commitment else None

    def committed_document(self, item_id: str) -> dict[str, Any] | None:
        """The reveal document of a committed item, from the site's reveals or the sealed store."""
        c = self._ledger.commit(item_id)
        if c is None:
            return None
        doc = self._reveal(item_id, c.commitment)
        if doc is None:
            where = locate_sealed(self._paths, {item_id: c.commitment}).get(item_id)
            doc = _parse(read_located(where)) if where else None
        return doc

    def digest(self, item_id: str) -> bytes | None:
        n = self._ledger.commit_position(item_id)
        if n is None:
            return None
        records = self.load()
        return bytes(records[n * _RECORD + 32 : (n + 1) * _RECORD])

    def add(self, commitment: str, digest: bytes) -> None:
        """Record the next commit (in ledger order), as `commit` stages it (after `load`)."""
        assert self._records is not None, "load() first: the ledger already holds the commits being added"
        self._records.extend(bytes.fromhex(commitment) + digest)

    def save(self) -> None:
        """Write the cache if it changed; a failure costs the next commit its shortcut, no more."""
        if self._records is None or bytes(self._records) == self._saved:
            return
        data = _MAGIC + bytes(self._records)
        path = _cache_path(self._paths)
        try:
            path.parent.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            return
        write_cache(path, data + hashlib.sha256(data).digest())


def _parse(data: bytes) -> dict[str, Any] | None:
    try:
        doc = loads_strict(data)
    except FormatError:
        return None
    return doc if isinstance(doc, dict) else None


def changed_members(old: dict[str, Any], gate: str, item: dict[str, Any]) -> list[str]:
    """The members of an item that differ from its committed document, named by path, never by
    value: the terminal is no place for a secret item's answer key."""

    def same(a: Any, b: Any) -> bool:
        try:
            return canonical_json.dumps(a) == canonical_json.dumps(b)
        except canonical_json.NotCanonicalizable:
            return False

    out = [] if old.get("gate") == gate else ["gate"]
    committed = old.get("item")
    before: dict[str, Any] = committed if isinstance(committed, dict) else {}
    for member in sorted(set(before) | set(item)):
        if member == "answer" and isinstance(before.get("answer"), dict) and isinstance(item.get("answer"), dict):
            was, now = before["answer"], item["answer"]
            for field in sorted(set(was) | set(now)):
                if field not in now:
                    out.append(f"answer.{field} (removed)")
                elif field not in was:
                    out.append(f"answer.{field} (added)")
                elif isinstance(was[field], dict) and isinstance(now[field], dict):
                    keys = sorted(set(was[field]) | set(now[field]))
                    out += [f"answer.{field}.{k}" for k in keys if not same(was[field].get(k), now[field].get(k))]
                elif not same(was[field], now[field]):
                    out.append(f"answer.{field}")
        elif not same(before.get(member), item.get(member)):
            out.append(member)
    return out
