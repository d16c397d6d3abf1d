"""The replayed ledger, remembered between commands: `<private>/cache/ledger.snapshot`.

Replaying a million-event ledger takes half a minute; a command that adds one event should not
pay it. After each command and each build the replayed state is saved (generator.verifier's
snapshot format), bound to the bytes it was made from: their length, their SHA-256 and the
Merkle tree they form (size, root and compact range). The next reader hashes that many bytes
of today's ledger (one pass in C, a fraction of a second for a million lines), replays only the
lines after them, and falls back to a full replay whenever anything disagrees: a snapshot that
is missing, torn, edited, made of another ledger, or longer than the ledger is rebuilt, never
trusted. It is a cache: losing it costs one slow replay, so it is written atomically but not
flushed to disk, and its checksum catches what a crash leaves.

The snapshot lives in the private directory because the site never needs it, and it is only
ever a shortcut to the state a replay of the same bytes would reach.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from generator.program.datadir import Paths
from generator.state.cache_file import Staged, hash_prefix, stage_cache, write_cache
from generator.verifier import (
    FormatError,
    Ledger,
    MerkleStream,
    frontier_of,
    leaf_hash,
    load_snapshot,
    snapshot_bytes,
    stream_from,
)

SNAPSHOT_NAME = "ledger.snapshot"
# The home page lists the latest events: kept here so that a build from the snapshot has them.
LATEST_EVENTS = 12


@dataclass
class ReplayStart:
    """Where a replay begins: an empty ledger, or a snapshot's state at `offset` bytes."""

    ledger: Ledger = field(default_factory=Ledger)
    stream: MerkleStream = field(default_factory=MerkleStream)
    offset: int = 0
    hasher: Any = field(default_factory=hashlib.sha256)  # of the ledger's first `offset` bytes
    latest: deque[tuple[int, dict[str, Any]]] = field(default_factory=lambda: deque(maxlen=LATEST_EVENTS))
    why_not: str | None = None  # why the snapshot was not used, when there was one
    loaded: int = 0  # the leaves the snapshot held
    # The key spans the replay made, when something after it gave the ring its first key from
    # keys.json (gather does): a snapshot holds what a replay makes, nothing else.
    spans: int | None = None

    def moved_on(self) -> bool:
        """Whether a replay from here reached further than the snapshot, and nothing was
        applied beyond what it read: the state is worth saving, and still the file's."""
        return self.stream.size == self.ledger.size != self.loaded

    def advance(self, line: bytes) -> None:
        """Count one more line of the ledger (with its newline) as read: its bytes and its leaf."""
        self.hasher.update(line)
        self.offset += len(line)
        self.stream.append(leaf_hash(line[:-1] if line.endswith(b"\n") else line))

    def take(self, index: int, leaf: dict[str, Any], line: bytes) -> None:
        """Follow one more valid line, parsed as `leaf`."""
        self.advance(line)
        self.latest.append((index, leaf))


@functools.cache
def rules_version() -> str:
    """The SHA-256 of the verifier's sources and of the ledger file's reader: a snapshot replayed
    under other rules (an older version that let a leaf through) is replayed again rather than
    believed."""
    h = hashlib.sha256()
    root = Path(__file__).parent.parent  # generator/
    verifier = sorted((root / "verifier").rglob("*.py"))
    for source in [*verifier, root / "state" / "ledger_cache.py", root / "program" / "ledgerfile.py"]:
        h.update(source.relative_to(root).as_posix().encode() + b"\0" + source.read_bytes() + b"\0")
    return h.hexdigest()


def snapshot_path(paths: Paths) -> Path:
    return paths.private / "cache" / SNAPSHOT_NAME


def start_replay(paths: Paths, f: BinaryIO) -> ReplayStart:
    """The snapshot's state if it still describes the first bytes of `f` (left positioned just
    after them), else an empty start (`f` at 0) saying why."""
    path = snapshot_path(paths)
    f.seek(0)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ReplayStart()
    except OSError as e:
        return ReplayStart(why_not=f"{paths.show(path)} cannot be read ({e.strerror or e})")
    try:
        ledger, extra = load_snapshot(data)
        offset, digest = extra["ledger_bytes"], extra["ledger_sha256"]
        stream = stream_from(extra["frontier"])
        latest = deque(((int(i), leaf) for i, leaf in extra["latest"]), maxlen=LATEST_EVENTS)
        if stream.size != ledger.size or stream.root().hex() != extra["root"]:
            raise FormatError("its tree does not match its ledger state")
        if extra["rules"] != rules_version():
            raise FormatError("it was made by another version of the ledger's rules")
    except (FormatError, KeyError, TypeError, ValueError) as e:
        return ReplayStart(why_not=f"{paths.show(path)} is damaged ({e})")
    del data
    if not isinstance(offset, int) or offset < 0:
        return ReplayStart(why_not=f"{paths.show(path)} is damaged (a malformed length)")
    hasher = hash_prefix(f, offset)
    if hasher is None:
        f.seek(0)
        return ReplayStart(why_not=f"{paths.show(path)} describes a longer ledger than today's")
    if hasher.hexdigest() != digest:
        f.seek(0)
        return ReplayStart(why_not=f"{paths.show(path)} was made from another ledger (its first bytes differ)")
    return ReplayStart(ledger, stream, offset, hasher, latest, loaded=ledger.size)


def follow_appended(paths: Paths, start: ReplayStart, f: BinaryIO) -> None:
    """After a command appended its lines to `f` (which `start` had replayed to its end, and
    whose ledger has applied the new leaves), follow them and save the state reached."""
    f.seek(start.offset)
    tail: deque[tuple[int, bytes]] = deque(maxlen=LATEST_EVENTS)
    for line in f:
        if not line.endswith(b"\n"):
            return  # not what a command appends: leave it to the next replay
        start.advance(line)
        tail.append((start.stream.size - 1, line[:-1]))
    if start.stream.size != start.ledger.size:
        return
    try:
        start.latest.extend((i, json.loads(raw)) for i, raw in tail)
    except ValueError:
        return
    save(paths, start)


def save(paths: Paths, start: ReplayStart) -> None:
    """Remember `start` (a replay that reached the end of a valid ledger) for the next reader.
    A failure to write is not an error: the next reader replays."""
    write_cache(snapshot_path(paths), _snapshot(start))


def stage(paths: Paths, start: ReplayStart) -> Staged | None:
    """`save`, written beside its place until the caller commits it."""
    return stage_cache(snapshot_path(paths), _snapshot(start))


def _snapshot(start: ReplayStart) -> bytes:
    extra = {
        "ledger_bytes": start.offset,
        "ledger_sha256": start.hasher.hexdigest(),
        "frontier": frontier_of(start.stream),
        "root": start.stream.root().hex(),
        "latest": [[i, leaf] for i, leaf in start.latest],
        "rules": rules_version(),
    }
    return snapshot_bytes(start.ledger, extra, start.spans)
