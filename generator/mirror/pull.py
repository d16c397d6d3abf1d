"""One update of a mirror (`transparency mirror follow SITE`), the pull side of c2sp.org/tlog-mirror:
the log's checkpoint read from a site, every tile the mirror lacks fetched, checked and stored,
and only then the checkpoint cosigned.

A run, for the log whose checkpoint the site serves (`ledger/checkpoint`, tiles under `ledger/tile/`):

1. opens the checkpoint with the pinned log keys (`--log`, or a policy's `log` lines; never the
   site's keys.json), keeping the log's own signature lines;
2. compares it with the mirror's checkpoint of that log: a smaller tree is refused, another root
   at the same size is a fork, refused, and the same tree is nothing to do (no new cosignature:
   not a byte changes); a larger tree must be consistent with the stored one, by a consistency
   proof made from the site's hash tiles and checked against both roots;
3. fetches every tile of the new tree that the copy lacks (full tiles once, the partial tiles of
   the new size), a few on their way at once, and checks them as the verifier's TiledLog reads a
   log: the leaves of each entry bundle added to the stored tree (its compact range, rebuilt from
   the stored partial tiles and checked against the stored root), each hash tile against the
   leaves under it. A tile is written (durably, log_copy.py) once it is checked, and the root of
   the leaves must be the checkpoint's;
4. reads back from disk every tile of the new tree, recomputes the root from the stored entry
   bundles the same way, and only if it is the checkpoint's cosigns the checkpoint with the
   mirror's key and writes the mirror's checkpoint (the log's note and signatures, then the
   mirror's cosignature), atomically, last.

A kill at any moment leaves the old checkpoint with its tiles, and perhaps new tiles that no
checkpoint names yet. The next run checks those as it checks fetched ones, so that a long first
copy goes on where it stopped; if they do not give the checkpoint's root (left by a run that was
refused) it fetches every new tile again. A refusal or an error leaves the mirror's checkpoint as
it was.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.core import layout
from generator.core.cosigning_keys import Cosigner
from generator.mirror.log_copy import MAX_TILE_BYTES, LogCopy, MirrorCheckpoint
from generator.mirror.mirror_errors import MirrorError, Refused
from generator.monitor.read_ahead import ReadAhead
from generator.monitor.site_source import Fetch, open_site
from generator.verifier import (
    TILE_WIDTH,
    CosignerKey,
    FormatError,
    LogKey,
    NoteError,
    ProofError,
    TileBuilder,
    VerifierKey,
    bundles_from,
    consistency_proof_from_tiles,
    entry_bundle_path,
    log_signature_lines,
    parse_checkpoint,
    parse_entry_bundle,
    partial_tile_paths,
    read_tiled_log,
    show,
    split_note,
    tile_read_order,
    verify_consistency,
)

# (phase, done, total): what a long run reports as it goes.
Progress = Callable[[str, int, int], None]

FETCHING = "fetching tiles"
CHECKING = "checking the stored entries"
_MAX_CHECKPOINT_BYTES = 1 << 16
_MAX_HASH_TILE_BYTES = TILE_WIDTH * 32
_ENTRIES = "tile/entries/"


@dataclass(frozen=True)
class LogCheckpoint:
    """The log's checkpoint as the site serves it, opened with a pinned key: its tree, its text,
    and the log's own signature lines (those the pinned keys verified)."""

    origin: str
    size: int
    root: bytes
    text: str
    signatures: str


@dataclass(frozen=True)
class Pulled:
    """What a run did: the log, where its copy lies, the size cosigned before (None: the first
    run), the size now, how many tiles were fetched, and whether it cosigned a new checkpoint."""

    origin: str
    folder: Path
    old_size: int | None
    size: int
    fetched: int
    cosigned: bool


def _b64(h: bytes) -> str:
    return base64.b64encode(h).decode()


def _limit(rel: str) -> int:
    return MAX_TILE_BYTES if rel.startswith(_ENTRIES) else _MAX_HASH_TILE_BYTES


def _quiet(phase: str, done: int, total: int) -> None:
    pass


