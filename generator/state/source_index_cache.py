"""Where each item's row is in the operator's item sources: `<private>/cache/item-sources`, so
that `retire` reads the one row of the item it reveals instead of parsing a 50,000-item file.

Written by `commit` once its commits have landed: for each JSON source file it read whole (or
found unchanged) its name, size, SHA-256 and times, and for each item row its id, file, row
number and byte span, in a block file (generator.state.cache_file: the ids sorted, each block
checked against its hash when read). A YAML file is not indexed: its items are found by a scan.

A retire's lookup is a shortcut, never an answer on its own: it is used only when the file that
holds the item (that one file, read and hashed whole) still has the SHA-256 recorded and the
bytes at the span parse as a row with that id; anything else (a missing, damaged or foreign
cache, an edited file) gives no answer, and the caller scans the sources as before. What the row
says is then checked like any scanned row, and compared with the committed item by the caller.

The index also vouches for the files it lists (Kept): a commit does not read again a file that
a landed commit validated whole and that is unchanged since, and finds a new row's duplicate
among its ids. That is why a file is listed only when every row's id was found in its bytes
(an id written with a JSON escape is not, and the file is then read by every commit), and only
when the bytes both passes of the commit parsed are the ones hashed. The times are a stat
shortcut, as git's index is: on a file system whose attributes can be stale (NFS's attribute
cache), keep the private directory and the sources on local disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

from generator.program.datadir import Paths
from generator.program.itemsources import SourceRead
from generator.state.cache_file import BlockFile, block_file_pieces, write_cache
from generator.verifier import Ledger

NAME = "item-sources"
_MAGIC = b"transparency item sources v2\n"
_WS = re.compile(r"[ \t\n\r]*")


def index_path(paths: Paths) -> Path:
    return paths.private / "cache" / NAME


def json_row_spans(data: bytes) -> list[tuple[int, int]] | None:
    """The byte span of each row of the top-level `items` list of a JSON source (one the strict
    loader accepted), or None when the text is not laid out so (then no span is kept)."""
    try:
        text = data.decode("utf-8")
        dec = json.JSONDecoder()
        at = _WS.match(text, 0).end()  # type: ignore[union-attr]
        if text[at] != "{":
            return None
        at += 1
        while True:
            at = _WS.match(text, at).end()  # type: ignore[union-attr]
            key, at = dec.raw_decode(text, at)
            at = _WS.match(text, at).end()  # type: ignore[union-attr]
            if text[at] != ":":
                return None
            at = _WS.match(text, at + 1).end()  # type: ignore[union-attr]
            if key == "items":
                return _byte_spans(text, data, _list_spans(text, at, dec))
            _, at = dec.raw_decode(text, at)
            at = _WS.match(text, at).end()  # type: ignore[union-attr]
            if text[at] != ",":
                return None
            at += 1
    except (ValueError, IndexError):
        return None


def _list_spans(text: str, at: int, dec: json.JSONDecoder) -> list[tuple[int, int]]:
    if text[at] != "[":
        raise ValueError("not a list")
    spans: list[tuple[int, int]] = []
    at = _WS.match(text, at + 1).end()  # type: ignore[union-attr]
    while text[at] != "]":
        _, end = dec.raw_decode(text, at)
        spans.append((at, end))
        at = _WS.match(text, end).end()  # type: ignore[union-attr]
        if text[at] == ",":
            at = _WS.match(text, at + 1).end()  # type: ignore[union-attr]
    return spans


def _byte_spans(text: str, data: bytes, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character offsets as byte offsets (the same when the text is ASCII)."""
    if len(text) == len(data):
        return spans
    out, chars, size = [], 0, 0
    for start, end in spans:
        size += len(text[chars:start].encode())
        width = len(text[start:end].encode())
        out.append((size, size + width))
        size, chars = size + width, end
    return out


_ROW_ID_RE = re.compile(rb'"id"\s*:\s*"([a-z0-9][a-z0-9_-]{0,63})"')
# A file changed this close to a scan's start may have changed again within its clock's tick,
# after it was read, leaving its times as they were: such a file is vouched for by its SHA-256
# alone, as git treats a "racily clean" entry.
RACY_NS = 2_000_000_000


