"""What each committed item's source said when it was committed, so that `commit` can refuse an edited one.

A committed item never changes: its commitment is signed, and `certify` scores against the
committed answer key. An operator who edits a committed item's source must hear so at once,
not at `retire` months later. Reading every sealed document at every commit would cost a
million reads; instead each committed item's *source digest*, the SHA-256 of the canonical
`{"gate": G, "item": {"prompt": …, "answer": …}}`, is remembered in
`PRIVATE/cache/item-digests` and compared with the digest of today's source row.

The file is a cache (FORMAT.md, "Private formats"): the line `transparency item digests v2`,
then per commit, at its place in ledger order, a 72-byte record: its 32-byte commitment, the
32-byte source digest, and the first 8 bytes of the SHA-256 of those 64. A record is used only
when its commitment is the ledger's at that place and its check holds; the others are remade
from the committed documents (the reveal, or the sealed line whose SHA-256 is the commitment),
all of them in one pass, the first time one is needed. A commit writes the records of its own
commits (and of those it remade) at their places, not the file whole: a commit of one item
neither reads nor writes the million records before it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Any

from generator.core import canonical_json
from generator.program.datadir import Paths
from generator.program.sealed import locate_sealed, read_located
from generator.verifier import FormatError, Ledger, loads_strict, sha256_hex

CACHE_NAME = "item-digests"
_MAGIC = b"transparency item digests v2\n"
_RECORD = 72
# A committed document that cannot be found or read: nothing to compare with, so no refusal.
UNKNOWN = bytes(32)


def source_digest(gate: str, item: dict[str, Any]) -> bytes:
    return hashlib.sha256(canonical_json.dumps_validated({"gate": gate, "item": item})).digest()


def _cache_path(paths: Paths) -> Path:
    return paths.private / "cache" / CACHE_NAME


def _record(commitment: bytes, digest: bytes) -> bytes:
    return commitment + digest + hashlib.sha256(commitment + digest).digest()[:8]


class ItemDigests:
    """The source digest of every committed item, by its commit position; made before the
    commit adds its own (they are added in ledger order after the ones already there)."""

    def __init__(self, paths: Paths, ledger: Ledger) -> None:
        self._paths = paths
        self._ledger = ledger
        self._base = ledger.commit_count  # the commits already made when the command began
        self._records: bytearray | None = None  # the file's records, when read whole (a repair)
        self._file: Any = None  # the file, for the records read one at a time
        self._repaired = False
        self._dirty: dict[int, bytes] = {}  # records remade, to write, by place
        self._added = bytearray()  # the records of this command's commits, from place _base on

    def _load(self) -> bytearray:
        if self._records is None:
            try:
                data = _cache_path(self._paths).read_bytes()
            except OSError:
                data = b""
            self._records = bytearray(data[len(_MAGIC) :] if data.startswith(_MAGIC) else b"")
        return self._records

    def _read(self, n: int) -> bytes:
        """Record `n` as the file has it (b"" when it has none): one read, not the whole file."""
        if self._records is not None:
            return bytes(self._records[n * _RECORD : (n + 1) * _RECORD])
        try:
            if self._file is None:
                self._file = _cache_path(self._paths).open("rb")
                if self._file.read(len(_MAGIC)) != _MAGIC:
                    return b""
            return os.pread(self._file.fileno(), _RECORD, len(_MAGIC) + n * _RECORD)
        except OSError:
            return b""

    def _valid(self, n: int, commitment: bytes) -> bytes | None:
        rec = self._read(n)
        if len(rec) == _RECORD and rec[:32] == commitment and hashlib.sha256(rec[:64]).digest()[:8] == rec[64:]:
            return bytes(rec[32:64])
        return None

    def _repair(self) -> None:
        """Remake every record of the commits made before this command that is missing or not
        the ledger's, from the committed documents, in one pass over the sealed store."""
        self._repaired = True
        records = self._load()
        mine = self._ledger.commitment_bytes(self._base)
        bad = [n for n in range(self._base) if self._valid(n, mine[32 * n : 32 * n + 32]) is None]
        commits = [c for n in bad for c in self._ledger.commits(n, n + 1)]
        found = {c.id: self._reveal(c.id, c.commitment) for c in commits}
        sealed = locate_sealed(self._paths, {c.id: c.commitment for c in commits if found[c.id] is None})
        for n, c in zip(bad, commits, strict=True):
            doc = found[c.id]
            if doc is None and c.id in sealed:
                doc = _parse(read_located(sealed[c.id]))
            digest = UNKNOWN
            if doc is not None:
                with contextlib.suppress(KeyError, TypeError, ValueError):
                    digest = source_digest(doc["gate"], doc["item"])
            rec = _record(bytes.fromhex(c.commitment), digest)
            if len(records) < (n + 1) * _RECORD:
                records.extend(bytes((n + 1) * _RECORD - len(records)))
            records[n * _RECORD : (n + 1) * _RECORD] = rec
            self._dirty[n] = rec

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
        if n is None or n >= self._base:
            return None
        commitment = bytes.fromhex(next(self._ledger.commits(n, n + 1)).commitment)
        found = self._valid(n, commitment)
        if found is None and not self._repaired:
            self._repair()
            found = self._valid(n, commitment)
        return found if found is not None else UNKNOWN

    def add(self, commitment: str, digest: bytes) -> None:
        """Record the next commit (in ledger order), as `commit` stages it."""
        self._added += _record(bytes.fromhex(commitment), digest)

    def save(self) -> None:
        """Write the records made at their places; a failure costs a later commit a pass over
        the sealed store, no more. Only after the commits landed: a record of a commit that
        did not would be refused (its place holds another commitment, or none)."""
        if self._file is not None:
            self._file.close()
        if not self._dirty and not self._added:
            return
        path = _cache_path(self._paths)
        try:
            path.parent.mkdir(mode=0o700, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return
        try:
            with os.fdopen(fd, "r+b") as f:
                if f.read(len(_MAGIC)) != _MAGIC:
                    f.truncate(0)
                    f.seek(0)
                    f.write(_MAGIC)
                for n in sorted(self._dirty):
                    f.seek(len(_MAGIC) + n * _RECORD)
                    f.write(self._dirty[n])
                f.seek(len(_MAGIC) + self._base * _RECORD)
                f.write(self._added)
        except OSError:
            return


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