def open_log_checkpoint(note: bytes, log_keys: Sequence[LogKey]) -> LogCheckpoint:
    """The site's checkpoint, opened with the pinned keys named for its origin, as a reader's
    policy opens it: signed by one of the pinned Ed25519 keys if any is pinned, and by one of the
    pinned ML-DSA-44 keys if any is. Refused when no pinned key is for its log, or when a type of
    key pinned did not sign it. The log's lines kept are those that verified."""
    origin = note.split(b"\n", 1)[0].decode("utf-8", "replace")
    keys = [k for k in log_keys if k.name == origin]
    if not keys:
        pinned = ", ".join(show(name) for name in sorted({k.name for k in log_keys}))
        raise Refused(
            f"{layout.CHECKPOINT}: a checkpoint of the log {show(origin)}, for which no key is pinned "
            f"(the pinned keys are for {pinned})"
        )
    try:
        text, _ = split_note(note)
        verified = log_signature_lines(note, keys)
        for kind, label in ((VerifierKey, "Ed25519"), (CosignerKey, "ML-DSA-44")):
            if any(isinstance(k, kind) for k in keys) and not any(isinstance(k, kind) for k in verified):
                raise NoteError(f"no signature by the pinned {label} key(s)")
        lines = "".join(verified.values())
        cp_origin, size, root = parse_checkpoint(text)
    except (NoteError, FormatError) as e:
        raise Refused(
            f"{layout.CHECKPOINT} does not verify with the pinned log key(s) {', '.join(k.vkey for k in keys)}: {e}. "
            "The log was re-keyed (pin its new key) or the checkpoint is forged"
        ) from None
    return LogCheckpoint(cp_origin, size, root, text, lines)


def _unchanged(stored: MirrorCheckpoint, cp: LogCheckpoint) -> bool:
    """Whether the log's checkpoint is the tree the mirror holds; Refused when it is smaller, or
    another tree of the same size."""
    if cp.size < stored.size:
        raise Refused(
            f"rolled back: the log's checkpoint has size {cp.size} (root {_b64(cp.root)}), smaller than the size "
            f"{stored.size} (root {_b64(stored.root)}) this mirror holds and cosigned; nothing was changed"
        )
    if cp.size == stored.size and cp.root != stored.root:
        raise Refused(
            f"forked: at size {cp.size} the log's checkpoint has root {_b64(cp.root)}, but this mirror holds and "
            f"cosigned root {_b64(stored.root)}; nothing was changed"
        )
    return cp.size == stored.size


def _completed_by(rel: str, size: int) -> bool:
    """Whether `rel` is a full hash tile that the tree of `size` leaves completes: level-L tile N
    holds the subtree roots of leaves N·256^(L+1) to (N+1)·256^(L+1) - 1."""
    parts = rel.split("/")
    if rel.startswith(_ENTRIES) or ".p" in rel or len(parts) < 3:
        return False
    level, index = int(parts[1]), int("".join(p.removeprefix("x") for p in parts[2:]))
    return (index + 1) << (8 * (level + 1)) <= size


def _check_consistent(fetch: Fetch, copy: LogCopy, stored: MirrorCheckpoint, cp: LogCheckpoint) -> dict[str, bytes]:
    """The log's tree extends the mirror's: PROOF(stored size, new tree), made from the hash tiles
    of the new tree (those under the stored tree read from the copy, the others fetched), must take
    the stored root to the checkpoint's. The tiles fetched, which the store then checks and keeps
    instead of fetching them again; Refused when the proof cannot be made or does not verify."""
    both = (
        f"the log's checkpoint (size {cp.size}, root {_b64(cp.root)}) and this mirror's (size {stored.size}, "
        f"root {_b64(stored.root)})"
    )
    fetched: dict[str, bytes] = {}

    def read(rel: str) -> bytes | None:
        # A full tile under the stored tree is one the mirror checked and holds: read, not fetched again.
        data = copy.read(rel) if _completed_by(rel, stored.size) else None
        if data is None:
            data = fetch(layout.tile(rel), _MAX_HASH_TILE_BYTES)
            if data is not None:
                fetched[rel] = data
        return data

    try:
        proof, _ = consistency_proof_from_tiles(read, stored.size, cp.size)
    except FormatError as e:
        raise Refused(f"cannot prove {both} consistent from the site's tiles: {e}; nothing was changed") from None
    try:
        verify_consistency(stored.size, cp.size, proof, stored.root, cp.root)
    except ProofError as e:
        tiles = ", ".join(sorted(fetched)) or "none"
        raise Refused(
            f"{both} are not consistent ({e}): the log forked from the tree this mirror holds, or a hash tile the "
            f"proof was made from is wrong (the site's: {tiles}); nothing was changed"
        ) from None
    return fetched


def _partial_tiles_tree(copy: LogCopy, size: int) -> TileBuilder | None:
    """The tree of `size` leaves as TileBuilder resumes from it, from the copy's partial tiles of
    that size alone (each level's, and the partial entry bundle), or None when one is missing."""
    levels: list[list[str]] = [[]]
    entries = b""
    for rel in partial_tile_paths(size):
        data = copy.read(rel)
        if data is None:
            return None
        if rel.startswith(_ENTRIES):
            entries = data
            continue
        level = int(rel.split("/")[1])
        levels += [[] for _ in range(level + 1 - len(levels))]
        levels[level] = [data[i : i + 32].hex() for i in range(0, len(data), 32)]
    return TileBuilder.resumed({"size": size, "levels": levels, "entries": entries.hex()})


