"""A synthetic log's hash tiles at several sizes, beside the proofs generator/core/proofs.py makes for
it: what the consistency proofs made from tiles (generator/verifier/tlog/tile_proofs.py, check.js's
consistencyFromTiles) are compared against, with the (old, new) size pairs worth trying."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from generator.core.proofs import MerkleTree
from generator.verifier.tlog.merkle import leaf_hash
from generator.verifier.tlog.tiles import TileBuilder

_ENTRIES = "tile/entries/"


def leaf(i: int) -> bytes:
    return b"leaf %d" % i


@dataclass
class TiledLog:
    """Every size's hash tiles (path under the log prefix to bytes), and the tree of all the leaves."""

    tiles: dict[int, dict[str, bytes]]
    tree: MerkleTree

    def read(self, size: int) -> dict[str, bytes]:
        return self.tiles[size]

    def write(self, folder: Path) -> None:
        """Every size's tiles in one folder, as a log serves the partial tiles of every size it
        published: the paths of two sizes are the same file only with the same bytes."""
        union: dict[str, bytes] = {}
        for tiles in self.tiles.values():
            for path, data in tiles.items():
                assert union.setdefault(path, data) == data, path
        for path, data in sorted(union.items()):
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_bytes(data)


def tiled_log(sizes: Iterable[int]) -> TiledLog:
    """The log of leaves b"leaf 0", b"leaf 1", … with its hash tiles at each of `sizes`, built
    by TileBuilder as a build writes them."""
    wanted = sorted(set(sizes))
    builder, tree = TileBuilder(), MerkleTree()
    full: dict[str, bytes] = {}
    tiles: dict[int, dict[str, bytes]] = {}
    for size in wanted:
        while builder.size < size:
            data = leaf(builder.size)
            tree.append(leaf_hash(data))
            full.update(builder.append(data))
        made = {**full, **dict(builder.finish())}
        tiles[size] = {p: d for p, d in made.items() if not p.startswith(_ENTRIES)}
    return TiledLog(tiles, tree)


def old_sizes(n: int) -> list[int]:
    """The old sizes worth proving from, for a new size `n`: the ends, powers of two and their
    neighbours, tile boundaries (256 and 65536) and theirs, and a few in between."""
    near = [0, 1, 2, 3, n // 3, n // 2, n - 2, n - 1, n]
    for k in range(17):
        near += [(1 << k) - 1, 1 << k, (1 << k) + 1]
    for boundary in (256, 512, 768, 65536):
        near += [boundary - 1, boundary, boundary + 1]
    return sorted({m for m in near if 0 <= m <= n})
