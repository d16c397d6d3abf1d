"""A log's ledger as a follower last replayed it (the monitor, a witness replaying the rules), kept
so that its next run replays only the entries after it.

A cache in the ledger-snapshot format ("State snapshots", FORMAT.md) whose `extra` names the log
(`origin`), the tree (`tree_size`, `frontier`: its compact range, one perfect subtree hash per set
bit of the size) and the roots at key hand-overs. The next run extends the compact range with the
new entries' leaf hashes and requires the checkpoint's root: that one comparison proves the new
tree extends the remembered one and that every new entry is the log's. A replay that is missing,
damaged, or of another tree is only set aside (the whole log is read again); a kill while it is
written leaves the old file or the new one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from generator.core.regularfile import TooLarge, read_regular
from generator.verifier import (
    FormatError,
    Ledger,
    MerkleStream,
    bundles_from,
    frontier_of,
    load_snapshot,
    parse_entry_bundle,
    replace_atomically,
    snapshot_bytes,
    stream_from,
)

# A replay of ten million items is under a gigabyte; past that the file is not one of ours.
_MAX_REPLAY_BYTES = 1 << 32


@dataclass
class Replayed:
    """The rules' state after the replay, the tree's compact range, the roots at hand-overs."""

    ledger: Ledger
    tree: MerkleStream
    hand_over_roots: dict[int, bytes]


def read_replay(path: Path, origin: str, size: int, root: bytes | None = None) -> Replayed | None:
    """The replay in `path` if it is one of `origin`'s tree at `size` (and `root`, when known);
    else None, and the caller reads the whole log. Its own SHA-256 trailer refuses a torn file."""
    try:
        ledger, extra = load_snapshot(read_regular(path, _MAX_REPLAY_BYTES))
        tree = stream_from(extra["frontier"])
        roots = {int(k): bytes.fromhex(v) for k, v in extra["hand_over_roots"].items()}
    except (OSError, TooLarge, FormatError, KeyError, TypeError, ValueError, AttributeError):
        return None
    if (extra.get("origin"), extra.get("tree_size"), tree.size) != (origin, size, size) or ledger.size != size:
        return None
    if root is not None and tree.root() != root:
        return None
    if any(len(r) != 32 for r in roots.values()):
        return None
    return Replayed(ledger, tree, roots)


def write_replay(path: Path, origin: str, replayed: Replayed, spans: int | None = None) -> None:
    """Save the replay atomically (mode 0600). `spans`: the key spans the replay itself made, when
    the caller has since started the ring with a key of its own (snapshot_bytes)."""
    extra = {
        "origin": origin,
        "tree_size": replayed.tree.size,
        "frontier": frontier_of(replayed.tree),
        "hand_over_roots": {str(k): v.hex() for k, v in sorted(replayed.hand_over_roots.items())},
    }
    replace_atomically(path, snapshot_bytes(replayed.ledger, extra, spans), 0o600)


def new_entries(read: Callable[[str], bytes | None], start: int, size: int) -> Iterator[bytes]:
    """Leaves `start` to `size` - 1 from the entry bundles alone (`read` takes a path under the log
    prefix, `tile/entries/…`): unchecked until the caller has added their hashes to the remembered
    compact range and compared the root with the checkpoint's. FormatError for a missing or
    malformed bundle."""
    for rel, width, skip in bundles_from(start, size):
        data = read(rel)
        if data is None:
            raise FormatError(f"{rel} is missing")
        yield from parse_entry_bundle(data, width, rel)[skip:]