def _times(ino: int, mtime_ns: int, ctime_ns: int, started_ns: int) -> list[int] | None:
    """A file's recorded times, or None (hashed each time) when it changed too close to the
    scan's start for them to show a later edit."""
    return None if ctime_ns >= started_ns - RACY_NS else [ino, mtime_ns, ctime_ns]


class _Rows:
    """The index's rows, sorted by id: the ids end to end, where each ends, and its file, row
    and byte span."""

    def __init__(self) -> None:
        self.blob = bytearray()
        self.ends, self.file, self.row = array("Q"), array("H"), array("I")
        self.start, self.end = array("Q"), array("Q")

    def __len__(self) -> int:
        return len(self.ends)

    def key(self, o: int) -> bytes:
        return bytes(self.blob[self.ends[o - 1] if o else 0 : self.ends[o]])

    def take(self, other: _Rows, lo: int, hi: int, shift: int) -> None:
        """Rows lo..hi of `other`, each id moved `shift` bytes on in the blob."""
        if lo == hi:
            return
        self.blob += other.blob[other.ends[lo - 1] if lo else 0 : other.ends[hi - 1]]
        if shift:
            self.ends.extend(e + shift for e in other.ends[lo:hi])
        else:
            self.ends.extend(other.ends[lo:hi])
        self.file.extend(other.file[lo:hi])
        self.row.extend(other.row[lo:hi])
        self.start.extend(other.start[lo:hi])
        self.end.extend(other.end[lo:hi])

    def add(self, key: bytes, file_no: int, row: int, start: int, end: int) -> None:
        self.blob += key
        self.ends.append(len(self.blob))
        self.file.append(file_no)
        self.row.append(row)
        self.start.append(start)
        self.end.append(end)

    def sections(self) -> list[tuple[str, str, bytes | bytearray | memoryview]]:
        return [
            ("ids_blob", "B", self.blob),
            ("ids_ends", "Q", memoryview(self.ends).cast("B")),
            ("file", "H", memoryview(self.file).cast("B")),
            ("row", "I", memoryview(self.row).cast("B")),
            ("start", "Q", memoryview(self.start).cast("B")),
            ("end", "Q", memoryview(self.end).cast("B")),
        ]


def _rows_of(data: bytes, file_no: int, rows: list[tuple[bytes, int, int, int, int]]) -> int | None:
    """The rows of one JSON source (its bytes, every row valid) added to `rows`; how many, or
    None (and nothing added) if it has no spans or a row's id is not found as written plainly.
    In a valid row only the top-level `id` is a key named "id" with a string value (an answer
    field's value is an object), so the id found is the row's own."""
    spans = json_row_spans(data)
    if spans is None:
        return None
    found = []
    for n, (start, end) in enumerate(spans):
        m = _ROW_ID_RE.search(data, start, end)
        if m is None:
            return None
        found.append((m.group(1), file_no, n, start, end))
    rows += found
    return len(spans)


def _write(paths: Paths, named: list[list[Any]], rows: _Rows, binding: dict[str, Any]) -> None:
    pieces, _ = block_file_pieces(_MAGIC, {"files": named, **binding}, rows.sections())
    write_cache(index_path(paths), pieces)


def _sorted_rows(found: list[tuple[bytes, int, int, int, int]]) -> _Rows:
    """Stable: of an id given twice (which the scan refuses), the first row is the one kept."""
    found.sort(key=lambda r: r[0])
    rows = _Rows()
    for n, r in enumerate(found):
        if n == 0 or r[0] != found[n - 1][0]:
            rows.add(*r)
    return rows


def _binding(ledger: Ledger) -> dict[str, Any]:
    """What ties the index to the ledger: every commit it knew of, by their commitments' hash."""
    return {"commits": ledger.commit_count, "commitments": _binding_of(ledger, ledger.commit_count)}