def _bundles_tree(copy: LogCopy, size: int) -> TileBuilder:
    """The tree of `size` leaves built again from the copy's entry bundles alone; FormatError when
    one is missing or malformed."""
    builder = TileBuilder()
    for rel, width, _ in bundles_from(0, size):
        data = copy.read(rel)
        if data is None:
            raise FormatError(f"{rel}: missing")
        for leaf in parse_entry_bundle(data, width, where=rel):
            builder.append(leaf)
    return builder


def stored_tree(copy: LogCopy, stored: MirrorCheckpoint | None) -> TileBuilder:
    """The tree the mirror's checkpoint signs, as a TileBuilder to add the new leaves to: rebuilt
    from the copy's partial tiles of its size, whose root must be the checkpoint's (collision
    resistance makes them the tree's compact range); failing that (a partial tile lost), from
    every stored entry bundle. MirrorError if the copy no longer holds that tree."""
    if stored is None:
        return TileBuilder()
    try:
        built = _partial_tiles_tree(copy, stored.size)
    except FormatError:
        built = None
    if built is not None and built.root() == stored.root:
        return built
    try:
        built = _bundles_tree(copy, stored.size)
    except FormatError as e:
        raise MirrorError(
            f"{copy.folder}: the copy no longer holds the tree its checkpoint signs ({e}); move the folder away "
            "to copy the log afresh"
        ) from None
    if built.root() != stored.root:
        raise MirrorError(
            f"{copy.folder}: the stored entries' root {_b64(built.root())} is not the checkpoint's {_b64(stored.root)}"
        )
    return built


def _fresh(held: TileBuilder) -> TileBuilder:
    """A builder to add leaves to, in the state of `held`, which stays as it is for the next pass."""
    return TileBuilder.resumed(held.state())


def new_tiles(first: int, size: int) -> list[str]:
    """The tiles a reader of the log of `size` leaves that already holds the tree of `first`
    leaves reads, in the order it reads them (TiledLog resumed at `first`): the entry bundles from
    the one holding leaf `first` on, the hash tiles they complete, the partial tiles of `size`."""
    if first == size:
        return []
    index = first // TILE_WIDTH
    order = list(tile_read_order(size))
    return order[order.index(entry_bundle_path(index, min(TILE_WIDTH, size - index * TILE_WIDTH))) :]


class _TilesWrong(Exception):
    """The tiles read do not give the checkpoint's tree: a tile named, or the root they give."""


@dataclass(frozen=True)
class _Known:
    """Tiles a run does not fetch: those the consistency proof fetched, those left on disk."""

    fetched: dict[str, bytes]
    on_disk: frozenset[str]


def _fetch_and_store(
    fetch: Fetch,
    copy: LogCopy,
    cp: LogCheckpoint,
    held: TileBuilder,
    known: _Known,
    progress: Progress,
) -> int:
    """Read the log of the checkpoint's size on from the `held` tree (the stored one), each tile from
    what is `known` (fetched already, or on disk) or else from the site, every tile checked by
    TiledLog; write each tile taken from the site once TiledLog has checked it. The number taken
    from the site; _TilesWrong if the tiles do not give the checkpoint's root."""
    paths = new_tiles(held.size, cp.size)
    order = [(layout.tile(rel), _limit(rel)) for rel in paths if rel not in known.fetched and rel not in known.on_disk]
    checked: list[tuple[str, bytes]] = []  # from the site, and checked once TiledLog gives leaves after them
    asked = 0

    def read(rel: str) -> bytes | None:
        nonlocal asked
        if rel in known.on_disk:
            return copy.read(rel)
        data = known.fetched.get(rel)
        if data is None:
            data = ahead.get(layout.tile(rel), _limit(rel))
            asked += 1
            progress(FETCHING, asked, len(order))
        if data is not None:
            checked.append((rel, data))
        return data

    def write_checked() -> None:
        for rel, data in checked:
            copy.write(rel, data)
        checked.clear()

    with ReadAhead(fetch, order) as ahead:
        # TiledLog gives a bundle's leaves only once every tile they complete is checked; after its
        # last leaf, the partial tiles are checked too.
        tiled = read_tiled_log(read, cp.size, _fresh(held))
        try:
            for _ in tiled:
                write_checked()
        except (FormatError, ProofError) as e:
            raise _TilesWrong(str(e)) from None
        write_checked()
    if tiled.root() != cp.root:
        raise _TilesWrong(f"the tiles' root {_b64(tiled.root())} is not the checkpoint's {_b64(cp.root)}")
    return asked + len(known.fetched)


