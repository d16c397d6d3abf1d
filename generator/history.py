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

from generator import canonical, layout
from generator.errors import InputError, problem
from generator.keys import Signer
from generator.proofs import MerkleTree
from generator.verifier import (
    FormatError,
    NoteError,
    TileBuilder,
    format_tlog_proof,
    is_safe_path,
    open_checkpoint,
    parse_canonical,
    parse_vkey,
)
from generator.writer import SiteWriter


@dataclass(frozen=True)
class Archived:
    size: int
    checkpoint: bytes


def _refuse(path: Path, why: str) -> InputError:
    return InputError(
        [problem(str(path), f"{why}; refusing to build over it. Move the site away to start a new history.")],
        "the last release's checkpoint history cannot be carried forward",
    )


def carried_checkpoints(out: Path, origin: str, vkey: str, tree: MerkleTree) -> list[Archived]:
    """The checkpoints the last release published, each checked against this build's tree."""
    key = parse_vkey(vkey).public_key
    found: list[tuple[Path, bytes]] = []
    history_file = out / layout.HISTORY
    if history_file.is_file():
        try:
            doc = parse_canonical(history_file.read_bytes())
            rels = [row["checkpoint"] for row in doc["checkpoints"]]
            if not all(is_safe_path(rel) and rel.startswith(f"{layout.LEDGER_PREFIX}/") for rel in rels):
                raise FormatError("a checkpoint path leaves the ledger folder")
            found = [(out / rel, (out / rel).read_bytes()) for rel in rels]
        except (OSError, FormatError, KeyError, TypeError) as e:
            raise _refuse(history_file, f"the last release's checkpoint history is unreadable ({e})") from None
    elif (out / layout.CHECKPOINT).is_file():  # a v1 release: its one checkpoint starts the history
        found = [(out / layout.CHECKPOINT, (out / layout.CHECKPOINT).read_bytes())]
    archived: list[Archived] = []
    for path, data in found:
        try:
            _, size, root = open_checkpoint(data, origin, key)
        except (NoteError, FormatError) as e:
            raise _refuse(path, f"an archived checkpoint does not verify with this key ({e})") from None
        if size > tree.size or tree.root(size) != root:
            raise _refuse(path, f"the archived checkpoint of size {size} is not a prefix of this ledger")
        if archived and size <= archived[-1].size:
            raise _refuse(path, "archived checkpoints are not in increasing size")
        archived.append(Archived(size, data))
    return archived


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
            w.write(
                consistency,
                canonical.dumps(
                    {
                        "hashes": [h.hex() for h in tree.consistency_proof(a.size)],
                        "new_root": tree.root().hex(),
                        "new_size": size,
                        "old_root": tree.root(a.size).hex(),
                        "old_size": a.size,
                        "type": "consistency-proof",
                        "v": 1,
                    }
                ),
            )
        rows.append(
            {
                "checkpoint": layout.archived_checkpoint(a.size),
                "consistency": consistency,
                "root": tree.root(a.size).hex(),
                "tree_size": a.size,
            }
        )
    doc = {"checkpoints": rows, "origin": origin, "tree_size": size, "type": "checkpoint-history", "v": 1}
    w.write_signed(layout.HISTORY, canonical.dumps(doc), signer)
    return rows


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


class Tiles:
    """The ledger as C2SP tlog-tiles under `ledger/`, built as the entries are written. A full
    tile never changes: one the last release published is kept (hard-linked, not rewritten), and
    one that differs from it stops the build, since it would mean history changed."""

    def __init__(self, w: SiteWriter, previous: Path | None) -> None:
        self._w = w
        self._previous = previous
        self._builder = TileBuilder()
        self.kept = 0

    def append(self, leaf: bytes) -> None:
        for rel, data in self._builder.append(leaf):
            self._full(layout.tile(rel), data)

    def _full(self, rel: str, data: bytes) -> None:
        if self._previous is None:
            self._w.write(rel, data)
            return
        old = self._previous / rel
        if old.is_file() and old.stat().st_size != len(data):
            raise _refuse(old, "a full tile of the last release differs from this ledger's")
        if self._w.write_unchanged(rel, data, old):
            self.kept += 1
        elif old.is_file():
            raise _refuse(old, "a full tile of the last release differs from this ledger's")

    def finish(self, root: bytes) -> None:
        for rel, data in self._builder.finish():
            self._w.write(layout.tile(rel), data)
        if self._builder.root() != root:  # pragma: no cover - two codes for one root
            raise RuntimeError("the tiles' root differs from the ledger's")