class Kept:
    """The last commit's index, as far as it still holds: the JSON sources it vouches for (read
    whole by a commit that landed, every row valid and committed) whose bytes are still those,
    so that a commit need not read them again, and where each of their ids is.

    The index is believed only when the ledger still begins with every commit it knew of and
    each of its blocks hashes to its recorded value (its rows are read whole: a duplicate must
    not hide in a damaged block); a file is unchanged when its size, inode and times are the ones
    recorded (and were not racy), or failing that when its bytes hash to the recorded SHA-256."""

    def __init__(self, paths: Paths, ledger: Ledger, files: list[Path], started_ns: int) -> None:
        self.paths = paths
        self.started_ns = started_ns
        self.files: dict[Path, list[Any]] = {}  # an unchanged file: its entry, as the new index keeps it
        self._numbers: dict[int, Path] = {}  # its number in the last index
        self._rows = _Rows()  # the last index's rows, when it vouches for a file still there
        self._count = 0  # the last index's files
        try:
            index = BlockFile(index_path(paths), _MAGIC, _damaged)
        except (OSError, ValueError):
            return
        with index.f:
            try:
                named = index.meta["files"]
                n = index.meta["commits"]
                if n > ledger.commit_count or _binding_of(ledger, n) != index.meta["commitments"]:
                    return
                by_name = {p.name: p for p in files if p.suffix == ".json"}
                for number, (name, size, digest, rows, stat) in enumerate(named):
                    path = by_name.get(name)
                    if path is not None:
                        entry = self._unchanged(path, size, digest, rows, stat)
                        if entry is not None:
                            self.files[path], self._numbers[number] = entry, path
                if self.files:
                    s: Any = index.sections
                    r = self._rows
                    r.blob, r.ends, r.file = s["ids_blob"].whole(), s["ids_ends"].whole(), s["file"].whole()
                    r.row, r.start, r.end = s["row"].whole(), s["start"].whole(), s["end"].whole()
                    if len({len(r.ends), len(r.file), len(r.row), len(r.start), len(r.end)}) != 1:
                        raise ValueError("sections of different lengths")
                self._count = len(named)
            except (_Damaged, KeyError, TypeError, ValueError):
                self.files, self._numbers, self._rows = {}, {}, _Rows()

    def _unchanged(self, path: Path, size: int, digest: str, rows: int, stat: list[int] | None) -> list[Any] | None:
        try:
            st = os.stat(path)
            if st.st_size != size:
                return None
            if stat is not None and stat == [st.st_ino, st.st_mtime_ns, st.st_ctime_ns]:
                return [path.name, size, digest, rows, stat]
            with path.open("rb") as f:
                if hashlib.sha256(f.read()).hexdigest() != digest:
                    return None
        except OSError:
            return None
        return [path.name, size, digest, rows, self._stat(st)]

    def _stat(self, st: os.stat_result) -> list[int] | None:
        return _times(st.st_ino, st.st_mtime_ns, st.st_ctime_ns, self.started_ns)

    @property
    def rows(self) -> int:
        return sum(entry[3] for entry in self.files.values())

    def elsewhere(self, item_id: str) -> str | None:
        """Where `item_id` is among the unchanged files, for a duplicate's problem."""
        r, key = self._rows, item_id.encode()
        o = _bisect(r.key, len(r), key)
        if o == len(r) or r.key(o) != key:
            return None
        path = self._numbers.get(r.file[o])
        return None if path is None else f"{self.paths.show(path)} items[{r.row[o]}]"

    def old_rows(self) -> tuple[_Rows, list[list[Any]]]:
        """The last index's rows of the unchanged files, numbered as they are to be, and their
        entries."""
        whole, named = self._rows, list[list[Any]]()
        if len(self._numbers) == self._count:
            # Every file of the last index is kept, under its own number: its rows as they are.
            return whole, [self.files[self._numbers[n]] for n in range(self._count)]
        renumber = {}
        for number in sorted(self._numbers):
            renumber[number] = len(named)
            named.append(self.files[self._numbers[number]])
        old = _Rows()
        for o in range(len(whole)):
            f = renumber.get(whole.file[o])
            if f is not None:
                old.add(whole.key(o), f, whole.row[o], whole.start[o], whole.end[o])
        return old, named