def _store_new_tiles(
    fetch: Fetch,
    label: str,
    copy: LogCopy,
    cp: LogCheckpoint,
    held: TileBuilder,
    fetched: dict[str, bytes],
    progress: Progress,
) -> int:
    """Fetch, check and store every tile of the checkpoint's tree the copy lacks (`fetched`: those
    the consistency proof fetched already); the number taken from the site. Tiles a killed run
    left are read back and checked as fetched ones are; if the log's tiles do not give the
    checkpoint's root with them, every new tile is fetched again. Refused if the site's tiles do
    not give it."""
    on_disk = frozenset(rel for rel in new_tiles(held.size, cp.size) if copy.holds(rel))
    try:
        return _fetch_and_store(fetch, copy, cp, held, _Known(fetched, on_disk - set(fetched)), progress)
    except _TilesWrong as e:
        error = e
    if on_disk:  # tiles a refused run left: fetch every new tile again, over them
        try:
            return _fetch_and_store(fetch, copy, cp, held, _Known(fetched, frozenset()), progress)
        except _TilesWrong as e:
            error = e
    raise Refused(
        f"{label}: the site's tiles do not hold the tree its checkpoint signs (size {cp.size}, root {_b64(cp.root)}): "
        f"{error}; this mirror's checkpoint was not changed"
    )


def check_stored(copy: LogCopy, cp: LogCheckpoint, held: TileBuilder, progress: Progress) -> None:
    """Read back from disk every tile of the checkpoint's tree past the `held` one, each checked, and
    require the root of the stored entry bundles' leaves to be the checkpoint's. MirrorError if
    not: the disk does not hold what was written."""
    first = held.size
    tiled = read_tiled_log(copy.read, cp.size, _fresh(held))
    try:
        for n, _ in enumerate(tiled, 1):
            if n % TILE_WIDTH == 0 or first + n == cp.size:
                progress(CHECKING, n, cp.size - first)
    except (FormatError, ProofError) as e:
        raise MirrorError(f"{copy.folder}: read back, the stored tiles are not those written: {e}") from None
    if tiled.root() != cp.root:
        raise MirrorError(
            f"{copy.folder}: read back, the stored entries' root {_b64(tiled.root())} is not the checkpoint's "
            f"{_b64(cp.root)}"
        )


def cosigned_note(cp: LogCheckpoint, cosigner: Cosigner, timestamp: int) -> bytes:
    """The mirror's checkpoint: the log's checkpoint text and signature lines, then the mirror's
    cosignature made at `timestamp`. Other cosignatures the site's note carried are left out: the
    mirror vouches only for what it checked."""
    return (cp.text + "\n" + cp.signatures + cosigner.cosign(cp.text, timestamp)).encode("utf-8")


def _now() -> int:
    return int(time.time())


def pull(
    site: str,
    out: Path,
    cosigner: Cosigner,
    log_keys: Sequence[LogKey],
    *,
    clock: Callable[[], int] = _now,
    progress: Progress = _quiet,
    fetch: Fetch | None = None,
) -> Pulled:
    """One update of the mirror in `out` from SITE (a folder, or an https:// URL; `fetch` reads it
    instead when given). Refused (exit 1) or MirrorError (exit 2) leave the mirror's checkpoint as
    it was; the monitor's Unreadable (exit 2) when the site cannot be read."""
    label = site
    if fetch is None:
        label, fetch = open_site(site)
    note = fetch(layout.CHECKPOINT, _MAX_CHECKPOINT_BYTES)
    if note is None:
        raise MirrorError(f"{label}: no {layout.CHECKPOINT}: not a transparency site, or not built yet")
    cp = open_log_checkpoint(note, log_keys)
    copy = LogCopy(out, cp.origin)
    with copy.locked():
        stored = copy.checkpoint(cosigner.key)
        old_size = None if stored is None else stored.size
        if stored is not None and _unchanged(stored, cp):
            return Pulled(cp.origin, copy.folder, old_size, cp.size, 0, False)
        proof_tiles = {} if stored is None else _check_consistent(fetch, copy, stored, cp)
        held = stored_tree(copy, stored)
        fetched = _store_new_tiles(fetch, label, copy, cp, held, proof_tiles, progress)
        check_stored(copy, cp, held, progress)
        copy.write_checkpoint(cosigned_note(cp, cosigner, clock()))
    return Pulled(cp.origin, copy.folder, old_size, cp.size, fetched, True)
