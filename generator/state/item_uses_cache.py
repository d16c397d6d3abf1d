"""Which secret-gate certificates used each item: `<private>/cache/item-uses/`, so that `retire`
reads the certificates its items make due instead of every certificate of the program.

A certificate's items never change (the ledger binds its bytes), so the index only grows: each
certificate is read once, after the command that issued it (`certify`) or by the next `retire`,
which first reads the certificates the index does not cover yet. Its lines, `<item> <serial>
<certificate SHA-256>`, are spread over 256 bucket files by the first byte of the SHA-256 of the
item id; `index.json` records how many of the ledger's certificates are covered (and the serial
and leaf index of the last, to know it is the same ledger) and the SHA-256 of each bucket. A
lookup reads the buckets of its items alone.

Never trusted past what it can check: a bucket that does not hash to its recorded value, a line
naming a certificate the ledger does not hold with that SHA-256, or an index that does not
describe the ledger's certificates, makes the lookup answer None (the caller then reads every
certificate, as without it) and the index is removed, to be made again from the certificates.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from generator.program.datadir import Paths
from generator.state.cache_file import write_cache
from generator.verifier import Ledger

DIR = "item-uses"
INDEX = "index.json"
_EMPTY = hashlib.sha256(b"").hexdigest()

# A certificate's items, or None when its document cannot be read (the caller reports it).
ItemsOf = Callable[[str], "list[str] | None"]


def uses_dir(paths: Paths) -> Path:
    return paths.private / "cache" / DIR


def _bucket(item_id: str) -> str:
    return hashlib.sha256(item_id.encode()).hexdigest()[:2]


def _load_index(paths: Paths, ledger: Ledger) -> dict[str, Any] | None:
    """The index, if it describes the first certificates of `ledger`."""
    try:
        index: dict[str, Any] = json.loads((uses_dir(paths) / INDEX).read_bytes())
        count, last, buckets = index["count"], index["last"], index["buckets"]
        if index["v"] != 1 or not isinstance(count, int) or not isinstance(buckets, dict):
            return None
        certs = list(ledger.certificates.values())
        if not 0 <= count <= len(certs):
            return None
        if count and [certs[count - 1].serial, certs[count - 1].index] != last:
            return None
        return index
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read_bucket(paths: Paths, index: dict[str, Any], name: str) -> bytes | None:
    """A bucket's lines, None if they are not the ones the index records."""
    want = index["buckets"].get(name, _EMPTY)
    try:
        data = (uses_dir(paths) / name).read_bytes() if want != _EMPTY else b""
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == want else None


def forget(paths: Paths) -> None:
    shutil.rmtree(uses_dir(paths), ignore_errors=True)


def follow(paths: Paths, ledger: Ledger, items_of: ItemsOf, only_if_kept: bool = False) -> dict[str, Any] | None:
    """Bring the index up to date with the ledger's certificates, reading only those it does not
    cover; the index, or None if it could not be (a certificate unreadable, a bucket damaged).
    With `only_if_kept`, an index that is not there is left for the next retire to make."""
    index = _load_index(paths, ledger)
    fresh = index is None
    if index is None:
        if only_if_kept:
            return None
        forget(paths)
        index = {"v": 1, "count": 0, "last": None, "buckets": {}}
    certs = list(ledger.certificates.values())
    added: dict[str, list[bytes]] = {}
    for cert in certs[index["count"] :]:
        if ledger.gates[ledger.runs[cert.run].gate].public:
            continue
        items = items_of(cert.serial)
        if items is None:
            return None
        for item_id in dict.fromkeys(items):
            added.setdefault(_bucket(item_id), []).append(f"{item_id} {cert.serial} {cert.sha256}\n".encode())
    if index["count"] == len(certs) and not fresh:
        return index
    for name, lines in sorted(added.items()):
        old = _read_bucket(paths, index, name)
        if old is None:
            forget(paths)
            return None
        data = old + b"".join(lines)
        if not write_cache(uses_dir(paths) / name, data):
            return None
        index["buckets"][name] = hashlib.sha256(data).hexdigest()
    index["count"], index["last"] = len(certs), [certs[-1].serial, certs[-1].index] if certs else None
    # The buckets first, then the index that names them: a crash between leaves buckets that
    # do not hash to what the index records, which a lookup refuses.
    write_cache(uses_dir(paths) / INDEX, json.dumps(index, sort_keys=True).encode())
    return index


def certificates_using(paths: Paths, ledger: Ledger, items: Iterable[str], items_of: ItemsOf) -> set[str] | None:
    """The serials of the secret-gate certificates that used any of `items`; None when the index
    cannot say (the caller then reads every certificate)."""
    index = follow(paths, ledger, items_of)
    if index is None:
        return None
    wanted = set(items)
    out: set[str] = set()
    for name in sorted({_bucket(i) for i in wanted}):
        data = _read_bucket(paths, index, name)
        if data is None:
            forget(paths)
            return None
        for line in data.splitlines():
            item_id, serial, digest = [*line.decode().split(" "), "", "", ""][:3]
            if item_id not in wanted:
                continue
            cert = ledger.certificates.get(serial)
            if cert is None or cert.sha256 != digest:
                with contextlib.suppress(OSError):
                    forget(paths)
                return None
            out.add(serial)
    return out