def _bisect(key_at: Callable[[int], bytes], count: int, key: bytes, lo: int = 0) -> int:
    """The first of `count` sorted ids (the `n`th is `key_at(n)`) from `lo` on that is not below
    `key`: the index's rows in memory, or its sections read a block at a time."""
    hi = count
    while lo < hi:
        mid = (lo + hi) // 2
        if key_at(mid) < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _binding_of(ledger: Ledger, n: int) -> str:
    """The SHA-256 of the ledger's first `n` commitments, end to end."""
    return hashlib.sha256(ledger.commitment_bytes(n)).hexdigest()


def update(paths: Paths, kept: Kept, read: dict[Path, SourceRead], ledger: Ledger) -> None:
    """The index after a commit that landed (or found nothing new): the unchanged files' rows
    kept, the files the commit read whole (`read`, each as validated) indexed again, all of them
    vouched for, bound to the ledger's commits. A file whose bytes are no longer the ones
    validated is left out. A failure to write costs the next commit a full read, no more. The
    tests call it with a `read` of their own to make an index of chosen bytes."""
    old, named = kept.old_rows()
    found: list[tuple[bytes, int, int, int, int]] = []
    for path, seen in sorted(read.items()):
        if path in kept.files or len(named) >= 0xFFFF:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() != seen.sha256:
            continue
        count = _rows_of(data, len(named), found)
        if count is not None:
            times = _times(seen.ino, seen.mtime_ns, seen.ctime_ns, kept.started_ns)
            named.append([path.name, seen.size, seen.sha256, count, times])
    _write(paths, named, _merge(old, _sorted_rows(found)), _binding(ledger))


def _merge(old: _Rows, new: _Rows) -> _Rows:
    """Two sorted row sets as one, in a pass over the new rows (the old ones copied in runs); of
    an id in both, the old row is kept."""
    if not len(new):
        return old
    out, at, shift = _Rows(), 0, 0
    for o in range(len(new)):
        key = new.key(o)
        lo = _bisect(old.key, len(old), key, at)
        out.take(old, at, lo, shift)
        at = lo
        if at < len(old) and old.key(at) == key:
            continue
        out.add(key, new.file[o], new.row[o], new.start[o], new.end[o])
        shift += len(key)
    out.take(old, at, len(old), shift)
    return out


def _find(s: Any, key: bytes) -> int | None:
    """The row of `key` among the sorted ids, bisected (a block of each read as it is touched)."""
    blob, ends = s["ids_blob"], s["ids_ends"]

    def key_at(n: int) -> bytes:
        return bytes(blob[ends[n - 1] if n else 0 : ends[n]])

    o = _bisect(key_at, len(ends), key)
    return o if o < len(ends) and key_at(o) == key else None


class _Damaged(ValueError):
    pass


def _damaged(section: str, block: int) -> BaseException:
    return _Damaged(f"block {block} of {section} does not hash to the value the file records")


def lookup(paths: Paths, item_ids: list[str]) -> dict[str, tuple[Path, int, bytes]]:
    """The row of each of `item_ids` the index still knows: {id: (source file, row number, the
    row's bytes)}. An id missing here is to be found by a scan. A damaged index is removed."""
    found: dict[str, tuple[Path, int, bytes]] = {}
    try:
        index = BlockFile(index_path(paths), _MAGIC, _damaged)
    except (OSError, ValueError):
        return found
    with index.f:
        try:
            s: Any = index.sections
            files = index.meta["files"]
            checked: dict[int, bytes | None] = {}
            for item_id in item_ids:
                o = _find(s, item_id.encode())
                if o is None:
                    continue
                n = s["file"][o]
                if n not in checked:
                    checked[n] = _read_file(paths.items_dir / files[n][0], files[n][1], files[n][2])
                data = checked[n]
                if data is not None:
                    found[item_id] = (paths.items_dir / files[n][0], s["row"][o], data[s["start"][o] : s["end"][o]])
        except _Damaged:
            with contextlib.suppress(OSError):
                index_path(paths).unlink()
            return {}
        except (KeyError, TypeError, ValueError, IndexError):
            return {}
    return found


def _read_file(path: Path, size: int, digest: str) -> bytes | None:
    """A source file's bytes, if they are still the ones indexed (one file of the sources, not
    all of them: its SHA-256 is what ties the spans to it)."""
    try:
        with path.open("rb") as f:
            if os.fstat(f.fileno()).st_size != size:
                return None
            data = f.read()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == digest else None
