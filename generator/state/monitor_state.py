"""What the monitor remembers between runs: one file per log origin under its state folder, holding
the key it trusts and the last checkpoint it verified, replaced atomically and locked while a
run follows that log; and beside it, the ledger it replayed up to that checkpoint, so that the
next run replays only the entries after it.

The monitor's own memory, not a cache: losing it loses the key pinned on first contact and the
tree the next run must extend. A state that cannot be read, is damaged or is in use stops the
run (`MonitorStateError`, exit status 2, as the monitor's `Unreadable`) and is left as it is.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from generator.core.generator_errors import TransparencyError
from generator.core.regularfile import TooLarge, read_regular
from generator.verifier import (
    FormatError,
    NoteError,
    VerifierKey,
    b64decode_strict,
    canonical_bytes,
    check_keys,
    open_checkpoint,
    parse_canonical,
    parse_vkey,
    replace_atomically,
    show,
    user_cache_dir,
)

STATE_FOLDER = "transparency-monitor"
STATE_TYPE = "monitor-state"
_MAX_STATE_BYTES = 1 << 18


class MonitorStateError(TransparencyError):
    """The monitor's state cannot be read, is damaged, or another monitor is using it (exit status 2)."""


@dataclass(frozen=True)
class Remembered:
    """What the monitor keeps of one log: the key it trusts, and the last checkpoint it verified."""

    origin: str
    key: VerifierKey
    size: int
    root: bytes
    checkpoint: bytes


def default_state_dir() -> Path | None:
    """$XDG_CACHE_HOME/transparency-monitor, or under ~/.cache; None without a home."""
    return user_cache_dir(STATE_FOLDER)


def state_path(folder: Path, origin: str) -> Path:
    """Named by the origin's SHA-256: an origin is text from a site, never a file name."""
    return folder / f"{hashlib.sha256(origin.encode('utf-8')).hexdigest()}.json"


def read_state(path: Path, origin: str) -> Remembered | None:
    """The log's state, None before the first run; a file that is not a valid state of this
    origin, whose checkpoint does not open with its key or name its tree, is refused and kept:
    replacing it would silently forget the key and the tree it exists to remember."""
    data: bytes | None = None
    try:
        data = read_regular(path, _MAX_STATE_BYTES)
    except FileNotFoundError:
        return None
    except TooLarge:
        pass  # damaged, as below
    except OSError as e:
        raise MonitorStateError(f"{path}: cannot read the monitor's state ({e.strerror or e})") from None
    try:
        if data is None:
            raise FormatError(f"larger than {_MAX_STATE_BYTES} bytes")
        doc = parse_canonical(data)
        members = ("checkpoint", "origin", "root", "tree_size", "type", "v", "vkey")
        if check_keys(doc, members) or doc["type"] != STATE_TYPE or doc["v"] != 1:
            raise FormatError(f'not {{"type":"{STATE_TYPE}","v":1,…}} with members {", ".join(members)}')
        if doc["origin"] != origin:
            raise FormatError(f"it is the state of {show(doc['origin'])}, not of {show(origin)}")
        key = parse_vkey(doc["vkey"])
        size, root = doc["tree_size"], b64decode_strict(doc["root"]) if isinstance(doc["root"], str) else b""
        if type(size) is not int or size < 0 or len(root) != 32 or key.name != origin:
            raise FormatError("malformed tree_size, root or vkey")
        checkpoint = b64decode_strict(doc["checkpoint"]) if isinstance(doc["checkpoint"], str) else b""
        if open_checkpoint(checkpoint, origin, key.public_key) != (origin, size, root):
            raise FormatError("its checkpoint does not sign its tree_size and root")
    except (FormatError, NoteError) as e:
        raise MonitorStateError(
            f"{path}: the monitor's state is damaged ({e}); it was left as it is. Move it away to start "
            "afresh (and lose the key and the checkpoint it remembered)"
        ) from None
    return Remembered(origin, key, size, root, checkpoint)


def write_state(path: Path, r: Remembered) -> None:
    """Replace the state atomically: a kill at any point leaves the old file or the new one."""
    doc = {
        "checkpoint": base64.b64encode(r.checkpoint).decode(),
        "origin": r.origin,
        "root": base64.b64encode(r.root).decode(),
        "tree_size": r.size,
        "type": STATE_TYPE,
        "v": 1,
        "vkey": r.key.vkey,
    }
    replace_atomically(path, canonical_bytes(doc))


def replay_path(path: Path) -> Path:
    """Where the ledger replayed up to the state's checkpoint is kept (state/replay_cache.py)."""
    return path.with_suffix(".ledger")


def other_logs(folder: Path, path: Path) -> tuple[dict[str, list[bytes]], list[str]]:
    """The other logs this state folder remembers (origin -> the key pinned for it), and the
    state files that could not be read as one: a log is its key as much as its origin, and the
    verifier's rule for a key or an origin seen before under another name applies to them."""
    known: dict[str, list[bytes]] = {}
    skipped: list[str] = []
    for other in sorted(folder.glob("*.json")):
        if other == path:
            continue
        try:
            # Not following a link, not waiting on a FIFO: only a regular file is a state.
            fd = os.open(other, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise OSError(f"{other.name} is not a regular file")
                data = f.read(_MAX_STATE_BYTES + 1)
            doc = parse_canonical(data)
            known[doc["origin"]] = [parse_vkey(doc["vkey"]).public_key]
        except (OSError, FormatError, KeyError, TypeError):
            skipped.append(other.name)
    return known, skipped


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """One monitor at a time per log and state folder: two would race, and the slower could put
    back an older tree."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as e:
        raise MonitorStateError(f"{path.parent}: cannot use it for the monitor's state ({e.strerror or e})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise MonitorStateError(f"{path}: another monitor is following this log with the same state") from None
        yield
    finally:
        os.close(fd)
