"""Where each item's row is in the operator's item sources: `<private>/cache/item-sources`, so
that `retire` reads the one row of the item it reveals instead of parsing a 50,000-item file.

Written by `commit`, which reads every source anyway: for each JSON source file its name, size
and SHA-256, and for each item row its id, file, row number and byte span, in a block file
(generator.state.cache_file: the ids sorted, each block checked against its hash when read). A
YAML file's rows have no span here: their items are found by a scan, as without the cache.

A lookup is a shortcut, never an answer on its own: it is used only when the file that holds
the item (that one file, read and hashed whole) still has the SHA-256 recorded and the bytes at
the span parse as a row with that id; anything else (a missing, damaged or foreign cache, an
edited file) gives no answer, and the caller scans the sources as before. What the row says is
then checked like any scanned row, and compared with the committed item by the caller.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from array import array
from pathlib import Path
from typing import Any

from generator.program.datadir import Paths
from generator.state.cache_file import BlockFile, block_file_bytes, write_cache

NAME = "item-sources"
_MAGIC = b"transparency item sources v1\n"
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


def rebuild(paths: Paths, files: list[Path]) -> None:
    """Index the rows of the JSON sources among `files` (the ones the scan reads, in its order);
    a failure to write costs the next retire a scan, no more. The ids are kept sorted (a
    lookup bisects them): sorting a million in C costs less than hashing each in Python."""
    ids: list[bytes] = []
    file_no, row_no, starts, ends = array("H"), array("I"), array("Q"), array("Q")
    named: list[list[Any]] = []
    for path in files:
        if path.suffix != ".json" or len(named) >= 0xFFFF:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        spans = json_row_spans(data)
        if spans is None:
            continue
        for n, (start, end) in enumerate(spans):
            m = _ROW_ID_RE.search(data, start, end)
            if m is not None:
                ids.append(m.group(1))
                file_no.append(len(named))
                row_no.append(n)
                starts.append(start)
                ends.append(end)
        named.append([path.name, len(data), hashlib.sha256(data).hexdigest()])
    # Stable: of an id given twice (which the scan refuses), the first row is the one kept.
    order = sorted(range(len(ids)), key=ids.__getitem__)
    kept = [o for n, o in enumerate(order) if n == 0 or ids[o] != ids[order[n - 1]]]
    blob = b"".join(ids[o] for o in kept)
    id_ends = array("Q")
    at = 0
    for o in kept:
        at += len(ids[o])
        id_ends.append(at)
    sections = [
        ("ids_blob", "B", blob),
        ("ids_ends", "Q", bytes(id_ends)),
        ("file", "H", bytes(array("H", (file_no[o] for o in kept)))),
        ("row", "I", bytes(array("I", (row_no[o] for o in kept)))),
        ("start", "Q", bytes(array("Q", (starts[o] for o in kept)))),
        ("end", "Q", bytes(array("Q", (ends[o] for o in kept)))),
    ]
    out, _ = block_file_bytes(_MAGIC, {"files": named}, sections)
    write_cache(index_path(paths), out)


def _find(s: Any, key: bytes) -> int | None:
    """The row of `key` among the sorted ids, bisected (a block of each read as it is touched)."""
    blob, ends = s["ids_blob"], s["ids_ends"]
    lo, hi = 0, len(ends)
    while lo < hi:
        mid = (lo + hi) // 2
        k = blob[ends[mid - 1] if mid else 0 : ends[mid]]
        if k == key:
            return mid
        if k < key:
            lo = mid + 1
        else:
            hi = mid
    return None


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
