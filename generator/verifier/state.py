"""The verifier's memory (FORMAT.md v2): the last checkpoint it verified, per log origin.

A site's key holder can re-sign a rewritten history, and a verifier that remembers nothing
would pass it. The state file lets every later run detect a rollback or a fork by itself, as
Go's checksum-database client does with its cached tree. It is written only after a run in
which every check passed, atomically (a kill leaves the old file or the new one, never half of
one), and a state file that cannot be read stops the run instead of being replaced: losing it
silently would lose exactly the memory it exists for.
"""

import base64
import os
import tempfile
from pathlib import Path
from typing import Any

from generator.verifier.canonical import canonical_bytes, parse_canonical
from generator.verifier.errors import FormatError
from generator.verifier.formats import check_keys, is_int, is_origin
from generator.verifier.keys import b64decode_strict

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
    """origin -> {"tree_size", "root", "checkpoint"}; {} if the file does not exist yet."""
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
            if not is_origin(origin) or check_keys(row, ("checkpoint", "root", "tree_size")):
                raise FormatError(f"the row of {origin!r} is malformed")
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


def write_state(path: Path, logs: dict[str, dict[str, Any]], tree: dict[str, Any], checkpoint: bytes) -> None:
    """Remember `tree` (a verified checkpoint) for its origin, replacing the file atomically."""
    logs = dict(logs)
    logs[tree["origin"]] = {
        "checkpoint": base64.b64encode(checkpoint).decode(),
        "root": tree["root"],
        "tree_size": tree["tree_size"],
    }
    data = canonical_bytes({"logs": logs, "type": "verifier-state", "v": 1})
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_atomically(path, data)


def replace_atomically(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write `data` to `path` so that a kill at any moment leaves the old file or the new one,
    whole: a temporary file beside it, flushed to disk, renamed over it, the folder flushed."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
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
