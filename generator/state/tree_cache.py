"""The ledger's Merkle tree (every complete subtree hash, generator.core.proofs.MerkleTree), remembered
between builds in `<private>/cache/tree.levels`, so that a build hashes only the leaves added
since the last one instead of a million.

Like the ledger snapshot it is a cache bound to the bytes it was made from: the length and
SHA-256 of the ledger prefix its leaves are, checked (one pass of SHA-256 in C) before it is
used, and its file ends with the SHA-256 of everything before it. The tree then grows by the
ledger's later lines, and the build checks its root against the replay's (an independent
derivation from the same bytes) before any proof is made from it: a cache that disagrees is
dropped and the tree rebuilt from every line.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from generator.core.proofs import MerkleTree
from generator.program.datadir import Paths
from generator.state.cache_file import Piece, Staged, hash_prefix, stage_cache
from generator.verifier import checksummed, leaf_hash

TREE_NAME = "tree.levels"
_MAGIC = b"transparency tree levels v1\n"


def tree_path(paths: Paths) -> Path:
    return paths.private / "cache" / TREE_NAME


def load_tree(paths: Paths) -> tuple[MerkleTree, int]:
    """The tree of the longest ledger prefix the cache still describes, and that prefix's length
    in bytes; an empty tree and 0 when there is no usable cache."""
    try:
        data = tree_path(paths).read_bytes()
        body, digest = data[:-32], data[-32:]
        if not body.startswith(_MAGIC) or hashlib.sha256(body).digest() != digest:
            return MerkleTree(), 0
        at = len(_MAGIC)
        length = int.from_bytes(body[at : at + 8], "big")
        header = json.loads(body[at + 8 : at + 8 + length])
        at += 8 + length
        levels = []
        for n in header["levels"]:
            levels.append(bytearray(body[at : at + n]))
            at += n
        size, offset, prefix = header["size"], header["ledger_bytes"], header["ledger_sha256"]
        if at != len(body) or not levels or len(levels[0]) != 32 * size:
            return MerkleTree(), 0
        with paths.ledger_file.open("rb") as f:
            h = hash_prefix(f, offset)
        if h is None or h.hexdigest() != prefix:
            return MerkleTree(), 0
    except (OSError, ValueError, KeyError, TypeError):
        return MerkleTree(), 0
    tree = MerkleTree()
    tree._levels, tree.size = levels, size
    return tree, offset


def grow(paths: Paths, tree: MerkleTree, offset: int) -> int:
    """Add the ledger's lines after `offset` bytes to `tree`; the ledger's length read."""
    with paths.ledger_file.open("rb") as f:
        f.seek(offset)
        for line in f:
            tree.append(leaf_hash(line[:-1] if line.endswith(b"\n") else line))
            offset += len(line)
    return offset


def stage_tree(paths: Paths, tree: MerkleTree, offset: int) -> Staged | None:
    """Remember `tree`, the tree of the ledger's first `offset` bytes: written beside its place
    until the caller commits it (a failure to write costs the next build one pass over the
    ledger, no more)."""
    data = _tree_bytes(paths, tree, offset)
    return None if data is None else stage_cache(tree_path(paths), data)


def _tree_bytes(paths: Paths, tree: MerkleTree, offset: int) -> list[Piece] | None:
    try:
        with paths.ledger_file.open("rb") as f:
            h = hash_prefix(f, offset)
        if h is None:
            return None
        header = json.dumps(
            {
                "size": tree.size,
                "ledger_bytes": offset,
                "ledger_sha256": h.hexdigest(),
                "levels": [len(x) for x in tree._levels],
            }
        ).encode()
        pieces: list[Piece] = [_MAGIC, len(header).to_bytes(8, "big"), header, *tree._levels]
    except OSError:
        return None
    # Written in pieces, the levels as they are: a million leaves' tree is some 64 MB, and
    # joining it (twice, with its checksum) was the peak of the build's writing.
    return checksummed(pieces)
