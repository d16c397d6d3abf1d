"""The ledger's history as a site publishes it (FORMAT.md v2): every checkpoint a build ever
published, kept verbatim; consistency proofs from each of them to today's; an inclusion proof
for every reveal and certificate, against today's checkpoint.

The archive lives in the last release: a build carries its checkpoints forward byte for byte
(cosignatures and all) after checking each against this build's own tree, so an old checkpoint
can never be dropped or replaced without the build refusing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.build.previous_release import PreviousRelease
from generator.build.writer import SiteWriter
from generator.core import canonical_json, layout
from generator.core.generator_errors import InputError, TransparencyError, problem
from generator.core.key_schedule import BuildKeys
from generator.core.proofs import MerkleTree
from generator.core.signing_key import Signer
from generator.verifier import (
    TILE_WIDTH,
    FormatError,
    KeyRing,
    NoteError,
    TileBuilder,
    checkpoint_signers,
    entry_bundle_path,
    format_tlog_proof,
    is_safe_path,
    parse_canonical,
    parse_entry_bundle,
    parse_tlog_proof,
    partial_tile_paths,
    replace_atomically,
    signer_problems,
    tile_paths,
)


@dataclass(frozen=True)
class Archived:
    size: int
    checkpoint: bytes


def _refuse(path: Path, why: str) -> InputError:
    return InputError(
        [problem(str(path), f"{why}; refusing to build over it. Move the site away to start a new history.")],
        "the last release's checkpoint history cannot be carried forward",
    )


def carried_checkpoints(
    previous: PreviousRelease, origin: str, ring: KeyRing, tree: MerkleTree, kept: Path | None = None
) -> list[Archived]:
    """The checkpoints published before: those the program keeps (`kept`, data/checkpoints/,
    written after every build, so that a lost site loses no history) and those the `previous`
    release archived, each checked against this build's tree and signed by the keys the ledger
    made valid for its size. The two must agree where both hold a size."""
    found: list[tuple[Path, bytes]] = []
    if kept is not None and kept.is_dir():
        names = sorted((p for p in kept.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
        found += [(p, p.read_bytes()) for p in names if p.is_file() and not p.is_symlink()]
    history_file = previous.file(layout.HISTORY)
    if history_file.is_file():
        try:
            doc = parse_canonical(history_file.read_bytes())
            rels = [row["checkpoint"] for row in doc["checkpoints"]]
            if not all(is_safe_path(rel) and rel.startswith(f"{layout.LEDGER_PREFIX}/") for rel in rels):
                raise FormatError("a checkpoint path leaves the ledger folder")
            found += [(previous.file(rel), previous.file(rel).read_bytes()) for rel in rels]
        except (OSError, FormatError, KeyError, TypeError) as e:
            raise _refuse(history_file, f"the last release's checkpoint history is unreadable ({e})") from None
    elif previous.file(layout.CHECKPOINT).is_file():  # a v1 release: its one checkpoint starts the history
        found.append((previous.file(layout.CHECKPOINT), previous.file(layout.CHECKPOINT).read_bytes()))
    by_size: dict[int, Archived] = {}
    for path, data in found:
        try:
            (cp_origin, size, root), signers = checkpoint_signers(data, ring)
            wrong = signer_problems(ring, size, signers)
            if wrong or cp_origin != origin:
                raise FormatError("; ".join(wrong) or f"origin {cp_origin!r}")
        except (NoteError, FormatError) as e:
            raise _refuse(path, f"an archived checkpoint does not verify with the ledger's keys ({e})") from None
        if size > tree.size or tree.root(size) != root:
            raise _refuse(path, f"the archived checkpoint of size {size} is not a prefix of this ledger")
        if size in by_size and by_size[size].checkpoint != data and size < tree.size:
            raise _refuse(path, f"two different archived checkpoints of size {size} (data/ and the last release)")
        by_size.setdefault(size, Archived(size, data))
    return [by_size[size] for size in sorted(by_size)]


def remember_published(site: Path, kept: Path) -> list[tuple[str, bytes]]:
    """Keep every checkpoint the site just published archived (see remember); the files it
    wrote, by name."""
    doc = parse_canonical((site / layout.HISTORY).read_bytes())
    written = []
    for row in doc["checkpoints"]:
        checkpoint = (site / row["checkpoint"]).read_bytes()
        if remember(kept, row["tree_size"], checkpoint):
            written.append((str(row["tree_size"]), checkpoint))
    return written


def remember(kept: Path, size: int, checkpoint: bytes) -> bool:
    """Keep a published checkpoint in the program's data (atomically: a kill leaves the old file
    or the new one): the archive then survives the loss of the site. False if it was kept already."""
    kept.mkdir(parents=True, exist_ok=True)
    target = kept / str(size)
    if target.is_file() and target.read_bytes() == checkpoint:
        return False
    replace_atomically(target, checkpoint, 0o644)
    return True


def with_hand_overs(carried: list[Archived], keys: BuildKeys, origin: str, tree: MerkleTree) -> list[Archived]:
    """The archive with a hand-over checkpoint for every key rotation: the tree that first holds
    the rotation, signed by the key it retires and the one it introduces, so that a reader who
    trusted the old key can follow to the new one. Made once, by the build after the rotation
    (while the retired key is still here), then carried forward like any archived checkpoint."""
    have = {a.size for a in carried}
    # Every key valid for the hand-over signs it, a key revoked later included while the
    # compromise it records came after (BuildKeys).
    # The checkpoint that first holds an ML-DSA-44 key's addition, or its rotation, is one too:
    # the key the reader trusted signs the tree that brings the new one.
    firsts = sorted({s.first_size for s in keys.ring.spans[1:]} | {s.first_size for s in keys.ring.ml_dsa})
    made = [
        Archived(size, keys.checkpoint(origin, size, tree.root(size)))
        for size in firsts
        if size not in have and size < tree.size
    ]
    return sorted(carried + made, key=lambda a: a.size)


def _consistency_document(tree: MerkleTree, old: int, new: int) -> bytes:
    """RFC 9162 §2.1.4 PROOF(old, D[new]) as the site publishes it (FORMAT.md v2, "History")."""
    return canonical_json.dumps(
        {
            "hashes": [h.hex() for h in tree.consistency_proof(old, new)],
            "new_root": tree.root(new).hex(),
            "new_size": new,
            "old_root": tree.root(old).hex(),
            "old_size": old,
            "type": "consistency-proof",
            "v": 1,
        }
    )


def write_history(
    w: SiteWriter, signer: Signer, origin: str, tree: MerkleTree, checkpoint: bytes, carried: list[Archived]
) -> list[dict[str, Any]]:
    """ledger/checkpoints/<N>, ledger/consistency/<M>.json and their index, ledger/history.json."""
    size = tree.size
    archive = [a for a in carried if a.size < size] + [Archived(size, checkpoint)]
    rows = []
    for a in archive:
        w.write(layout.archived_checkpoint(a.size), a.checkpoint)
        consistency = None
        if a.size < size:
            consistency = layout.consistency_proof(a.size)
            w.write(consistency, _consistency_document(tree, a.size, size))
        rows.append(
            {
                "checkpoint": layout.archived_checkpoint(a.size),
                "consistency": consistency,
                "root": tree.root(a.size).hex(),
                "tree_size": a.size,
            }
        )
    doc = {"checkpoints": rows, "origin": origin, "tree_size": size, "type": "checkpoint-history", "v": 1}
    w.write_signed(layout.HISTORY, canonical_json.dumps(doc), signer)
    return rows


def v3_archive(carried: list[Archived], size: int, checkpoint: bytes) -> list[Archived]:
    """A v3 site's archive (docs/formats/v3.md, 1): every checkpoint carried, and today's. Today's
    is the one the release that first published this size archived, when there was one (a
    rebuild without growth): an archived checkpoint keeps its bytes, while ledger/checkpoint may
    gain the cosignatures that arrive later."""
    kept = next((a for a in carried if a.size == size), None)
    return [a for a in carried if a.size < size] + [kept or Archived(size, checkpoint)]


def write_history_v3(
    w: SiteWriter,
    signer: Signer,
    origin: str,
    tree: MerkleTree,
    archive: list[Archived],
    previous: PreviousRelease | None,
) -> list[dict[str, Any]]:
    """A v3 site's history (docs/formats/v3.md, 1): ledger/checkpoints/<M> for every row, today's
    included, and one consistency proof a row, from the row before, ledger/consistency/<M0>-<M>.json,
    written by the release that adds the row and kept byte for byte after (a proof is a function
    of the two trees, so the same bytes: one that differs is a changed history, refused); then
    ledger/history.json, v 2."""
    rows: list[dict[str, Any]] = []
    before: int | None = None
    for a in archive:
        w.write(layout.archived_checkpoint(a.size), a.checkpoint)
        consistency = None
        if before is not None:
            consistency = layout.consistency_step(before, a.size)
            data = _consistency_document(tree, before, a.size)
            old = previous.file(consistency) if previous is not None else None
            if old is not None and old.is_file() and old.read_bytes() != data:
                raise _refuse(old, "a consistency proof of the last release differs from this ledger's")
            w.write(consistency, data)
        rows.append(
            {
                "checkpoint": layout.archived_checkpoint(a.size),
                "consistency": consistency,
                "root": tree.root(a.size).hex(),
                "tree_size": a.size,
            }
        )
        before = a.size
    doc = {"checkpoints": rows, "origin": origin, "tree_size": tree.size, "type": "checkpoint-history", "v": 2}
    w.write_signed(layout.HISTORY, canonical_json.dumps(doc), signer)
    return rows


def write_inclusion_proofs_v3(
    w: SiteWriter,
    tree: MerkleTree,
    today: bytes,
    archive: list[Archived],
    artifacts: Iterable[tuple[str, int]],
    leaf_bytes: Callable[[int], bytes],
    previous: PreviousRelease | None,
) -> int:
    """`<artifact>.tlog-proof` for each (artifact path, leaf index) of a v3 site (docs/formats/v3.md,
    2): the last release's proof, kept as it is, else a new one against `today`, the archived
    checkpoint of this release (which first publishes the artifact). A kept proof must prove the
    same leaf at the same index, against a checkpoint the archive holds byte for byte: anything
    else stops the build, which never rewrites a proof. Returns how many are new."""
    archived = {a.checkpoint: a.size for a in archive}
    made = 0
    for rel, index in artifacts:
        proof_rel = layout.tlog_proof(rel)
        old = previous.file(proof_rel) if previous is not None else None
        if w.take_vouched(proof_rel):
            continue  # the file the last build checked and recorded, untouched since
        if old is not None and old.is_file():
            data = old.read_bytes()
            try:
                proof = parse_tlog_proof(data)
            except FormatError as e:
                raise _refuse(old, f"the last release's inclusion proof is unreadable ({e})") from None
            if proof.index != index or proof.extra != leaf_bytes(index):
                raise _refuse(old, f"the last release's inclusion proof is not of this ledger's leaf {index}")
            if proof.checkpoint not in archived:
                raise _refuse(old, "the last release's inclusion proof holds a checkpoint the history does not archive")
            w.write(proof_rel, data)
            continue
        w.write(proof_rel, format_tlog_proof(leaf_bytes(index), index, tree.inclusion_proof(index), today))
        made += 1
    return made


def write_inclusion_proofs(
    w: SiteWriter,
    tree: MerkleTree,
    checkpoint: bytes,
    artifacts: Iterable[tuple[str, int]],
    leaf_bytes: Callable[[int], bytes],
) -> int:
    """`<artifact>.tlog-proof` for each (artifact path, leaf index); returns how many."""
    count = 0
    for rel, index in artifacts:
        w.write(
            layout.tlog_proof(rel),
            format_tlog_proof(leaf_bytes(index), index, tree.inclusion_proof(index), checkpoint),
        )
        count += 1
    return count


def resumed_tiles(w: SiteWriter, size: int, root: bytes, archived: Iterable[int]) -> TileBuilder | None:
    """The tiles' state at `size` (the last release's tree, whose root is `root`), made from the
    last release's partial tiles at that size, each one the last build recorded, untouched since
    (SiteWriter.vouched), and every whole tile and every partial tile of an `archived` size that
    a build keeps vouched for too; None (build them from the first leaf) otherwise. Its
    unfinished rows are exactly those partial tiles' hashes (the bundle's leaves hashing to the
    first row's), and its root must be `root`."""
    if any(w.vouched(layout.tile(rel)) is None for rel in sorted(kept_partials(archived, size))):
        return None
    levels: list[list[bytes]] = []
    entries = b""
    for rel, width in tile_paths(size):
        if w.vouched(layout.tile(rel)) is None:
            return None
        if width == TILE_WIDTH:
            continue
        try:
            data = w.previous.file(layout.tile(rel)).read_bytes() if w.previous is not None else b""
        except OSError:
            return None
        if rel.startswith("tile/entries/"):
            entries = data
        else:
            levels.append([data[i : i + 32] for i in range(0, len(data), 32)])
    rows = [[h.hex() for h in row] for row in levels]
    # Levels whose row is empty (a multiple of 256 below) have no partial tile: put them back.
    state_levels: list[list[str]] = []
    count, it = size, iter(rows)
    while count:
        state_levels.append(next(it) if count % TILE_WIDTH else [])
        count //= TILE_WIDTH
    try:
        builder = TileBuilder.resumed({"size": size, "levels": state_levels or [[]], "entries": entries.hex()})
    except (FormatError, StopIteration):
        return None
    return builder if builder.root() == root else None


