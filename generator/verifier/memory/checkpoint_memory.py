"""The verifier's memory (FORMAT.md v2): the last checkpoint it verified, per log origin.

A site's key holder can re-sign a rewritten history, and a verifier that remembers nothing
would pass it. The state file lets every later run detect a rollback or a fork by itself, as
Go's checksum-database client does with its cached tree. It is written only after a run in
which every check passed, atomically (a kill leaves the old file or the new one, never half of
one), and a state file that cannot be read stops the run instead of being replaced: losing it
silently would lose exactly the memory it exists for.

A log is its key as much as its origin: each row remembers the keys that signed the log, and a
key remembered for one origin is never accepted under another, nor is an origin that looks like
a remembered one (confusables.py): a key holder who re-publishes a rewritten history under a
look-alike name would otherwise be a first contact, with nothing to extend.
"""

import base64
import hashlib
import json
import os
import tempfile
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from generator.verifier.core.canonical import canonical_bytes, parse_canonical
from generator.verifier.core.confusables import origin_fold
from generator.verifier.core.errors import FormatError
from generator.verifier.core.formats import check_keys, is_int, is_origin
from generator.verifier.core.public_keys import b64decode_strict, fingerprint

STATE_MAX_BYTES = 1 << 24


def user_cache_dir(name: str) -> Path | None:
    """$XDG_CACHE_HOME/NAME, or ~/.cache/NAME (the XDG base directory rule); None without a home."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / name


def default_state_path() -> Path | None:
    """$XDG_CACHE_HOME/transparency-verify/state.json, or under ~/.cache; None without a home."""
    folder = user_cache_dir("transparency-verify")
    return folder / "state.json" if folder else None


def read_state(path: Path) -> dict[str, dict[str, Any]]:
    """origin -> {"tree_size", "root", "checkpoint", "keys"}; {} if the file does not exist yet.
    A row written before rows remembered keys has none: its log is known by its origin alone
    until the next passing run of that log adds them."""
    try:
        with path.open("rb") as f:
            data = f.read(STATE_MAX_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise FormatError(f"{path}: cannot read the verifier's state ({e.strerror or e})") from None
    if len(data) > STATE_MAX_BYTES:
        raise FormatError(f"{path}: larger than {STATE_MAX_BYTES} bytes: not a state file of this verifier")
    try:
        doc = parse_canonical(data)
        if check_keys(doc, ("logs", "type", "v")) or doc["type"] != "verifier-state" or type(doc["v"]) is not int:
            raise FormatError('not {"type":"verifier-state","v":1,"logs":{…}}')
        if doc["v"] != 1:
            raise FormatError('not {"type":"verifier-state","v":1,"logs":{…}}')
        logs = doc["logs"]
        if not isinstance(logs, dict):
            raise FormatError("logs is not an object")
        for origin, row in logs.items():
            if not is_origin(origin) or check_keys(row, ("checkpoint", "root", "tree_size"), ("keys",)):
                raise FormatError(f"the row of {origin!r} is malformed")
            keys = row.get("keys", [])
            if not isinstance(keys, list) or not all(
                isinstance(k, str) and len(b64decode_strict(k)) == 32 for k in keys
            ):
                raise FormatError(f"the row of {origin!r} holds keys that are not Ed25519 public keys")
            if not (isinstance(row["root"], str) and isinstance(row["checkpoint"], str)):
                raise FormatError(f"the row of {origin!r} holds a root or checkpoint that is not text")
            if not is_int(row["tree_size"]) or len(b64decode_strict(row["root"])) != 32:
                raise FormatError(f"the row of {origin!r} has a malformed size or root")
            b64decode_strict(row["checkpoint"])
    except FormatError as e:
        raise FormatError(
            f"{path}: the verifier's state is damaged ({e}); it was left as it is. Move it away to start "
            "remembering afresh (and lose what it remembered)"
        ) from None
    return logs


def saved_from_state(logs: dict[str, dict[str, Any]], origin: str) -> bytes | None:
    row = logs.get(origin)
    return base64.b64decode(row["checkpoint"]) if row else None


def remembered_keys(logs: Mapping[str, Mapping[str, Any]]) -> dict[str, frozenset[bytes]]:
    """origin -> the raw public keys remembered for it (empty for a row that predates keys)."""
    return {origin: frozenset(base64.b64decode(k) for k in row.get("keys", [])) for origin, row in logs.items()}


def _named(origin: str) -> str:
    # A look-alike printed as it is looks exactly like what it imitates: its other characters are named.
    odd = sorted({ch for ch in origin if not ch.isascii()})
    named = ", ".join(f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')}" for ch in odd[:5])
    return json.dumps(origin, ensure_ascii=False) + (f" (with {named}{', …' if len(odd) > 5 else ''})" if odd else "")


def other_log_problems(origin: str, keys: Iterable[bytes], known: Mapping[str, Iterable[bytes]]) -> list[str]:
    """Why a log of `origin` signed by `keys` is not a log of its own beside the `known` ones
    (origin -> the keys remembered for it): a key remembered for another origin is that log
    under another name, whatever the names look like; an origin that looks like another's
    (origin_fold: case, compatibility forms and every UTS #39 confusable) would be read as it."""
    problems = []
    keys = frozenset(keys)
    fold = origin_fold(origin)
    for other in sorted(known):
        if other == origin:
            continue
        shared = sorted(keys & frozenset(known[other]))
        if shared:
            problems.append(
                f"the site's key {fingerprint(shared[0])} is remembered as the key of the log {_named(other)}, "
                f"but the site names its log {_named(origin)}: a key is one log's, and a log re-published under "
                "another origin with the same key would escape the history remembered for it"
            )
        elif origin_fold(other) == fold:
            problems.append(
                f"the site's origin {_named(origin)} looks like the origin of a log this verifier remembers, "
                f"{_named(other)}, but is not it: a look-alike of a known log"
            )
    return problems


def write_state(
    path: Path,
    logs: dict[str, dict[str, Any]],
    tree: dict[str, Any],
    checkpoint: bytes,
    keys: Iterable[bytes] = (),
) -> None:
    """Remember `tree` (a verified checkpoint) for its origin, and `keys` (those the log has
    signed with) beside the ones already remembered for it, replacing the file atomically."""
    logs = dict(logs)
    known = set(remembered_keys(logs).get(tree["origin"], frozenset())) | set(keys)
    logs[tree["origin"]] = {
        "checkpoint": base64.b64encode(checkpoint).decode(),
        "keys": sorted(base64.b64encode(k).decode() for k in known),
        "root": tree["root"],
        "tree_size": tree["tree_size"],
    }
    data = canonical_bytes({"logs": logs, "type": "verifier-state", "v": 1})
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_atomically(path, data)


def replace_atomically(path: Path, data: bytes | Iterable[bytes | memoryview], mode: int = 0o600) -> None:
    """Write `data` (bytes, or pieces written one after the other, so that a big file is never
    joined in memory) to `path` so that a kill at any moment leaves the old file or the new one,
    whole: a temporary file beside it, flushed to disk, renamed over it, the folder flushed."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            for piece in [data] if isinstance(data, bytes | bytearray | memoryview) else data:
                f.write(piece)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def write_hashed(path: Path, header: str, second: str, count: int, body: bytes) -> None:
    """Write a file of the mirror's memory: a `header` line, a `second` line, a line
    `<count> <SHA-256 of body>`, then `body`; atomically, in a folder only the user may read."""
    head = f"{header}\n{second}\n{count} {hashlib.sha256(body).hexdigest()}\n"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_atomically(path, (head.encode("utf-8", "surrogateescape"), body))


def read_hashed(data: bytes, header: str) -> tuple[bytes, int, bytes]:
    """The second line, the count and the body of a file write_hashed wrote; ValueError if it
    does not begin with `header` or the body is not the one its third line names."""
    fields = data.split(b"\n", 3)
    if len(fields) != 4 or fields[0] != header.encode():
        raise ValueError(f"not a record beginning with {header!r}")
    count, _, digest = fields[2].partition(b" ")
    body = fields[3]
    if not count.isdigit() or hashlib.sha256(body).hexdigest().encode() != digest:
        raise ValueError("its third line does not name the count and SHA-256 of what follows it: damaged")
    return fields[1], int(count), body