def older_leaves(w: SiteWriter, size: int, indices: list[int]) -> dict[int, bytes] | None:
    """The leaves at `indices` (each below `size`, the last release's tree size), read from the
    last release's entry bundles, each one the last build recorded, untouched since; None if one
    is not."""
    out: dict[int, bytes] = {}
    for k in sorted({i // TILE_WIDTH for i in indices}):
        width = min(TILE_WIDTH, size - k * TILE_WIDTH)
        rel = layout.tile(entry_bundle_path(k, width))
        if w.vouched(rel) is None or w.previous is None:
            return None
        try:
            leaves = parse_entry_bundle(w.previous.file(rel).read_bytes(), width, where=rel)
        except (OSError, FormatError):
            return None
        out.update({i: leaves[i % TILE_WIDTH] for i in indices if i // TILE_WIDTH == k})
    return out


def kept_partials(archived: Iterable[int], size: int) -> set[str]:
    """The partial tiles of archived sizes up to `size` that are still partial at `size`: what a
    log serves for a reader holding one of those checkpoints (C2SP tlog-tiles)."""
    whole = {rel for rel, width in tile_paths(size) if width == TILE_WIDTH}
    return {rel for m in archived if 0 < m <= size for rel in partial_tile_paths(m) if rel.split(".p/")[0] not in whole}


class Tiles:
    """The ledger as C2SP tlog-tiles under `ledger/`, built as the entries are written. A full
    tile never changes: one the last release published is kept (hard-linked, not rewritten), and
    one that differs from it stops the build, since it would mean history changed.

    C2SP tlog-tiles requires a log to serve the partial tiles of every size it produced a
    checkpoint for, until their full tile exists: a reader holding an archived checkpoint fetches
    them. So the partial tiles of each archived size are written too, while their tile is still
    partial; they are the same bytes every time (the writer links the last release's)."""

    def __init__(
        self,
        w: SiteWriter,
        previous: PreviousRelease | None,
        archived: Iterable[int] = (),
        resume: TileBuilder | None = None,
    ) -> None:
        self._w = w
        self._previous = previous
        self._builder = resume or TileBuilder()
        self._archived = set(archived)
        self._partial: dict[str, bytes] = {}  # the partial tiles to write, by path
        # Resumed (resumed_tiles): the last release's tiles up to the builder's size are taken as
        # they are; of its partial tiles at archived sizes, those still partial at the end.
        self._taken: set[str] = set()
        if resume is not None:
            self._take_previous(resume.size)

    def _take_previous(self, size: int) -> None:
        for rel, width in tile_paths(size):
            if width == TILE_WIDTH:
                self._take(rel)
        self._taken = kept_partials(self._archived, size)

    def _take(self, rel: str) -> None:
        # resumed_tiles found each vouched for a moment ago: failing now, it changed meanwhile.
        if not self._w.take_vouched(layout.tile(rel)):
            raise TransparencyError(
                f"{self._w.root / layout.tile(rel)}: the last release's tile changed while this build ran; build again"
            )

    def append(self, leaf: bytes) -> None:
        for rel, data in self._builder.append(leaf):
            self._full(layout.tile(rel), data)
            # The full tile is published: its partials may go (C2SP tlog-tiles).
            for partial in [p for p in self._partial if p.startswith(rel + ".p/")]:
                del self._partial[partial]
            self._taken = {p for p in self._taken if not p.startswith(rel + ".p/")}
        if self._builder.size in self._archived:
            self._partial.update(self._builder.finish())

    def _full(self, rel: str, data: bytes) -> None:
        old = self._previous.file(rel) if self._previous is not None else None
        if old is not None and old.is_file() and (old.stat().st_size != len(data) or old.read_bytes() != data):
            raise _refuse(old, "a full tile of the last release differs from this ledger's")
        self._w.write(rel, data)  # the writer links the last release's file, which holds these bytes

    def finish(self, root: bytes) -> None:
        self._partial.update(self._builder.finish())
        for rel in sorted(self._partial):
            self._w.write(layout.tile(rel), self._partial[rel])
        for rel in sorted(self._taken - set(self._partial)):
            self._take(rel)
        if self._builder.root() != root:  # pragma: no cover - two codes for one root
            raise RuntimeError("the tiles' root differs from the ledger's")
